#!/bin/sh
# make check: no room of ncclsim's engine calls or includes a room above it
# (tests/floors.py, which first checks that it finds planted climbs).
# Skipped without python3. Run from the top build directory.
: "${srcdir:=.}"
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: no python3 to read the sources with"
  exit 77
fi
python3 "$srcdir/tests/floors.py" --self-test || exit 99
exec python3 "$srcdir/tests/floors.py" "$srcdir"
