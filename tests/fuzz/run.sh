#!/bin/bash
# tests/fuzz/run.sh — build and run the libFuzzer target tests/fuzz/fuzz_api.c.
#
#   tests/fuzz/run.sh [-runs=N | -max_total_time=S] [more libFuzzer flags]
#
# Default: -max_total_time=60. Exits non-zero on any crash, sanitizer
# report, leak or timeout (libFuzzer's own status), after printing the
# execution count. Needs Debian's clang and its sanitizer/libFuzzer
# runtime: `apt-get install -y clang libclang-rt-14-dev` (bookworm; the
# runtime is only a Recommends of clang-14, so name it).
#
# How it builds: no autotools tree is needed beyond config.h. configure
# runs once (CC=clang CXX=clang++, the default ncclsim backend) in
# $FUZZ_BUILD only to produce config.h; then lib/*.c, lib/*.cc (when
# config.h has HAVE_NCCL_DEVCOMM) and sim/**/*.c are compiled straight
# into the fuzzer with -fsanitize=fuzzer-no-link,address,undefined, and
# fuzz_api.c is linked with -fsanitize=fuzzer. The sources are rebuilt
# when any is newer than the binary.
#
# Environment: FUZZ_BUILD (default /tmp/n4c-fuzz-build), CLANG (default
# clang), CLANGXX (default clang++), N4C_FUZZ_TIMEOUT /
# N4C_FUZZ_SHORT_TIMEOUT (NCCLSIM_TIMEOUT for the target, default 0.2 s,
# and 0.01 s around operations meant to time out),
# FUZZ_JOBS (parallel jobs for -jobs/-workers, default 1; with -runs=N,
# each job runs N inputs), FUZZ_BIN (a fuzz_api built before, for a host
# without clang: nothing is built then).
# Crashes are written to tests/fuzz/crashes/; new corpus entries go to
# $FUZZ_BUILD/corpus (merge them into tests/fuzz/corpus by hand with
# -merge=1 if they are worth keeping).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-/tmp/n4c-fuzz-build}
cc=${CLANG:-clang}
cxx=${CLANGXX:-clang++}
mkdir -p "$build/cfg" "$build/corpus" "$here/crashes"

bin=${FUZZ_BIN:-$build/fuzz_api}
if [ -n "${FUZZ_BIN:-}" ]; then
  [ -x "$bin" ] || { echo "run.sh: FUZZ_BIN=$bin is not an executable" >&2; exit 2; }
  stale=0
else
  stale=1
fi

[ "$stale" = 0 ] || command -v "$cc" >/dev/null 2>&1 || {
  echo "run.sh: $cc not found (apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 2
}

