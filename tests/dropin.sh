# tests/dropin.sh — ncclsim as a binary drop-in. Programs are built against
# the real headers and linked with the real libnccl.so.2 and
# libcudart.so.13 in $N4C_CUDA_HOME, then run with the drop-in libraries'
# directory (sim/dropin/.libs) first in LD_LIBRARY_PATH:
#   - tests/dropin_probe.cc and examples/nccl/*.cc must run correctly, and
#     tests/dropin_cudart_only.cc, linked with -lcudart alone;
#   - tests/dropin_uncovered.cc, which calls a function ncclsim lacks, must
#     be stopped by the loader with a message naming the function.
# Skipped (77) without the real headers and libraries. make turns this file
# into tests/dropin with CXX, the build's CXXFLAGS and LDFLAGS (a sanitizer
# build's programs need its runtime), top_srcdir and top_builddir set.
cuda=${N4C_CUDA_HOME:-/usr/local/cuda}
lib=
for d in "$cuda/lib64" "$cuda/lib"; do
  test -e "$d/libnccl.so" && test -e "$d/libcudart.so" && { lib=$d; break; }
done
test -n "$lib" && test -f "$cuda/include/nccl.h" ||
  { echo "SKIP: no nccl.h, libnccl.so and libcudart.so in $cuda (set N4C_CUDA_HOME)"; exit 77; }
dropin="$top_builddir/sim/dropin/.libs"
test -e "$dropin/libnccl.so.2" && test -e "$dropin/libcudart.so.13" ||
  { echo "FAIL: no drop-in libraries in $dropin"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/n4c-dropin.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
build() { # build OUT SOURCE: against the real CUDA and NCCL only
  $CXX -std=c++11 $CXXFLAGS -isystem "$cuda/include" -o "$1" "$2" $LDFLAGS -L"$lib" -lnccl -lcudart
}
# A sanitizer build's drop-in needs its runtime loaded first, and the
# programs built here may not link it (configure --enable-sanitizers keeps
# its flags to itself): preload the one the library names.
san=$(ldd "$dropin/libnccl.so.2" 2>/dev/null | awk '/lib(asan|tsan)\.so/ { print $3; exit }')
run() { env LD_LIBRARY_PATH="$dropin" NCCLSIM_DEVICES=4 ${san:+LD_PRELOAD="$san"} "$@"; }
rc=0
build "$tmp/probe" "$top_srcdir/tests/dropin_probe.cc" || exit 1
readelf -d "$tmp/probe" | grep -q 'libnccl.so.2' || { echo "FAIL: probe does not need libnccl.so.2"; exit 1; }
run "$tmp/probe" || rc=1
for f in "$top_srcdir"/examples/nccl/*.cc; do
  n=${f##*/}
  build "$tmp/${n%.cc}" "$f" || { rc=1; continue; }
  if run "$tmp/${n%.cc}"; then echo "ok: $n, linked against $lib, ran on ncclsim"; else echo "FAIL: $n"; rc=1; fi
done
# A program of the CUDA runtime alone: the drop-in libcudart.so.13 must
# need libnccl.so.2, where the simulator is.
$CXX -std=c++11 $CXXFLAGS -isystem "$cuda/include" -o "$tmp/cudart_only" "$top_srcdir/tests/dropin_cudart_only.cc" \
  $LDFLAGS -L"$lib" -lcudart || exit 1
run "$tmp/cudart_only" || { echo "FAIL: a program linked with -lcudart alone"; rc=1; }
build "$tmp/uncovered" "$top_srcdir/tests/dropin_uncovered.cc" || exit 1
run "$tmp/uncovered" >"$tmp/out" 2>&1
st=$?
cat "$tmp/out"
if test $st -eq 0 || test $st -ge 128 || ! grep -q 'cudaGetDeviceFlags' "$tmp/out" || ! grep -q 'calling' "$tmp/out"; then
  echo "FAIL: an uncovered function must stop the program with a message naming it (exit $st)"
  rc=1
else
  echo "ok: an uncovered function stops the program with the loader's message naming it (exit $st)"
fi
exit $rc
