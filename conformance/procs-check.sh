#!/bin/sh
# make check: n4c-conformance --procs, the launch mode itself. What it
# refuses (a rank count that is not 1..256, --procs with --mpi, -n or
# --no-fork, --ranks-per-proc without --procs or past 256 ranks), a short
# run's TAP header, exit status and reports (JSON launch "procs", JUnit
# suite .../procs/2), the same with 2 rank threads a process, and its
# watchdog: a rank process that dies mid-case fails that case, naming the
# rank (or the ranks of a process of several), its pid and the signal, and
# the next case runs in fresh processes; a case that
# outlives --timeout fails naming the unfinished ranks, and no rank process
# is left behind. Run from the top build directory; works in
# conformance/procs-check.d and removes it when it passes.
# N4C_TEST_WRAPPER (tests/run-test.sh: valgrind) goes before the program.
# Every deadline here is multiplied by N4C_SLOWDOWN (the build's slowdown,
# exported by make check): the runs are the suite's, with sanitizers too.
prog="${N4C_TEST_WRAPPER:-} ./conformance/n4c-conformance"
d=conformance/procs-check.d
slow=${N4C_SLOWDOWN:-1}

if test "${N4C_SUITE_MAX_RANKS:-2}" -lt 2; then
  echo "SKIP: 2 ranks > N4C_SUITE_MAX_RANKS=$N4C_SUITE_MAX_RANKS"
  exit 77
fi
# valgrind cannot map ncclsim's default arena for ranks as processes (64 GiB
# of address space, NCCLSIM_SHM_SIZE); these runs need far less.
case ${N4C_TEST_WRAPPER:-} in
  *valgrind*) : "${NCCLSIM_SHM_SIZE:=4294967296}"; export NCCLSIM_SHM_SIZE ;;
esac
rm -rf "$d"
mkdir -p "$d" || exit 99
fail() { echo "not ok: $*"; exit 1; }

# --- refused before anything runs, with the value named.
refused() { # EXPECTED-TEXT ARGS...
  want=$1
  shift
  $prog "$@" >"$d/refused.out" 2>"$d/refused.err"
  rc=$?
  test $rc -eq 2 || fail "$*: status $rc, not 2"
  test -s "$d/refused.out" && fail "$*: printed TAP: $(head -2 "$d/refused.out")"
  grep -qF -- "$want" "$d/refused.err" || fail "$*: the message does not say '$want': $(cat "$d/refused.err")"
  echo "ok: $* is refused: $(head -1 "$d/refused.err")"
}
refused "not '0'" --procs 0
refused "not '-2'" --procs -2
refused "not 'two'" --procs two
refused "not '257'" --procs 257
refused "not '3x'" --procs 3x
refused "--procs and --mpi" --procs 2 --mpi
refused "--procs and --mpi" --mpi --procs 2
refused "drop -n 2" -n 2 --procs 2
refused "--no-fork" --procs 2 --no-fork
refused "give --procs" --ranks-per-proc 2
refused "not '0'" --procs 2 --ranks-per-proc 0
refused "makes 258 ranks; at most 256" --procs 129 --ranks-per-proc 2
$prog --help 2>&1 | grep -q -- '--procs N ' || fail "--help does not describe --procs"
$prog --help 2>&1 | grep -q -- '--ranks-per-proc T' || fail "--help does not describe --ranks-per-proc"

# --- a short run: header, status, reports.
json="--json $d/report.json"
./conformance/n4c-conformance --table /dev/null 2>&1 | grep -q 'built without jansson' && json=
$prog --procs 2 --filter 'LIFE-01,ERR-01,IOP-03' $json --junit "$d/report.xml" >"$d/run.tap"
rc=$?
test $rc -eq 0 || { cat "$d/run.tap"; fail "a passing run gave status $rc"; }
grep -q '^1\.\.3$' "$d/run.tap" || fail "no plan 1..3: $(head -1 "$d/run.tap")"
grep -q '^# backend .*, 2 ranks as processes (--procs), ' "$d/run.tap" ||
  fail "the header does not say 2 ranks as processes: $(sed -n 2p "$d/run.tap")"
