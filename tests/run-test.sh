#!/bin/sh
# run-test.sh -- run one test of `make check` in its own process, with a time
# limit.  Automake's LOG_COMPILER and TAP_LOG_COMPILER:
#     run-test.sh PROGRAM [ARGS...]
#
#   N4C_SLOWDOWN       how many times slower than a plain build this build
#                      runs (configure sets it, make check exports it;
#                      default 1): the two defaults below are multiplied by
#                      it, and the tests' own deadlines read it
#   N4C_TEST_TIMEOUT   seconds before the test is killed (default 600 x
#                      N4C_SLOWDOWN; 3600 under N4C_VALGRIND)
#   NCCLSIM_TIMEOUT    ncclsim's blocking-call deadline (default here 10 x
#                      N4C_SLOWDOWN)
#   NCCLSIM_TRACE_DUMP the flight recorder's dumps of tests that fail on
#                      purpose (default here tests/flight-%p.json in the
#                      build directory, not /tmp)
#   CMOCKA_MESSAGE_OUTPUT  TAP unless set (CMocka tests use the TAP driver)
#   N4C_VALGRIND       1: run the test program under valgrind memcheck (make
#                      check-valgrind); errors or definite leaks exit 99.  A
#                      test script instead gets N4C_TEST_WRAPPER, the command
#                      to put before the program it runs.  NCCLSIM_TIMEOUT
#                      defaults to 120 then.
#
# For a test named *.tap, "not ok N # SKIP" lines (CMocka's skip()) become
# "ok N # SKIP".
#
# The exit status is the test's; 124 (or 137 when it had to be killed) means
# the time limit was hit.

case ${N4C_SLOWDOWN:-1} in
  '' | *[!0-9]* | 0*) slow=1 ;;
  *) slow=$N4C_SLOWDOWN ;;
esac
N4C_SLOWDOWN=$slow
export N4C_SLOWDOWN
limit=${N4C_TEST_TIMEOUT:-$((600 * slow))}
if test "${N4C_VALGRIND:-0}" = 1; then
  # memcheck runs a program's threads one at a time, 20-50 times slower:
  # the 2-rank suite alone outlasted 600 s on a loaded machine.
  limit=${N4C_TEST_TIMEOUT:-3600}
  : "${NCCLSIM_TIMEOUT:=120}"
else
  : "${NCCLSIM_TIMEOUT:=$((10 * slow))}"
fi
: "${CMOCKA_MESSAGE_OUTPUT:=TAP}"
: "${UBSAN_OPTIONS:=print_stacktrace=1}"
: "${NCCLSIM_TRACE_DUMP:=$PWD/tests/flight-%p.json}"
export NCCLSIM_TIMEOUT CMOCKA_MESSAGE_OUTPUT UBSAN_OPTIONS NCCLSIM_TRACE_DUMP

if test $# -eq 0; then
  echo "usage: run-test.sh PROGRAM [ARGS...]" >&2
  exit 99
fi

# The test itself is the last argument.
for test_name in "$@"; do :; done

# A checked-in test script that lost its executable bit still runs.
if test $# -eq 1 && test -f "$1" && test ! -x "$1"; then
  set -- "${SHELL:-/bin/sh}" "$1"
fi

# valgrind: a libtool wrapper script or a binary runs under memcheck through
# libtool --mode=execute (which finds the real program behind the wrapper);
# any other script is left alone but gets N4C_TEST_WRAPPER to use.
if test "${N4C_VALGRIND:-0}" = 1; then
  vg="valgrind -q --error-exitcode=99 --leak-check=full"
  vg="$vg --errors-for-leak-kinds=definite --show-leak-kinds=definite"
  vg="$vg --child-silent-after-fork=no --trace-children=no"
  vg="$vg --max-threads=4096" # tests/sim_scale: 256 ranks, a worker each
  lt=./libtool
  test -x "$lt" || lt=libtool
  N4C_TEST_WRAPPER="$lt --mode=execute $vg"
  export N4C_TEST_WRAPPER
  if test -f "$1" && {
       test "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ||
       grep -q 'This wrapper script should never be moved' "$1" 2>/dev/null; }; then
    set -- $lt --mode=execute $vg "$@"
  fi
fi

run() {
  if command -v timeout >/dev/null 2>&1; then
    timeout --kill-after=10 "$limit" "$@"
  else
    "$@"
  fi
}

case $test_name in
  *.tap)
    # CMocka 1.1 reports a skipped test as "not ok N # SKIP", which the TAP
    # driver counts as a failure: rewrite it to "ok N # SKIP".
    status_file=$(mktemp "${TMPDIR:-/tmp}/run-test.XXXXXX") || exit 99
    { run "$@"; echo $? >"$status_file"; } |
      sed 's/^not ok \([0-9][0-9]*\) # SKIP/ok \1 # SKIP/'
    rc=$(cat "$status_file")
    rm -f "$status_file"
    ;;
  *)
    run "$@"
    rc=$?
    ;;
esac

case $rc in
  124) msg="timed out after $limit s (N4C_TEST_TIMEOUT)" ;;
  137) msg="killed (SIGKILL): still running 10 s after the $limit s time limit (N4C_TEST_TIMEOUT), or killed from outside" ;;
  *)   exit $rc ;;
esac
echo "run-test.sh: $test_name: $msg" >&2
case $test_name in
  *.tap) echo "Bail out! $test_name $msg" ;;
esac
exit $rc
