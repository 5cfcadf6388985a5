# tests/examples-real.sh — examples/nccl/*.cc compile unchanged against the
# real CUDA and NCCL headers (compile only: no GPU here). Skipped (77)
# without $N4C_CUDA_HOME/include/nccl.h. make turns this file into
# tests/examples-real with CXX and top_srcdir set (examples/local.mk).
cuda=${N4C_CUDA_HOME:-/usr/local/cuda}
test -f "$cuda/include/nccl.h" || { echo "SKIP: no $cuda/include/nccl.h (set N4C_CUDA_HOME)"; exit 77; }
rc=0
for f in "$top_srcdir"/examples/nccl/*.cc; do
  if $CXX -std=c++11 -fsyntax-only -isystem "$cuda/include" "$f"; then
    echo "ok: ${f##*/} compiles against $cuda/include"
  else
    echo "FAIL: ${f##*/} does not compile against $cuda/include"
    rc=1
  fi
done
exit $rc
