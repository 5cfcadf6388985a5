#!/bin/sh
# gpu-run.sh — build nccl4c from its release tarball against the host's real
# NCCL and run the conformance suite (threads and MPI) and the benchmarks.
# This is how the reports under docs/conformance/ were made.
#
#   gpu-run.sh TARBALL OUTDIR [NRANKS]     (N4C_GPU_BENCH=0: no benchmarks)
#
# Needs: CUDA at /usr/local/cuda, NCCL (system or /usr/local/cuda), Open MPI.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): it can take a shared
# host's GPUs down. Every program started here inherits it, and mpirun
# passes it on with -x.
set -u
tarball=$1 out=$2 n=${3:-2}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xzf "$tarball" || exit 1
cd "$work"/nccl4c-* || exit 1
log="$out/build-n$n.log"
{ ./configure --with-nccl --with-cuda --with-mpi && make -j"$(nproc)" && make bench; } >"$log" 2>&1 \
  || { tail -40 "$log"; exit 1; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
echo "gpu=$gpu ngpus=$(nvidia-smi -L | wc -l) nranks=$n"
./conformance/n4c-conformance -n "$n" --timeout 120 --json "$out/nccl-threads-n$n.json" >"$out/nccl-threads-n$n.tap" 2>&1
echo "threads rc=$?"; grep -c '^ok' "$out/nccl-threads-n$n.tap"; grep '^not ok' "$out/nccl-threads-n$n.tap"
mpirun --allow-run-as-root -np "$n" -x NCCL_NVLS_ENABLE ./conformance/n4c-conformance --mpi --timeout 120 \
  --json "$out/nccl-mpi-n$n.json" >"$out/nccl-mpi-n$n.tap" 2>&1
echo "mpi rc=$?"; grep -c '^ok' "$out/nccl-mpi-n$n.tap"; grep '^not ok' "$out/nccl-mpi-n$n.tap"
[ "${N4C_GPU_BENCH:-1}" = 0 ] && exit 0 # N4C_GPU_BENCH=0: the suite only
./bench/p2p_bw >"$out/bench-p2p_bw.txt" 2>&1; echo "p2p_bw rc=$?"
./bench/allreduce_bw $((256 << 20)) "$n" >"$out/bench-allreduce_bw-n$n.txt" 2>&1; echo "allreduce_bw rc=$?"
tail -4 "$out/bench-p2p_bw.txt" "$out/bench-allreduce_bw-n$n.txt"