test "$(grep -c '^ok ' "$d/run.tap")" -eq 3 || { cat "$d/run.tap"; fail "not 3 passes"; }
grep -q 'testsuite name="n4c-conformance [a-z]*/procs/2"' "$d/report.xml" ||
  fail "the JUnit suite is not named .../procs/2"
if test -n "$json"; then
  grep -q '"launch": "procs"' "$d/report.json" || fail "the JSON report's launch is not procs"
  grep -q '"nranks": 2' "$d/report.json" || fail "the JSON report's nranks is not 2"
fi
echo "ok: --procs 2 ran 3 cases: header, status 0, JSON and JUnit reports"

# --- 2 rank threads in each of 2 processes: 4 ranks. P2P-01 needs every
# rank's sends and receives to meet; LIFE-01 makes a communicator of all.
# P2P-01 sends 64 MiB per dtype from every rank (its claim): 43 s alone
# under ThreadSanitizer on the 2-core machine, and past a fixed 60 s when
# loaded (issue 43); the suite scripts' deadline, 300 s times the slowdown.
$prog --procs 2 --ranks-per-proc 2 --timeout $((300 * slow)) --filter 'LIFE-01,P2P-01' $json >"$d/threads.tap"
rc=$?
test $rc -eq 0 || { cat "$d/threads.tap"; fail "a passing run with --ranks-per-proc 2 gave status $rc"; }
grep -q '^# backend .*, 4 ranks as 2 processes of 2 threads (--procs, --ranks-per-proc), ' "$d/threads.tap" ||
  fail "the header does not say 4 ranks as 2 processes of 2 threads: $(sed -n 2p "$d/threads.tap")"
test "$(grep -c '^ok ' "$d/threads.tap")" -eq 2 || { cat "$d/threads.tap"; fail "not 2 passes"; }
if test -n "$json"; then
  grep -q '"nranks": 4' "$d/report.json" || fail "the JSON report's nranks is not 4"
fi
echo "ok: --procs 2 --ranks-per-proc 2 ran 4 ranks: header, status 0, JSON report"

# --- the watchdog. Rank 1 stops at its first NCCL operation
# (NCCLSIM_FAULT), so that rank 0 waits in P2P-01 for NCCLSIM_TIMEOUT;
# IOP-03 needs no communicator and passes in the fresh processes.
NCCLSIM_FAULT=1:1
NCCLSIM_TIMEOUT=$((120 * slow))
export NCCLSIM_FAULT NCCLSIM_TIMEOUT
cases='P2P-01,IOP-03'

# A case that outlives --timeout (which also bounds the rank processes'
# start and IOP-03: more of it under valgrind, and times the slowdown).
t=$((3 * slow))
test -n "${N4C_TEST_WRAPPER:-}" && t=30
$prog --procs 2 --timeout $t --filter "$cases" >"$d/timeout.tap"
rc=$?
test $rc -eq 1 || { cat "$d/timeout.tap"; fail "a run with a timed-out case gave status $rc, not 1"; }
grep -q "^# timed out after $t s (ranks not finished: 0 (pid [0-9]*)" "$d/timeout.tap" ||
  { cat "$d/timeout.tap"; fail "P2P-01 is not reported as timed out with rank 0 unfinished"; }
grep -q '^not ok 1 - P2P-01 ' "$d/timeout.tap" || fail "P2P-01 did not fail"
grep -q '^ok 2 - IOP-03 ' "$d/timeout.tap" || { cat "$d/timeout.tap"; fail "IOP-03 did not pass after the timeout"; }
echo "ok: a case past --timeout fails naming the unfinished ranks; the next case passes"

