#!/bin/sh
# make bench-check: every benchmark, briefly, as a smoke run. It fails only
# when a benchmark crashes, hangs (N4C_BENCH_TIMEOUT seconds, default 300)
# or prints no key=value line; a slow figure never fails it (performance is
# judged on the figures, run at full size on a quiet machine). Prints each
# benchmark's lines, so the ratios stand beside their targets in the log.
# Run from the top build directory, after make bench.
limit=${N4C_BENCH_TIMEOUT:-300}
NCCLSIM_TIMEOUT=${NCCLSIM_TIMEOUT:-120}
export NCCLSIM_TIMEOUT
status=0
# check NAME LABEL CMD...: runs CMD, which must print bench=NAME lines.
check() {
  name=$1 label=$2
  shift 2
  out=$(timeout --kill-after=10 "$limit" "$@" 2>&1)
  rc=$?
  lines=$(printf '%s\n' "$out" | grep -c "^bench=$name .*=")
  if test $rc -ne 0 || test "$lines" -eq 0; then
    echo "FAIL: $label: exit $rc, $lines key=value line(s)"
    printf '%s\n' "$out" | sed 's/^/#   /'
    status=1
  else
    echo "ok: $label"
    printf '%s\n' "$out" | grep "^bench=" | sed 's/^/    /'
  fi
}
run() { # NAME ARGS...
  name=$1
  shift
  check "$name" "bench/$name $*" "./bench/$name" "$@"
}
run signal_latency 2000 2
run put_bw 1048576
run p2p_bw 1048576
run allreduce_bw 1048576 2,4
run graph_replay 20 5 2
# The roofline: 1 MiB at 2, 4 and 8 ranks, 2 repeats.
run coll_roofline 1048576 1048576 2,4,8 2
# Kernels (ncclsim with ncclsim-nvcc): 2 repeats, an 8 MiB copy.
test -x bench/kernels && run kernels 2 8
# The device API (ncclsim with ncclsim-nvcc): 2 repeats, 8 MiB of GIN puts.
test -x bench/devapi && run devapi 2 8
# Ranks as processes: ncclsim builds only; 1 MiB, 2000 round trips, 3 repeats.
test -x bench/procs_bw && run procs_bw 1048576 2000 3 2,4
# Two simulated hosts against ucx_perftest and Open MPI's TCP path (ncclsim
# with UCX, and ucx-utils): one round of 1 MiB, 2 repeats.
if test -x bench/hosts_bw && command -v ucx_perftest >/dev/null 2>&1; then
  check hosts_vs_ucx "hosts-vs-ucx.sh 1 1048576 2" \
    env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    sh "$(dirname "$0")/hosts-vs-ucx.sh" 1 1048576 2
fi
# The Open MPI peer: configure --with-mpi builds only. Open MPI frees
# nothing at exit: LeakSanitizer (ASan builds) would fail it.
if test -x bench/mpi_peer; then
  mpirun_flags=--oversubscribe
  test "$(id -u)" = 0 && mpirun_flags="$mpirun_flags --allow-run-as-root"
  for np in 2 4; do
    # shellcheck disable=SC2086
    check mpi_peer "mpirun -np $np bench/mpi_peer" \
      env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      mpirun $mpirun_flags -np $np ./bench/mpi_peer 1048576 2000 3
  done
  # The small-message latencies against Open MPI's: one round.
  check latency_vs_mpi "latency-vs-mpi.sh 1 2000 2" \
    env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    sh "$(dirname "$0")/latency-vs-mpi.sh" 1 2000 2
fi
exit $status
