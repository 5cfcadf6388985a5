#!/bin/sh
# gpu-run.sh — build nccl4c from its release tarball against the host's real
# NCCL and run the conformance suite (threads and MPI) and the benchmarks.
# This is how the reports under docs/conformance/ were made.
#
#   gpu-run.sh TARBALL OUTDIR [NRANKS]     (N4C_GPU_BENCH=0: no benchmarks)
#
# Needs: CUDA at /usr/local/cuda, NCCL (system or /usr/local/cuda), Open MPI.
# For the JSON reports, jansson (found with pkg-config). A host without it
# (no apt, as on the GPU hosts) takes N4C_JANSSON=DIR: jansson installed
# under DIR, e.g. built from its release tarball, copied to the host, with
#   ./configure --prefix=DIR --disable-shared && make && make install
# (a static library: the programs need no library path). Without jansson
# the suite still writes TAP and JUnit, and no JSON report.
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
if [ -n "${N4C_JANSSON:-}" ]; then
  export PKG_CONFIG_PATH="$N4C_JANSSON/lib/pkgconfig:$N4C_JANSSON/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  # Should it be a shared library after all, the programs find it.
  export LDFLAGS="${LDFLAGS:+$LDFLAGS }-Wl,-rpath,$N4C_JANSSON/lib -Wl,-rpath,$N4C_JANSSON/lib64"
fi
{ ./configure --with-nccl --with-cuda --with-mpi && make -j"$(nproc)" && make bench; } >"$log" 2>&1 \
  || { tail -40 "$log"; exit 1; }
json=yes
grep -q '^#define HAVE_JANSSON 1' config.h ||
  { json=no; echo "no jansson (see N4C_JANSSON above): TAP and JUnit reports, no JSON"; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
echo "gpu=$gpu ngpus=$(nvidia-smi -L | wc -l) nranks=$n"
set --; [ $json = yes ] && set -- --json "$out/nccl-threads-n$n.json"
./conformance/n4c-conformance -n "$n" --timeout 120 "$@" --junit "$out/nccl-threads-n$n.xml" \
  >"$out/nccl-threads-n$n.tap" 2>&1
echo "threads rc=$?"; grep -c '^ok' "$out/nccl-threads-n$n.tap"; grep '^not ok' "$out/nccl-threads-n$n.tap"
set --; [ $json = yes ] && set -- --json "$out/nccl-mpi-n$n.json"
mpirun --allow-run-as-root -np "$n" -x NCCL_NVLS_ENABLE ./conformance/n4c-conformance --mpi --timeout 120 \
  "$@" --junit "$out/nccl-mpi-n$n.xml" >"$out/nccl-mpi-n$n.tap" 2>&1
echo "mpi rc=$?"; grep -c '^ok' "$out/nccl-mpi-n$n.tap"; grep '^not ok' "$out/nccl-mpi-n$n.tap"
[ "${N4C_GPU_BENCH:-1}" = 0 ] && exit 0 # N4C_GPU_BENCH=0: the suite only
./bench/p2p_bw >"$out/bench-p2p_bw.txt" 2>&1; echo "p2p_bw rc=$?"
./bench/allreduce_bw $((256 << 20)) "$n" >"$out/bench-allreduce_bw-n$n.txt" 2>&1; echo "allreduce_bw rc=$?"
tail -4 "$out/bench-p2p_bw.txt" "$out/bench-allreduce_bw-n$n.txt"
