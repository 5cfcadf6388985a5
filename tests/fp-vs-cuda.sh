# tests/fp-vs-cuda.sh — ncclsim's narrow floats against CUDA's own headers.
#
# 1. Builds tests/sim_fp_vs_cuda.cc against CUDA's real cuda_fp16.h,
#    cuda_bf16.h and cuda_fp8.h, links it with tests/sim_fp_vs_cuda_sim.cc
#    built against ncclsim's, and runs it: ncclsim's conversions and every
#    __half and __nv_bfloat16 function equal CUDA's host code bit for bit,
#    or, where CUDA has none, references of what it documents.
# 2. Checks the signature of every function ncclsim's cuda_fp16.h and
#    cuda_bf16.h declare against CUDA's declarations as nvcc's host pass
#    sees them (__CUDACC__, so the device-only ones too): the checks that
#    tests/cuda-compat-gen.py writes from ncclsim's headers must compile
#    against CUDA's cuda_fp16.h and cuda_bf16.h, copied with their .hpp
#    (the definitions, asm a host compiler rejects) left empty. tests/cuda-compat
#    compares the host declarations alone. Skipped, saying so, without
#    clang++ or python3.
# Skipped (77) where CUDA is not installed. make turns this file into
# tests/fp-vs-cuda with CXX and top_srcdir set first (tests/fp.mk).
#   N4C_CUDA_HOME  CUDA's directory (default /usr/local/cuda)
cuda=${N4C_CUDA_HOME:-/usr/local/cuda}
if test ! -f "$cuda/include/cuda_fp16.h" || test ! -f "$cuda/include/cuda_fp8.h"; then
  echo "SKIP: no CUDA headers in $cuda/include (set N4C_CUDA_HOME)"
  exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/n4c-fp-vs-cuda.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# -O2: millions of calls each way; no sanitizers, CUDA's code is not ours
# to check. -frounding-math: the references switch rounding modes.
$CXX -std=c++17 -O2 -frounding-math -isystem "$cuda/include" -c -o "$tmp/cuda.o" "$top_srcdir/tests/sim_fp_vs_cuda.cc" || exit 1
$CXX -std=c++17 -O2 -I"$top_srcdir/sim/include" -c -o "$tmp/sim.o" "$top_srcdir/tests/sim_fp_vs_cuda_sim.cc" || exit 1
$CXX -o "$tmp/fp-vs-cuda" "$tmp/cuda.o" "$tmp/sim.o" || exit 1
"$tmp/fp-vs-cuda" || exit 1

if ! command -v clang++ >/dev/null || ! command -v python3 >/dev/null; then
  echo "note: no clang++ or python3: signatures not checked against nvcc's declarations"
  exit 0
fi
mkdir "$tmp/decl" || exit 1
cp "$cuda/include/cuda_fp16.h" "$cuda/include/cuda_bf16.h" "$tmp/decl/" || exit 1
: >"$tmp/decl/cuda_fp16.hpp"
: >"$tmp/decl/cuda_bf16.hpp"
printf '#include <cuda_bf16.h>\n' >"$tmp/sim.h"
clang++ -std=c++17 -fsyntax-only -Xclang -ast-dump=json -I"$top_srcdir/sim/include" -x c++ "$tmp/sim.h" >"$tmp/ast.json" || exit 1
python3 "$top_srcdir/tests/cuda-compat-gen.py" --ast "$tmp/ast.json" --checks >"$tmp/sigs.inc" || exit 1
{
  printf '#include <cstring>\n#include <cuda_bf16.h>\n'
  echo '#line 1 "checks"'
  cat "$tmp/sigs.inc"
} >"$tmp/checks.cc"
if ! $CXX -std=c++17 -fsyntax-only -w -fmax-errors=0 -D__CUDACC__ -I"$tmp/decl" -isystem "$cuda/include" "$tmp/checks.cc" 2>"$tmp/err"; then
  echo "FAIL: signatures that differ from CUDA's (as nvcc declares them):"
  sed -n 's/^checks:\([0-9]*\):.*error:.*/\1/p' "$tmp/err" | sort -un | while read -r n; do sed -n "${n}s|.*// |  |p" "$tmp/sigs.inc"; done
  head -n 20 "$tmp/err"
  exit 1
fi
echo "$(grep -c . "$tmp/sigs.inc") signatures (cuda_fp16.h, cuda_bf16.h and the make_* they include) equal CUDA's declarations for nvcc"