if [ "$stale" = 1 ]; then
  [ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
fi
if [ "$stale" = 1 ] && { [ ! -f "$build/cfg/config.h" ] ||
                         [ "$top/configure" -nt "$build/cfg/config.h" ]; }; then
  (cd "$build/cfg" && CC="$cc" CXX="$cxx" "$top/configure" >configure.log 2>&1) || {
    echo "run.sh: configure failed, see $build/cfg/configure.log" >&2
    exit 2
  }
fi

# The libraries' sources, not the programs and drop-in shims beside them
# (ncclsim-trace-merge and ncclsim-nvcc have a main of their own).
srcs=$(cd "$top" && ls lib/*.c sim/*.c sim/*/*.c | grep -v -e '^sim/trace_merge\.c$' -e '^sim/dropin/' -e '^sim/nvcc/')
# lib/devcomm_bridge.cc: C++, built where configure found it usable.
cxxsrcs=
[ "$stale" = 0 ] || ! grep -q '^#define HAVE_NCCL_DEVCOMM 1' "$build/cfg/config.h" ||
  cxxsrcs=$(cd "$top" && ls lib/*.cc)
if [ "$stale" = 1 ] && [ -x "$bin" ]; then
  stale=0
  [ "$build/cfg/config.h" -nt "$bin" ] && stale=1
  for f in $srcs $cxxsrcs tests/fuzz/fuzz_api.c lib/*.h sim/*.h sim/*/*.h sim/include/*.h; do
    [ "$top/$f" -nt "$bin" ] && stale=1 && break
  done
fi
if [ "$stale" = 1 ]; then
  echo "run.sh: building $bin"
  san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
  flags="-g -O1 -std=gnu11 -pthread -fno-omit-frame-pointer $san \
    -I$build/cfg -I$top/lib -I$top/sim/include -I$top/sim"
  mkdir -p "$build/obj"
  objs=
  for f in $srcs; do
    o=$build/obj/$(echo "$f" | tr / _).o
    # A file clang rejects (sim/coll/coll.c today: its task_ops table is
    # initialised from a const array, a GCC extension) is built with gcc
    # and the same sanitizers, without coverage feedback.
    # shellcheck disable=SC2086
    { $cc $flags -fsanitize=fuzzer-no-link -c "$top/$f" -o "$o" 2>"$o.log" ||
      { echo "run.sh: clang rejects $f, using gcc for it"; gcc $flags -c "$top/$f" -o "$o"; }; } &
    objs="$objs $o"
  done
  for f in $cxxsrcs; do
    o=$build/obj/$(echo "$f" | tr / _).o
    # shellcheck disable=SC2086
    $cxx ${flags/-std=gnu11/} -fsanitize=fuzzer-no-link -c "$top/$f" -o "$o" &
    objs="$objs $o"
  done
  wait
  # Kernels' threads are fibers switched by Boost.Context, which configure
  # requires; ncclsim's timeline writes JSON through jansson where
  # configure found it.
  libs="-lm -lboost_context -ldl"
  if grep -q '^#define HAVE_JANSSON 1' "$build/cfg/config.h"; then
    libs="$libs $(pkg-config --libs jansson 2>/dev/null || echo -ljansson)"
  fi
  # shellcheck disable=SC2086
  $cc $flags -fsanitize=fuzzer "$here/fuzz_api.c" $objs $libs -o "$bin"
fi

[ $# -gt 0 ] || set -- -max_total_time=60
dict=
[ -f "$here/fuzz_api.dict" ] && dict=-dict=$here/fuzz_api.dict

# -timeout=10: an input running 10 s is a hang (the target's waits end
# after NCCLSIM_TIMEOUT, at most 0.2 s). -rss_limit_mb: the target
# keeps at most a few MiB per input. Leak checking is on (ASan/LSan).
log=$build/fuzz.log
jobs=${FUZZ_JOBS:-1}
par=
dir=.
if [ "$jobs" -gt 1 ]; then
  dir=$build/jobs
  # Parallel: libFuzzer writes each job's output to fuzz-<n>.log in the
  # current directory; they share the corpus directory.
  rm -rf "$build/jobs" && mkdir -p "$build/jobs"
  par="-jobs=$jobs -workers=$jobs"
fi
# The flight recorder's dumps (inputs that time out on purpose) go to the
# build directory, not /tmp, and are removed after the run.
export NCCLSIM_TRACE_DUMP="$build/flight-%p.json"
set +e
# shellcheck disable=SC2086
(cd "$dir" && "$bin" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$here/crashes/" $dict $par "$@" "$build/corpus" "$here/corpus") >"$log" 2>&1
set -e
[ -z "$par" ] || cat "$build"/jobs/fuzz-*.log >>"$log"
tail -n 8 "$log"
rm -f "$build"/flight-*.json
rc=0
if grep -q -E '^==[0-9]+== ?ERROR|^SUMMARY: |ALARM: working on the last Unit|libFuzzer: (deadly signal|timeout|out-of-memory)|runtime error:' "$log"; then
  rc=1
  grep -E '^==[0-9]+== ?ERROR|^SUMMARY: |runtime error:|Test unit written' "$log" | head -n 20
fi
# With jobs, count each job's own log once (the outer log repeats them).
stats=$log
[ -z "$par" ] || stats=$(ls "$build"/jobs/fuzz-*.log)
# shellcheck disable=SC2086
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' $stats | awk '{s += $1} END {if (NR) print s}')
# shellcheck disable=SC2086
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' $stats | awk '{s += $1} END {if (NR) print s}')
echo "run.sh: executions=${runs:-?} exec/s=${speed:-?} jobs=$jobs status=$rc (log: $log)"
[ -n "$runs" ] || rc=1
exit $rc
