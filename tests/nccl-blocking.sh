#!/bin/sh
# make check: depth.cc and block.cc, the programs that measured real NCCL
# 2.30.7's host-blocking rules on 2 x H200 (tests/nccl_2_30_7/, kept
# unchanged), built against ncclsim, print what they printed on the GPUs:
# - with no warm-up, rank 0's first operation (ncclWaitSignal, ncclSend,
#   ncclAllReduce) does not return before rank 1 takes part: 0 enqueued;
# - after one warm-up exchange, a stream takes about a thousand pending
#   operations (GPUs: 1021 waits, 1030 sends, 1022 allreduces) and the next
#   enqueue blocks: ncclsim takes NCCLSIM_STREAM_DEPTH, 1022 (CUDA's own
#   bound on H100: 1021 kernels or copies behind a running one).
# Each run takes 6 to 12 s: the programs' rank 1 waits that long on
# purpose. Run from the top build directory.
# The programs' rank 1 comes 6 to 10 s late on purpose: the deadline must
# be longer than that (the test harness sets 10 s), 60 s times the build's
# slowdown (N4C_SLOWDOWN).
NCCLSIM_TIMEOUT=$((60 * ${N4C_SLOWDOWN:-1}))
export NCCLSIM_TIMEOUT
status=0
run() { # NAME EXPECTED-SUBSTRING COMMAND...
  name=$1 want=$2
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if test $rc -ne 0 || ! printf '%s\n' "$out" | grep -q "$want"; then
    echo "not ok - $name: exit $rc, wanted \"$want\" in:"
    printf '%s\n' "$out" | sed 's/^/#   /'
    status=1
  else
    echo "ok - $name: $(printf '%s\n' "$out" | grep "$want")"
  fi
}
w=${N4C_TEST_WRAPPER:-}
run "depth, no warm-up" "rank0 enqueued 0 of 100 waits before 10 s passed" $w ./tests/nccl_depth 100
run "depth, warm" "rank0 enqueued 1022 of 2000 waits before 10 s passed" env WARM=1 $w ./tests/nccl_depth 2000
run "p2p, no warm-up" "rank1 joins: rank0 had enqueued 0 of 3000" $w ./tests/nccl_block p2p 3000
run "p2p, warm" "rank1 joins: rank0 had enqueued 1022 of 3000" env WARM=1 $w ./tests/nccl_block p2p 3000
run "allreduce, no warm-up" "rank1 joins: rank0 had enqueued 0 of 3000" $w ./tests/nccl_block allreduce 3000
run "allreduce, warm" "rank1 joins: rank0 had enqueued 1022 of 3000" env WARM=1 $w ./tests/nccl_block allreduce 3000
exit $status
