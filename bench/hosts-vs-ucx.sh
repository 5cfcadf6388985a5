#!/bin/sh
# bench/hosts-vs-ucx.sh — send/recv between two simulated hosts of ncclsim
# (bench/hosts_bw: NCCLSIM_HOST_ID h0 and h1, UCX over TCP) against UCX's
# own ucx_perftest tag bandwidth on the same transport (UCX_TLS=tcp,self)
# and against Open MPI's TCP path (bench/mpi_peer under
# mpirun --mca pml ob1 --mca btl tcp,self), back to back, for several
# rounds (odd rounds ncclsim first). Per round:
#   over_ucx_perftest   hosts_bw sendrecv gbps / ucx_perftest tag_bw gbps
#   over_mpi_tcp        hosts_bw sendrecv gbps / mpi_peer sendrecv gbps
#   pingpong_over_mpi_tcp  hosts_bw 8-byte half round trip / mpi_peer's
#   put_over_ucx_put    hosts_bw put gbps (ncclPutSignal: a UCX put and an
#                       atomic add) / ucx_perftest -t ucp_put_bw gbps
#   put_over_sendrecv   hosts_bw put gbps / hosts_bw sendrecv gbps
#   putpong_over_ucx_put_lat  hosts_bw 8-byte put_signal->wait_signal half
#                       round trip / ucx_perftest -t ucp_put_lat's average
# and a summary with each ratio's median and min/max.
# Targets: over_ucx_perftest >= 0.8, over_mpi_tcp > 1.
#
# Run from the top build directory after make bench:
#   sh ../bench/hosts-vs-ucx.sh [rounds [bytes [repeats]]]
# Defaults: 5 rounds, 67108864 bytes, 5 repeats. Without configure
# --with-mpi (no bench/mpi_peer) the MPI column is left out.
rounds=${1:-5}
bytes=${2:-67108864}
reps=${3:-5}
dir=${BENCH_DIR:-./bench}
MPIRUN=${MPIRUN:-mpirun}
MPIFLAGS="--oversubscribe --mca pml ob1 --mca btl tcp,self"
test "$(id -u)" = 0 && MPIFLAGS="$MPIFLAGS --allow-run-as-root"
test -x "$dir/hosts_bw" || { echo "hosts-vs-ucx: $dir/hosts_bw not built (ncclsim with UCX; make bench)" >&2; exit 1; }
command -v ucx_perftest >/dev/null 2>&1 || { echo "hosts-vs-ucx: ucx_perftest not found (Debian: ucx-utils)" >&2; exit 1; }
mpi=yes
{ test -x "$dir/mpi_peer" && command -v "$MPIRUN" >/dev/null 2>&1; } || mpi=no

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosts-vs-ucx.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
iters=$(( (1 << 30) / bytes )); test "$iters" -lt 4 && iters=4; test "$iters" -gt 1000 && iters=1000

run_sim() {
  rm -f "$tmp/id"
  NCCLSIM_HOST_ID=h0 UCX_TLS=tcp,self "$dir/hosts_bw" 0 "$tmp/id" "$bytes" 2000 "$reps" >"$tmp/h0" 2>&1 &
  p0=$!
  NCCLSIM_HOST_ID=h1 UCX_TLS=tcp,self "$dir/hosts_bw" 1 "$tmp/id" "$bytes" 2000 "$reps" >"$tmp/h1" 2>&1 || { cat "$tmp/h1"; exit 1; }
  wait $p0 || { cat "$tmp/h0"; exit 1; }
  cat "$tmp/h0" "$tmp/h1" | grep '^bench=' >>"$tmp/raw"
}
# perftest TEST BYTES ITERS PORT: one ucx_perftest server and its client,
# the client's output in $tmp/uc. The client retries while the server is
# not listening yet (a loaded machine starts it late).
perftest() {
  UCX_TLS=tcp,self ucx_perftest -t "$1" -s "$2" -n "$3" -p "$4" >"$tmp/us" 2>&1 &
  ps=$!
  try=0
  until sleep 1; UCX_TLS=tcp,self ucx_perftest 127.0.0.1 -t "$1" -s "$2" -n "$3" -p "$4" >"$tmp/uc" 2>&1; do
    try=$((try + 1))
    test $try -lt 10 && grep -q "connect() failed" "$tmp/uc" && continue
    cat "$tmp/uc"; kill $ps 2>/dev/null; exit 1
  done
  wait $ps
}
run_ucx() {
  port=$((20000 + $$ % 20000))
  perftest tag_bw "$bytes" "$iters" $port
  # Final: iters 50%ile avg overall bw_avg bw_overall (MB/s: MiB/s) ...
  awk -v b="$bytes" '/^Final:/ {printf "bench=ucx_perftest test=tag_bw bytes=%s gbps=%.3f\n", b, $7 * 1048576 / 1e9}' "$tmp/uc" >>"$tmp/raw"
  # UCX's own put over TCP is slow at large sizes (its target progresses
  # rarely): a few iterations only.
  pn=$((iters / 8)); test "$pn" -lt 2 && pn=2
  perftest ucp_put_bw "$bytes" "$pn" $((port + 1))
  awk -v b="$bytes" '/^Final:/ {printf "bench=ucx_perftest test=put_bw bytes=%s gbps=%.3f\n", b, $7 * 1048576 / 1e9}' "$tmp/uc" >>"$tmp/raw"
  perftest ucp_put_lat 8 2000 $((port + 2))
  # Final: iters 50%ile average overall (us, half round trip) ...
  awk '/^Final:/ {printf "bench=ucx_perftest test=put_lat bytes=8 half_rtt_ns=%.0f\n", $4 * 1000}' "$tmp/uc" >>"$tmp/raw"
}
run_mpi() {
  test $mpi = yes || return 0
  # shellcheck disable=SC2086
  $MPIRUN $MPIFLAGS -np 2 "$dir/mpi_peer" "$bytes" 2000 "$reps" 2>/dev/null | grep '^bench=mpi_peer test=\(sendrecv\|pingpong\)' >>"$tmp/raw"
}

