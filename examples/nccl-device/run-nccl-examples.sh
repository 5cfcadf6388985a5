#!/bin/sh
# examples/nccl-device/run-nccl-examples.sh — NCCL's own device-API
# examples (docs/examples/06_device_api and 07_kernel_fusion of an NCCL
# 2.30 source tree), built unchanged with their own Makefiles and
# ncclsim's compiler driver, and run on ncclsim.
#
#   run-nccl-examples.sh [options] NCCL_SRC
#     --nvcc=CMD      the driver (default: ncclsim-nvcc on PATH)
#     --lib=DIR       where libncclsim.so.0 is (default: beside the driver's
#                     ../lib, or the build tree's sim/.libs)
#     --include=DIR   ncclsim's headers (default: the driver finds them; the
#                     examples' -I$(NCCL_HOME)/include points here)
#     --ranks=LIST    rank counts (default: "2 4")
#     --gin=LIST      NCCLSIM_GIN_TYPE values for the GIN examples (default:
#                     "proxy gdaki gpi")
#     --mpi           ranks as MPI processes (MPI=1 builds, mpirun -np N),
#                     not threads (NTHREADS=N)
#     --sim-hosts=H   (with --mpi) the N processes as H simulated hosts of
#                     N/H each (NCCLSIM_HOST_ID, from Open MPI's rank): GIN
#                     crosses hosts over UCX; the LSA-only examples (06/01,
#                     07/01), which want one LSA team, are skipped, as on
#                     several nodes
#     --nccl-tests=DIR  also compile nccl-tests' kernels that use the device
#                     API (src/all_reduce.cu, src/alltoall.cu) against ncclsim
#     --out=DIR       where the copies are built (default: a temporary directory)
#
# NCCL_HOME and CUDA_HOME are a directory made here that presents ncclsim
# as NCCL and CUDA: include/ (ncclsim's headers) and lib/ (libnccl.so and
# libcudart.so, both libncclsim). Each example must print its own verdict
# (PASSED, SUCCESS); 07_kernel_fusion/02_rmsnorm_multimem must say that the
# communicator does not support multimem and end, as on a GPU without
# NVLink SHARP. Prints one line per run and a summary; exit status 0 when
# every run passed, 1 otherwise, 2 on a usage error.
set -u
nvcc=ncclsim-nvcc lib= inc= ranks="2 4" gins="proxy gdaki gpi" mpi=no hosts= tests= out=
while [ $# -gt 0 ]; do
  case $1 in
    --nvcc=*) nvcc=${1#*=} ;;
    --lib=*) lib=${1#*=} ;;
    --include=*) inc=${1#*=} ;;
    --ranks=*) ranks=${1#*=} ;;
    --gin=*) gins=${1#*=} ;;
    --mpi) mpi=yes ;;
    --sim-hosts=*) hosts=${1#*=} ;;
    --nccl-tests=*) tests=${1#*=} ;;
    --out=*) out=${1#*=} ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) echo "run-nccl-examples.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -eq 1 ] || { sed -n '7,25p' "$0" >&2; exit 2; }
src=$(cd "$1" && pwd) || exit 2
if [ -n "$hosts" ]; then
  [ "$mpi" = yes ] || { echo "run-nccl-examples.sh: --sim-hosts needs --mpi" >&2; exit 2; }
  for n in $ranks; do
    [ "$hosts" -gt 0 ] 2>/dev/null && [ $((n % hosts)) -eq 0 ] ||
      { echo "run-nccl-examples.sh: $n ranks do not split into $hosts simulated hosts" >&2; exit 2; }
  done
fi
[ -d "$src/docs/examples/06_device_api" ] || { echo "run-nccl-examples.sh: $src has no docs/examples/06_device_api" >&2; exit 2; }
nvcc_path=$(command -v "${nvcc%% *}") || { echo "run-nccl-examples.sh: no $nvcc" >&2; exit 2; }
if [ -z "$lib" ]; then
  d=$(dirname "$nvcc_path")
  for c in "$d/.libs" "$d/../lib" "$d/../sim/.libs"; do
    [ -e "$c/libncclsim.so.0" ] && { lib=$(cd "$c" && pwd); break; }
  done
fi
[ -n "$lib" ] && [ -e "$lib/libncclsim.so.0" ] || { echo "run-nccl-examples.sh: no libncclsim.so.0 (give --lib=DIR)" >&2; exit 2; }
if [ -z "$inc" ]; then
  # the driver's own include directory: the one of its -isystem that has nccl.h
  for d in $("$nvcc_path" -dryrun -x cu -c /dev/null 2>&1 | tr ' ' '\n' | sed -n '/^-isystem$/{n;p;}'); do
    [ -f "$d/nccl.h" ] && { inc=$(cd "$d" && pwd); break; }
  done
fi
if [ -z "$out" ]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/n4c-nccl-examples.XXXXXX") || exit 1
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/home/lib" "$out/nccl/docs"
out=$(cd "$out" && pwd)
# NCCL and CUDA as the examples' Makefiles look for them.
home=$out/home
[ -n "$inc" ] && ln -sfn "$inc" "$home/include"
for l in libnccl.so libcudart.so libncclsim.so.0; do ln -sf "$lib/libncclsim.so.0" "$home/lib/$l"; done
ln -sfn lib "$home/lib64"
# The examples, with the makefiles they include (five levels up).
cp -r "$src/docs/examples" "$out/nccl/docs/" && cp -r "$src/makefiles" "$out/nccl/" || exit 1
ex=$out/nccl/docs/examples

pass=0 fail=0
report() { # verdict name detail
  echo "$1: $2${3:+ ($3)}"
  if [ "$1" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

mpiflag=
[ "$mpi" = yes ] && mpiflag=MPI=1
build() { # dir
  make -C "$ex/$1/c" NVCC="$nvcc" NCCL_HOME="$home" CUDA_HOME="$home" $mpiflag >"$ex/$1/build.log" 2>&1
}

# run DIR N GIN WANT: the example's program at N ranks, its output must
# hold WANT (and, for the multimem example, no SUCCESS) and it must exit 0.
run() {
  dir=$1 n=$2 gin=$3 want=$4
  prog=$(sed -n 's/^TARGET *= *//p' "$ex/$dir/c/Makefile")
  log="$ex/$dir/run-$n-${gin:-none}.log"
  if [ -n "$hosts" ]; then
    # each process names its host from its MPI rank: N/H consecutive ranks a host
    NCCLSIM_GIN_TYPE=${gin:-none} mpirun --oversubscribe -np "$n" -x NCCLSIM_GIN_TYPE -x NCCLSIM_TIMEOUT \
      sh -c 'NCCLSIM_HOST_ID=h$((OMPI_COMM_WORLD_RANK / $1)) exec "$0"' "$ex/$dir/c/$prog" $((n / hosts)) \
      >"$log" 2>&1
  elif [ "$mpi" = yes ]; then
    NCCLSIM_GIN_TYPE=${gin:-none} mpirun --oversubscribe -np "$n" -x NCCLSIM_GIN_TYPE -x NCCLSIM_TIMEOUT \
      "$ex/$dir/c/$prog" >"$log" 2>&1
  else
    NTHREADS=$n NCCLSIM_GIN_TYPE=${gin:-none} "$ex/$dir/c/$prog" >"$log" 2>&1
  fi
  rc=$?
  what="$dir, $n ranks${hosts:+ on $hosts simulated hosts}${gin:+, GIN $gin}"
  if [ $rc -ne 0 ]; then
    report FAIL "$what" "exit status $rc; $log"
  elif ! grep -q "$want" "$log"; then
    report FAIL "$what" "no \"$want\" in $log"
  elif [ "$want" != SUCCESS ] && [ "$want" != PASSED ] && grep -q SUCCESS "$log"; then
    report FAIL "$what" "reports SUCCESS; $log"
  else
    report PASS "$what"
  fi
}

export NCCLSIM_TIMEOUT=${NCCLSIM_TIMEOUT:-60}
for dir in 06_device_api/01_allreduce_lsa 06_device_api/02_alltoall_gin 06_device_api/03_alltoall_hybrid \
           07_kernel_fusion/01_rmsnorm_lsa 07_kernel_fusion/02_rmsnorm_multimem 07_kernel_fusion/03_rmsnorm_gin \
           07_kernel_fusion/04_rmsnorm_hybrid; do
  if ! build "$dir"; then
    report FAIL "$dir: build" "$ex/$dir/build.log"
    continue
  fi
  report PASS "$dir: build"
  for n in $ranks; do
    if [ -n "$hosts" ]; then
      case $dir in
        06_device_api/01_* | 07_kernel_fusion/01_*)
          echo "SKIP: $dir, $n ranks on $hosts simulated hosts (wants one LSA team)"
          continue ;;
      esac
    fi
    case $dir in
      06_device_api/01_*) run "$dir" "$n" "" PASSED ;;
      06_device_api/*) for g in $gins; do run "$dir" "$n" "$g" PASSED; done ;;
      07_kernel_fusion/01_*) run "$dir" "$n" "" SUCCESS ;;
      07_kernel_fusion/02_*) run "$dir" "$n" "" "does not support Multimem" ;;
      07_kernel_fusion/*) for g in $gins; do run "$dir" "$n" "$g" SUCCESS; done ;;
    esac
  done
done

# nccl-tests' device kernels: they must compile against ncclsim's headers.
if [ -n "$tests" ]; then
  for f in all_reduce alltoall; do
    if $nvcc -std=c++17 -DNCCL_OS_LINUX -I"$tests/os" -c "$tests/src/$f.cu" -o "$out/nccl-tests-$f.o" \
        >"$out/nccl-tests-$f.log" 2>&1; then
      report PASS "nccl-tests src/$f.cu: compile"
    else
      report FAIL "nccl-tests src/$f.cu: compile" "$out/nccl-tests-$f.log"
    fi
  done
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
