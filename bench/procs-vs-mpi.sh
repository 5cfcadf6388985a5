#!/bin/sh
# bench/procs-vs-mpi.sh — ncclsim's ranks as processes (bench/procs_bw)
# against Open MPI (bench/mpi_peer at -np 2 and -np 4), back to back, for
# several rounds; odd rounds run ncclsim first, even rounds MPI first. The
# machine is shared and noisy, so each round's ratios ncclsim/MPI are taken
# from figures measured a few seconds apart, and the summary gives their
# median and min/max over the rounds:
#   sendrecv_over_mpi         procs_bw sendrecv gbps / mpi_peer sendrecv gbps
#   put_signal_over_mpi       procs_bw put_signal half_rtt_ns /
#                             mpi_peer pingpong half_rtt_ns (above 1: slower)
#   allreduceN_over_mpi       procs_bw allreduce busbw_gbps at N processes /
#                             mpi_peer allreduce busbw_gbps at -np N
# (each from the medians of the programs' own repeats).
#
# Run from the top build directory after make bench (configure --with-mpi):
#   sh ../bench/procs-vs-mpi.sh [rounds [bytes [pingpong_iters [repeats]]]]
# Defaults: 5 rounds, 67108864 bytes, 10000 iterations, 7 repeats.
# MPIRUN (default mpirun) and MPIRUN_FLAGS (default --oversubscribe, plus
# --allow-run-as-root as root) override how mpi_peer starts.
rounds=${1:-5}
bytes=${2:-67108864}
iters=${3:-10000}
reps=${4:-7}
dir=${BENCH_DIR:-./bench}
MPIRUN=${MPIRUN:-mpirun}
if test -z "${MPIRUN_FLAGS+set}"; then
  MPIRUN_FLAGS=--oversubscribe
  test "$(id -u)" = 0 && MPIRUN_FLAGS="$MPIRUN_FLAGS --allow-run-as-root"
fi
for p in procs_bw mpi_peer; do
  if test ! -x "$dir/$p"; then
    echo "procs-vs-mpi: $dir/$p not built (ncclsim backend and configure --with-mpi; make bench)" >&2
    exit 1
  fi
done
command -v "$MPIRUN" >/dev/null 2>&1 || { echo "procs-vs-mpi: $MPIRUN not found" >&2; exit 1; }

out=$(mktemp "${TMPDIR:-/tmp}/procs-vs-mpi.XXXXXX") || exit 1
raw=$(mktemp "${TMPDIR:-/tmp}/procs-vs-mpi.XXXXXX") || exit 1
trap 'rm -f "$out" "$raw"' EXIT
trap 'exit 1' INT TERM

run_ncclsim() {
  "$dir/procs_bw" "$bytes" "$iters" "$reps" 2,4 >>"$raw" ||
    { cat "$raw" >&2; echo "procs-vs-mpi: procs_bw failed" >&2; exit 1; }
}
run_mpi() {
  for np in 2 4; do
    # shellcheck disable=SC2086
    $MPIRUN $MPIRUN_FLAGS -np $np "$dir/mpi_peer" "$bytes" "$iters" "$reps" >>"$raw" ||
      { cat "$raw" >&2; echo "procs-vs-mpi: mpirun -np $np mpi_peer failed" >&2; exit 1; }
  done
}

echo "bench=procs_vs_mpi start rounds=$rounds bytes=$bytes iters=$iters repeats=$reps mpirun=\"$MPIRUN $MPIRUN_FLAGS\" loadavg=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
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
  grep '^bench=' "$raw" | sed 's/^/    /'
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
{
  r = substr($1, 7) + 0
  if (r > R) R = r
  t = val("test"); np = val("procs")
  if ($3 ~ /^bench=procs_bw/) {
    if (t == "sendrecv") { put("p_sr", r, val("gbps")); put("mc", r, val("memcpy_gbps")) }
    if (t == "put_signal") { put("p_pp", r, val("half_rtt_ns")); put("bare", r, val("bare_half_rtt_ns")) }
    if (t == "allreduce") { put("p_ar" np, r, val("busbw_gbps")); put("ac" np, r, val("allcore_gbps")) }
  } else if ($3 ~ /^bench=mpi_peer/) {
    if (t == "sendrecv") put("m_sr", r, val("gbps"))
    if (t == "pingpong") put("m_pp", r, val("half_rtt_ns"))
    if (t == "allreduce") put("m_ar" np, r, val("busbw_gbps"))
  }
}
END {
  for (r = 1; r <= R; r++) {
    if ((("p_sr", r) in v) && (("m_sr", r) in v)) v["sr", r] = v["p_sr", r] / v["m_sr", r]
    if ((("p_pp", r) in v) && (("m_pp", r) in v)) v["pp", r] = v["p_pp", r] / v["m_pp", r]
    for (n = 2; n <= 4; n += 2)
      if ((("p_ar" n, r) in v) && (("m_ar" n, r) in v)) v["ar" n, r] = v["p_ar" n, r] / v["m_ar" n, r]
    printf "bench=procs_vs_mpi round=%d sendrecv_over_mpi=%.3f put_signal_over_mpi=%.3f allreduce2_over_mpi=%.3f allreduce4_over_mpi=%.3f\n",
      r, v["sr", r], v["pp", r], v["ar2", r], v["ar4", r]
  }
  split("sr pp ar2 ar4 p_sr m_sr mc p_pp m_pp bare p_ar2 m_ar2 ac2 p_ar4 m_ar4 ac4", names, " ")
  split("sendrecv_over_mpi put_signal_over_mpi allreduce2_over_mpi allreduce4_over_mpi " \
        "ncclsim_sendrecv_gbps mpi_sendrecv_gbps memcpy_gbps ncclsim_put_signal_half_rtt_ns " \
        "mpi_pingpong_half_rtt_ns bare_half_rtt_ns ncclsim_allreduce2_busbw_gbps mpi_allreduce2_busbw_gbps " \
        "allcore2_gbps ncclsim_allreduce4_busbw_gbps mpi_allreduce4_busbw_gbps allcore4_gbps", keys, " ")
  line = sprintf("bench=procs_vs_mpi summary rounds=%d", R)
  for (i = 1; i <= 16; i++) {
    split(stats(names[i]), s, " ")
    line = line sprintf(" %s=%s %s_min=%s %s_max=%s", keys[i], s[1], keys[i], s[2], keys[i], s[3])
  }
  print line " loadavg_end=" loadavg
}' "$out"