echo "bench=hosts_vs_ucx start rounds=$rounds bytes=$bytes repeats=$reps mpi=$mpi loadavg=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
r=1
while test "$r" -le "$rounds"; do
  : >"$tmp/raw"
  if test $((r % 2)) -eq 1; then run_sim; run_ucx; run_mpi; else run_mpi; run_ucx; run_sim; fi
  sed 's/^/    /' "$tmp/raw"
  awk -v r="$r" '
    function val(line, key,   i, n, kv) { n = split(line, kv, " "); for (i = 1; i <= n; i++) if (index(kv[i], key "=") == 1) return substr(kv[i], length(key) + 2); return "" }
    /^bench=hosts_bw test=sendrecv/ { h = val($0, "gbps") }
    /^bench=hosts_bw test=pingpong/ { hp = val($0, "half_rtt_ns") }
    /^bench=hosts_bw test=put / { hput = val($0, "gbps") }
    /^bench=hosts_bw test=putpong/ { hpp = val($0, "half_rtt_ns") }
    /^bench=ucx_perftest test=tag_bw/ { u = val($0, "gbps") }
    /^bench=ucx_perftest test=put_bw/ { uput = val($0, "gbps") }
    /^bench=ucx_perftest test=put_lat/ { ulat = val($0, "half_rtt_ns") }
    /^bench=mpi_peer test=sendrecv/ { m = val($0, "gbps") }
    /^bench=mpi_peer test=pingpong/ { mp = val($0, "half_rtt_ns") }
    END {
      printf "bench=hosts_vs_ucx round=%d hosts_gbps=%s ucx_perftest_gbps=%s over_ucx_perftest=%.3f", r, h, u, h / u
      printf " put_gbps=%s ucx_put_gbps=%s put_over_ucx_put=%.3f put_over_sendrecv=%.3f", hput, uput, (uput > 0 ? hput / uput : 0), (h > 0 ? hput / h : 0)
      printf " putpong_ns=%s ucx_put_lat_ns=%s putpong_over_ucx_put_lat=%.3f", hpp, ulat, (ulat > 0 ? hpp / ulat : 0)
      if (m != "") printf " mpi_tcp_gbps=%s over_mpi_tcp=%.3f hosts_pingpong_ns=%s mpi_tcp_pingpong_ns=%s pingpong_over_mpi_tcp=%.3f", m, h / m, hp, mp, hp / mp
      printf "\n"
    }' "$tmp/raw" | tee -a "$tmp/rounds"
  r=$((r + 1))
done
awk '
  function val(line, key,   i, n, kv) { n = split(line, kv, " "); for (i = 1; i <= n; i++) if (index(kv[i], key "=") == 1) return substr(kv[i], length(key) + 2); return "" }
  function stat(name, a, n,   i, j, t, med) {
    for (i = 1; i <= n; i++) a[i] += 0 # numbers: val() gives strings, which awk compares as text
    for (i = 1; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    printf " %s=%.3f %s_min=%.3f %s_max=%.3f", name, med, name, a[1], name, a[n]
  }
  { u[++n] = val($0, "over_ucx_perftest"); x = val($0, "over_mpi_tcp"); if (x != "") m[++k] = x; x = val($0, "pingpong_over_mpi_tcp"); if (x != "") p[++q] = x
    pu[n] = val($0, "put_over_ucx_put"); ps[n] = val($0, "put_over_sendrecv"); pl[n] = val($0, "putpong_over_ucx_put_lat") }
  END {
    printf "bench=hosts_vs_ucx summary rounds=%d", n
    stat("over_ucx_perftest", u, n)
    if (k) stat("over_mpi_tcp", m, k)
    if (q) stat("pingpong_over_mpi_tcp", p, q)
    stat("put_over_ucx_put", pu, n)
    stat("put_over_sendrecv", ps, n)
    stat("putpong_over_ucx_put_lat", pl, n)
    printf " target_over_ucx_perftest_min=0.8 target_over_mpi_tcp_min=1\n"
  }' "$tmp/rounds"
