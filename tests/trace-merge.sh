#!/bin/sh
# make check: ranks as processes write their own timelines (NCCLSIM_TRACE
# gets the pid inserted), and ncclsim-trace-merge makes one file with every
# rank's track and operations. Three processes of one launcher job
# (NCCLSIM_JOB; tests/sim_procs --job is the rank program). Run from the top
# build directory.
set -u
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3 to read the merged file"; exit 77; }
dir=tests/trace-merge.d
rm -rf "$dir" && mkdir -p "$dir" || exit 1
pids=
for r in 0 1 2; do
  NCCLSIM_JOB="trace-merge-$$" NCCLSIM_PROCESSES=auto NCCLSIM_TRACE="$dir/t.json" \
    ./tests/sim_procs --job $r 3 "$dir/id" &
  pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
test $rc = 0 || { echo "FAIL: a rank process failed"; exit 1; }
n=$(ls "$dir"/t.*.json 2>/dev/null | wc -l)
test "$n" = 3 || { echo "FAIL: $n timeline files, want 3 (one per process)"; ls "$dir"; exit 1; }
test ! -e "$dir/t.json" || { echo "FAIL: a file without the pid"; exit 1; }
./sim/ncclsim-trace-merge "$dir/all.json" "$dir"/t.*.json || { echo "FAIL: merge"; exit 1; }
./sim/ncclsim-trace-merge "$dir/x.json" "$dir/missing.json" 2>/dev/null && { echo "FAIL: a missing input merged"; exit 1; }
python3 - "$dir/all.json" <<'PY' || exit 1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
names = sorted(tracks.values())
want = ["rank 0 stream 0", "rank 1 stream 0", "rank 2 stream 0"]
assert names == want, f"tracks {names}, want {want}"
ops = [(e["pid"], e["tid"]) for e in ev if e["ph"] == "X" and e["name"] == "ncclAllReduce"]
assert sorted(tracks[t] for t in ops) == want, f"allreduces on {ops}"
procs = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert len(procs) == 1, f"{len(procs)} communicator tracks, want 1"
ts = [e["ts"] for e in ev if e["ph"] == "X"]
assert max(ts) - min(ts) < 60e6, f"one time base: {ts}"
print("ok: 3 files, one communicator, 3 rank tracks, 3 allreduces")
PY
rm -rf "$dir"
