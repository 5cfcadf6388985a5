#!/bin/sh
# bench/trace-cost.sh — what ncclsim's timeline costs: bench/signal_latency
# and bench/p2p_bw with recording off (NCCLSIM_TRACE_RING=0), with the
# flight recorder's ring only (the default), and with the full timeline
# (NCCLSIM_TRACE), the three back to back in every round, their order
# rotating from round to round. Each round's ratios (ring/off, full/off) are
# taken from figures measured seconds apart; the summary gives their median
# and min/max over the rounds.
#
# Run from the top build directory after make bench (ncclsim):
#   sh ../bench/trace-cost.sh [rounds [p2p_bytes]]     defaults: 5, 16777216
set -u
rounds=${1:-5}
bytes=${2:-16777216}
tmp=${TMPDIR:-/tmp}/trace-cost.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# key=value from the last line of $1 that has key $2
val() { grep -o "[ ]$2=[0-9.]*" "$1" | tail -1 | cut -d= -f2; }

run() { # config round
  case $1 in
    off) set -- env NCCLSIM_TRACE_RING=0 ;;
    ring) set -- env ;;
    full) set -- env NCCLSIM_TRACE="$tmp/t.json" ;;
  esac
  "$@" ./bench/signal_latency > "$tmp/sig" 2>&1 || { echo "signal_latency failed" >&2; exit 1; }
  "$@" ./bench/p2p_bw "$bytes" > "$tmp/p2p" 2>&1 || { echo "p2p_bw failed" >&2; exit 1; }
  echo "$(val "$tmp/sig" half_rtt_ns) $(val "$tmp/sig" enqueue_ns_per_call) $(val "$tmp/p2p" raw_ns_per_call) $(grep "bytes=$bytes " "$tmp/p2p" | grep -o ' n4c_gbps=[0-9.]*' | cut -d= -f2)"
  rm -f "$tmp"/t*.json
}

: > "$tmp/ratios"
r=1
while [ "$r" -le "$rounds" ]; do
  case $((r % 3)) in
    1) order="off ring full" ;; 2) order="ring full off" ;; 0) order="full off ring" ;;
  esac
  for c in $order; do run "$c" > "$tmp/$c"; done
  set -- $(cat "$tmp/off"); o1=$1 o2=$2 o3=$3 o4=$4
  set -- $(cat "$tmp/ring"); g1=$1 g2=$2 g3=$3 g4=$4
  set -- $(cat "$tmp/full"); f1=$1 f2=$2 f3=$3 f4=$4
  line=$(awk -v o1="$o1" -v o2="$o2" -v o3="$o3" -v o4="$o4" -v g1="$g1" -v g2="$g2" -v g3="$g3" -v g4="$g4" \
    -v f1="$f1" -v f2="$f2" -v f3="$f3" -v f4="$f4" 'BEGIN {
      printf "signal_rtt_ring=%.3f signal_rtt_full=%.3f enqueue_ring=%.3f enqueue_full=%.3f ", g1/o1, f1/o1, g2/o2, f2/o2
      printf "p2p_call_ring=%.3f p2p_call_full=%.3f p2p_gbps_ring=%.3f p2p_gbps_full=%.3f", g3/o3, f3/o3, g4/o4, f4/o4 }')
  echo "bench=trace_cost round=$r off_signal_rtt_ns=$o1 off_enqueue_ns=$o2 off_p2p_call_ns=$o3 off_p2p_gbps=$o4 $line"
  echo "$line" >> "$tmp/ratios"
  r=$((r + 1))
done
# Median and spread of each ratio over the rounds.
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); k[i] = kv[1]; v[i, NR] = kv[2] } n = NR; f = NF }
  END {
    printf "bench=trace_cost summary rounds=%d", n
    for (i = 1; i <= f; i++) {
      for (a = 1; a <= n; a++) s[a] = v[i, a]
      for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (s[b] < s[a]) { t = s[a]; s[a] = s[b]; s[b] = t }
      med = n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
      printf " %s=%.3f %s_min=%.3f %s_max=%.3f", k[i], med, k[i], s[1], k[i], s[n]
    }
    printf "\n"
  }' "$tmp/ratios"
