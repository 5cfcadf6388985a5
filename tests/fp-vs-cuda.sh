# tests/fp-vs-cuda.sh — builds tests/sim_fp_vs_cuda.cc against CUDA's real
# cuda_fp16.h, cuda_bf16.h and cuda_fp8.h and runs it: ncclsim's
# conversions must equal CUDA's host code bit for bit. Skipped (77) where
# CUDA is not installed. make turns this file into tests/fp-vs-cuda with
# CXX and top_srcdir set first (tests/fp.mk).
#   N4C_CUDA_HOME  CUDA's directory (default /usr/local/cuda)
cuda=${N4C_CUDA_HOME:-/usr/local/cuda}
if test ! -f "$cuda/include/cuda_fp16.h" || test ! -f "$cuda/include/cuda_fp8.h"; then
  echo "SKIP: no CUDA headers in $cuda/include (set N4C_CUDA_HOME)"
  exit 77
fi
tmp=${TMPDIR:-/tmp}/n4c-fp-vs-cuda.$$
trap 'rm -f "$tmp"' EXIT
# -O2: a few million conversions each way; no sanitizers, CUDA's code is
# not ours to check.
$CXX -std=c++17 -O2 -isystem "$cuda/include" -o "$tmp" "$top_srcdir/tests/sim_fp_vs_cuda.cc" || exit 1
"$tmp"
