#!/bin/sh
# tests/nccl-device-examples.sh — NCCL's device-API examples (06_device_api,
# 07_kernel_fusion), built unchanged with the tree's ncclsim-nvcc and run on
# ncclsim at 2 and 4 ranks, the GIN ones under each GIN type
# (examples/nccl-device/run-nccl-examples.sh): ranks as threads, then, where
# Open MPI's mpirun is found, as MPI processes on 2 simulated hosts (GIN
# across hosts over UCX). CI cannot fetch NCCL: the test runs where
# N4C_NCCL_SRC names an NCCL 2.30 source tree (and, with N4C_NCCL_TESTS_SRC,
# compiles nccl-tests' device kernels too); without it, it is skipped (77).
# Run from the top build directory (make check).
[ -n "${N4C_NCCL_SRC:-}" ] && [ -d "$N4C_NCCL_SRC/docs/examples/06_device_api" ] || {
  echo "N4C_NCCL_SRC names no NCCL source tree: skipped"
  exit 77
}
: "${srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
run() {
  sh "$srcdir/examples/nccl-device/run-nccl-examples.sh" --nvcc="$PWD/sim/ncclsim-nvcc" --lib="$PWD/sim/.libs" "$@"
}
run ${N4C_NCCL_TESTS_SRC:+--nccl-tests="$N4C_NCCL_TESTS_SRC"} "$N4C_NCCL_SRC" || exit 1
if command -v mpirun >/dev/null 2>&1 && mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  run --mpi --sim-hosts=2 "$N4C_NCCL_SRC" || exit 1
fi
