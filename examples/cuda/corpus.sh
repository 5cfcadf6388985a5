#!/bin/sh
# examples/cuda/corpus.sh — make check's run of the CUDA corpus
# (run-corpus.sh) with the tree's ncclsim-nvcc and nccl4c. Run from the
# top build directory.
: "${srcdir:=.}"
: "${N4C_CORPUS_FLAGS:=}"
top=$(pwd)
test -x "$top/sim/ncclsim-nvcc" || { echo "SKIP: no sim/ncclsim-nvcc"; exit 77; }
exec sh "$srcdir/examples/cuda/run-corpus.sh" --nvcc="$top/sim/ncclsim-nvcc -forward-unknown-to-host-compiler ${N4C_CORPUS_FLAGS:-}" \
  --nccl4c="-I$srcdir/lib -I$top/lib -L$top/lib/.libs -lnccl4c -Xlinker -rpath,$top/lib/.libs"
