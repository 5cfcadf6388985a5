#!/bin/sh
# bench/latency-vs-mpi.sh — ncclsim's small-message latencies against Open
# MPI's, for several rounds, each round running every program back to back
# (odd rounds ncclsim first, even rounds MPI first), so that each ratio is
# taken from figures measured seconds apart on this noisy machine. The
# summary gives each ratio's median and min/max over the rounds.
#
#   threads_put_signal_over_mpi  bench/signal_latency put_signal half_rtt_ns
#                                / mpi_peer pingpong half_rtt_ns (8 bytes)
#   threads_sendrecv_over_mpi    signal_latency sendrecv half_rtt_ns / the same
#   threads_allreduce8_over_mpi  bench/coll_roofline 8-byte allreduce at 2
#                                ranks, time_ns / mpi_peer allreduce8 time_ns
#   procs_put_signal_over_mpi    bench/procs_bw put_signal half_rtt_ns / pingpong
#   procs_sendrecv_over_mpi      procs_bw sendrecv8 half_rtt_ns / pingpong
#   procs_allreduce8_over_mpi    procs_bw allreduce8 time_ns (stream clock,
#                                behind a start gate) / mpi allreduce8
#   threads_put_signal_over_bare, threads_sendrecv_over_bare,
#   procs_put_signal_over_bare   each program's own ratio to the bare
#                                two-thread (two-process) handoff of its run
#   threads_put_signal_over_bare_put  signal_latency's ratio to its bare
#                                put_signal (8 bytes and a signal between two
#                                pinned threads: the floor with no engine)
# Targets: every *_over_mpi below 1 (send/recv: at most 1), *_over_bare at
# most 2. Each program's figure is itself the median of its repeats.
# ncclsim's figures leave out each timed batch's first calls past its start
# gate (bench_warm, bench.h), as MPI's loops and the bare handoffs, which
# run once past a warm-up, have no such start; the programs print them
# apart (start_half_rtt_ns, start_time_ns).
#
# Run from the top build directory after make bench (configure --with-mpi):
#   sh ../bench/latency-vs-mpi.sh [rounds [iters [repeats]]]
# Defaults: 5 rounds, 20000 ping-pong iterations, 5 repeats.
# MPIRUN (default mpirun) and MPIRUN_FLAGS (default --oversubscribe, plus
# --allow-run-as-root as root) override how mpi_peer starts.
rounds=${1:-5}
iters=${2:-20000}
reps=${3:-5}
dir=${BENCH_DIR:-./bench}
MPIRUN=${MPIRUN:-mpirun}
if test -z "${MPIRUN_FLAGS+set}"; then
  MPIRUN_FLAGS=--oversubscribe
  test "$(id -u)" = 0 && MPIRUN_FLAGS="$MPIRUN_FLAGS --allow-run-as-root"
fi
for p in signal_latency coll_roofline procs_bw mpi_peer; do
  if test ! -x "$dir/$p"; then
    echo "latency-vs-mpi: $dir/$p not built (ncclsim backend and configure --with-mpi; make bench)" >&2
    exit 1
  fi
done
command -v "$MPIRUN" >/dev/null 2>&1 || { echo "latency-vs-mpi: $MPIRUN not found" >&2; exit 1; }

out=$(mktemp "${TMPDIR:-/tmp}/latency-vs-mpi.XXXXXX") || exit 1
raw=$(mktemp "${TMPDIR:-/tmp}/latency-vs-mpi.XXXXXX") || exit 1
trap 'rm -f "$out" "$raw"' EXIT
trap 'exit 1' INT TERM

fail() { cat "$raw" >&2; echo "latency-vs-mpi: $1 failed" >&2; exit 1; }
run_ncclsim() {
  "$dir/signal_latency" "$iters" "$reps" >>"$raw" || fail signal_latency
  "$dir/coll_roofline" 1048576 0 2 "$reps" >>"$raw" || fail coll_roofline
  # 1 MiB for its bandwidth tests, which are not read here.
  "$dir/procs_bw" 1048576 "$iters" "$reps" 2 >>"$raw" || fail procs_bw
}
run_mpi() {
  # shellcheck disable=SC2086
  $MPIRUN $MPIRUN_FLAGS -np 2 "$dir/mpi_peer" 1048576 "$iters" "$reps" >>"$raw" || fail "mpirun -np 2 mpi_peer"
}

echo "bench=latency_vs_mpi start rounds=$rounds iters=$iters repeats=$reps mpirun=\"$MPIRUN $MPIRUN_FLAGS\" loadavg=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
r=1
while test "$r" -le "$rounds"; do
  : >"$raw"
  if test $((r % 2)) -eq 1; then
    order=ncclsim_first
    run_ncclsim
    run_mpi
  else
    order=mpi_first
    run_mpi
    run_ncclsim
  fi
  grep '^bench=' "$raw" | sed "s/^/round=$r order=$order /" >>"$out"
  grep -E '^bench=(signal_latency|procs_bw .*test=(put_signal|sendrecv8|allreduce8)|coll_roofline coll=|mpi_peer test=(pingpong|allreduce8))' "$raw" |
    sed 's/^/    /'
  r=$((r + 1))
