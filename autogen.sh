#!/bin/sh
# autogen.sh -- generate configure and Makefile.in from a git checkout.
# (Tarballs from `make dist` already contain them: just ./configure there.)
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
# Automake does not install its TAP driver by itself: copy the one of the
# automake in use, as automake --add-missing does for test-driver.
am_libdir=$(automake --print-libdir)
cp -f "$am_libdir/tap-driver.sh" build-aux/tap-driver.sh
chmod +x build-aux/tap-driver.sh
autoreconf --force --install "$@"
echo "autogen.sh: now run ./configure (or mkdir _build && cd _build && ../configure)"