# pids: the rank processes that -v lists in FILE.
pids() { sed -n 's/^# rank processes: //p' "$1" | grep -o 'pid [0-9]*' | cut -d' ' -f2; }
# Waits (up to 60 s times the slowdown) for the first "# rank processes"
# line of FILE.
wait_pids() {
  i=0
  until grep -q '^# rank processes: ' "$1" 2>/dev/null; do
    i=$((i + 1))
    test $i -le $((600 * slow)) || return 1
    sleep 0.1
  done
}
# gone PID: no such process, or a zombie of an init that does not reap;
# waits up to 10 s times the slowdown for a killed one to exit.
gone() {
  i=0
  while :; do
    st=$(ps -o stat= -p "$1" 2>/dev/null)
    test -z "$st" || test "${st#Z}" != "$st" && return 0
    i=$((i + 1))
    test $i -le $((100 * slow)) || return 1
    sleep 0.1
  done
}

# A rank process that dies mid-case: the first one (rank 0, waiting in
# P2P-01) is killed. died_case NAME WHO LISTED ARGS...: WHO is how the
# report names the first process's ranks, LISTED what -v lists.
died_case() {
  name=$1 who=$2 listed=$3
  shift 3
  $prog -v "$@" --timeout $((120 * slow)) --filter "$cases" >"$d/$name.tap" &
  job=$!
  wait_pids "$d/$name.tap" || { kill $job; fail "no '# rank processes' line under -v"; }
  grep -q "^# rank processes: $listed\$" "$d/$name.tap" ||
    { kill $job; fail "-v does not list '$listed': $(grep '^# rank processes' "$d/$name.tap")"; }
  r0=$(pids "$d/$name.tap" | head -1)
  first=$(pids "$d/$name.tap")
  sleep 1
  kill -KILL "$r0" || fail "cannot kill $who (pid $r0)"
  wait $job
  rc=$?
  test $rc -eq 1 || { cat "$d/$name.tap"; fail "$*: a run where a rank process died gave status $rc, not 1"; }
  grep -q "^# $who (pid $r0) died of signal 9 (Killed) before the case ended" "$d/$name.tap" ||
    { cat "$d/$name.tap"; fail "P2P-01 does not name $who, pid $r0 and SIGKILL"; }
  grep -q '^ok 2 - IOP-03 ' "$d/$name.tap" || { cat "$d/$name.tap"; fail "IOP-03 did not pass in fresh processes"; }
  test "$(grep -c '^# rank processes: ' "$d/$name.tap")" -eq 2 || fail "no fresh rank processes after the death"
  for p in $first $(pids "$d/$name.tap"); do
    gone "$p" || fail "rank process $p outlived the run"
  done
}
died_case died "rank 0" '0 (pid [0-9]*), 1 (pid [0-9]*)' --procs 2
echo "ok: a rank process killed mid-case fails it with rank, pid and signal; fresh processes run the next"
# With 2 rank threads a process, the report names both ranks of the killed
# process (rank 1 is the one NCCLSIM_FAULT stops).
died_case died2 "ranks 0-1" '0-1 (pid [0-9]*), 2-3 (pid [0-9]*)' --procs 2 --ranks-per-proc 2
echo "ok: a process of 2 ranks killed mid-case fails it naming both ranks; fresh processes run the next"

# The runner killed mid-case: its rank processes die with it (PDEATHSIG).
if test "$(uname -s)" = Linux; then
  $prog -v --procs 2 --timeout $((120 * slow)) --filter "$cases" >"$d/orphans.tap" &
  job=$!
  wait_pids "$d/orphans.tap" || { kill $job; fail "no '# rank processes' line under -v"; }
  r0=$(pids "$d/orphans.tap" | head -1)
  runner=$(ps -o ppid= -p "$r0" | tr -d ' ')
  test -n "$runner" && kill -KILL "$runner" || fail "cannot kill the runner (pid $runner)"
  wait $job
  for p in $(pids "$d/orphans.tap"); do
    gone "$p" || fail "rank process $p outlived the runner it was killed with"
  done
  echo "ok: rank processes do not outlive a killed runner"
fi
echo "ok: end of procs-check"
rm -rf "$d"
exit 0