done

awk -v loadavg="$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)" '
function val(key,   i, kv) { # the value of key= on the current line
  for (i = 1; i <= NF; i++) {
    split($i, kv, "=")
    if (kv[1] == key) return kv[2]
  }
  return ""
}
function put(name, r, x) { if (x != "" && x + 0 > 0) v[name, r] = x + 0 }
function stats(name,   i, n, a, t, j) { # "med min max" over the rounds
  n = 0
  for (i = 1; i <= R; i++) if ((name, i) in v) a[++n] = v[name, i]
  if (n == 0) return "-1 -1 -1"
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return sprintf("%.3f %.3f %.3f", (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2), a[1], a[n])
}
function ratio(name, a, b, r) { if (((a, r) in v) && ((b, r) in v)) v[name, r] = v[a, r] / v[b, r] }
{
  r = substr($1, 7) + 0
  if (r > R) R = r
  t = val("test")
  if ($3 ~ /^bench=signal_latency/) {
    if (t == "put_signal") { put("t_ps", r, val("half_rtt_ns")); put("t_ps_bare", r, val("ratio")); put("bare_t", r, val("bare_half_rtt_ns"))
                             put("t_ps_bput", r, val("over_bare_put")); put("bare_put_t", r, val("bare_put_half_rtt_ns")) }
    if (t == "sendrecv") { put("t_sr", r, val("half_rtt_ns")); put("t_sr_bare", r, val("ratio")) }
  } else if ($3 ~ /^bench=coll_roofline/ && val("bytes") == "8" && val("ranks") == "2") {
    put("t_ar", r, val("time_ns"))
  } else if ($3 ~ /^bench=procs_bw/) {
    if (t == "put_signal") { put("p_ps", r, val("half_rtt_ns")); put("p_ps_bare", r, val("over_bare")); put("bare_p", r, val("bare_half_rtt_ns")) }
    if (t == "sendrecv8") put("p_sr", r, val("half_rtt_ns"))
    if (t == "allreduce8") put("p_ar", r, val("time_ns"))
  } else if ($3 ~ /^bench=mpi_peer/) {
    if (t == "pingpong") put("m_pp", r, val("half_rtt_ns"))
    if (t == "allreduce8") put("m_ar", r, val("time_ns"))
  }
}
END {
  for (r = 1; r <= R; r++) {
    ratio("t_ps_mpi", "t_ps", "m_pp", r); ratio("t_sr_mpi", "t_sr", "m_pp", r); ratio("t_ar_mpi", "t_ar", "m_ar", r)
    ratio("p_ps_mpi", "p_ps", "m_pp", r); ratio("p_sr_mpi", "p_sr", "m_pp", r); ratio("p_ar_mpi", "p_ar", "m_ar", r)
    printf "bench=latency_vs_mpi round=%d threads_put_signal_over_mpi=%.3f threads_sendrecv_over_mpi=%.3f threads_allreduce8_over_mpi=%.3f procs_put_signal_over_mpi=%.3f procs_sendrecv_over_mpi=%.3f procs_allreduce8_over_mpi=%.3f\n",
      r, v["t_ps_mpi", r], v["t_sr_mpi", r], v["t_ar_mpi", r], v["p_ps_mpi", r], v["p_sr_mpi", r], v["p_ar_mpi", r]
  }
  n = split("t_ps_mpi t_sr_mpi t_ar_mpi p_ps_mpi p_sr_mpi p_ar_mpi t_ps_bare t_sr_bare p_ps_bare t_ps t_sr t_ar p_ps p_sr p_ar m_pp m_ar bare_t bare_p t_ps_bput bare_put_t", names, " ")
  split("threads_put_signal_over_mpi threads_sendrecv_over_mpi threads_allreduce8_over_mpi procs_put_signal_over_mpi " \
        "procs_sendrecv_over_mpi procs_allreduce8_over_mpi threads_put_signal_over_bare threads_sendrecv_over_bare " \
        "procs_put_signal_over_bare threads_put_signal_ns threads_sendrecv_ns threads_allreduce8_ns procs_put_signal_ns " \
        "procs_sendrecv_ns procs_allreduce8_ns mpi_pingpong_ns mpi_allreduce8_ns threads_bare_ns procs_bare_ns " \
        "threads_put_signal_over_bare_put threads_bare_put_ns", keys, " ")
  line = sprintf("bench=latency_vs_mpi summary rounds=%d", R)
  for (i = 1; i <= n; i++) {
    split(stats(names[i]), s, " ")
    line = line sprintf(" %s=%s %s_min=%s %s_max=%s", keys[i], s[1], keys[i], s[2], keys[i], s[3])
  }
  print line " target_over_mpi_max=1 target_over_bare_max=2 loadavg_end=" loadavg
}' "$out"
