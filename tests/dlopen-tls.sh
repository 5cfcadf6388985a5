#!/bin/sh
# make check: libncclsim.so can be loaded with dlopen (Python's ctypes, as
# nccl4py does, or a program that picks its NCCL at run time). A single
# initial-exec TLS variable marks a library STATIC_TLS, and the loader
# must then fit the library's whole TLS (3 KiB here) into the small
# reserve glibc keeps for libraries loaded late: ctypes failed with
# "cannot allocate memory in static TLS block". Run from the top build
# directory.
lib=sim/.libs/libncclsim.so
test -e "$lib" || { echo "SKIP: no shared $lib (a static build)"; exit 77; }
command -v readelf >/dev/null 2>&1 || { echo "SKIP: no readelf"; exit 77; }
rc=0
for f in "$lib" sim/dropin/.libs/libnccl.so.2 sim/dropin/.libs/libcudart.so.13; do
  test -e "$f" || continue
  if readelf -dW "$f" | grep -q STATIC_TLS; then
    echo "FAIL: $f has the STATIC_TLS flag (an initial-exec TLS variable): dlopen may fail"
    rc=1
  else
    echo "ok: $f needs no static TLS"
  fi
done
exit $rc
