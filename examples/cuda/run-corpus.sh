#!/bin/sh
# examples/cuda/run-corpus.sh — the CUDA corpus: each examples/cuda/*.cu,
# written for a GPU, is built with a compiler driver and run, and its
# stdout must equal NAME.out. make check runs it with ncclsim's driver;
# conformance/gpu-run.sh with nvcc, against real CUDA and NCCL, so both
# give the same output (what goes to stderr, such as an assert's message,
# is not compared).
#
#   run-corpus.sh [options] [NAME...]      (default: every .cu)
#     --nvcc=CMD      the driver (default: ncclsim-nvcc on PATH)
#     --nccl=FLAGS    how to link NCCL (default: none: ncclsim's driver
#                     links libncclsim; with nvcc give -lnccl and paths)
#     --nccl4c=FLAGS  how to compile and link nccl4c (-I... -L... -lnccl4c);
#                     without it nccl4c_kernels.cu is skipped
#     --out=DIR       where the programs go (default: a temporary directory)
# Exit status: 0 when every program built, ran and printed its .out, 1
# otherwise; a program that exits 77 (too few devices) is skipped.
here=$(cd "$(dirname "$0")" && pwd)
nvcc=ncclsim-nvcc nccl= nccl4c= out=
while [ $# -gt 0 ]; do
  case $1 in
    --nvcc=*) nvcc=${1#*=} ;;
    --nccl=*) nccl=${1#*=} ;;
    --nccl4c=*) nccl4c=${1#*=} ;;
    --out=*) out=${1#*=} ;;
    -*) echo "run-corpus.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
if [ -z "$out" ]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/n4c-corpus.XXXXXX") || exit 1
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
names=$*
[ -n "$names" ] || names=$(cd "$here" && ls *.cu | sed 's/\.cu$//')
fails=0 passed=0 skipped=0
for name in $names; do
  extra=
  case $name in
    nccl_*) extra=$nccl ;;
    nccl4c_*)
      if [ -z "$nccl4c" ]; then
        echo "skip: $name (no --nccl4c)"
        skipped=$((skipped + 1))
        continue
      fi
      extra="$nccl4c $nccl" ;;
  esac
  # shellcheck disable=SC2086 # the driver and the flags are words
  if ! $nvcc -o "$out/$name" "$here/$name.cu" $extra >"$out/$name.build" 2>&1; then
    echo "FAIL: $name: does not build with $nvcc"
    sed 's/^/#   /' "$out/$name.build"
    fails=$((fails + 1))
    continue
  fi
  "$out/$name" >"$out/$name.stdout" 2>"$out/$name.stderr"
  rc=$?
  if [ $rc = 77 ]; then
    echo "skip: $name: $(head -n 1 "$out/$name.stdout")"
    skipped=$((skipped + 1))
  elif cmp -s "$out/$name.stdout" "$here/$name.out"; then
    echo "ok: $name"
    passed=$((passed + 1))
  else
    echo "FAIL: $name (exit $rc): its output differs from $name.out"
    diff "$here/$name.out" "$out/$name.stdout" | sed 's/^/#   /'
    sed 's/^/#   stderr: /' "$out/$name.stderr" | head -n 20
    fails=$((fails + 1))
  fi
done
echo "corpus: $passed passed, $fails failed, $skipped skipped"
[ $fails = 0 ]
