#!/bin/sh
# gpu-run.sh — build nccl4c from its release tarball against the host's real
# NCCL and run the conformance suite (threads and MPI) and the benchmarks.
# This is how the reports under docs/conformance/ were made.
#
#   gpu-run.sh [OPTIONS] TARBALL OUTDIR [NRANKS]     (default NRANKS: 2)
#
#   --with-nccl=DIR    NCCL in DIR (DIR/include/nccl.h, DIR/lib/libnccl.so),
#                      e.g. built from source with make src.build BUILDDIR=DIR;
#                      default: the system's NCCL, then /usr/local/cuda's
#   --with-cuda=DIR    CUDA in DIR (default /usr/local/cuda)
#   --with-dlpack=DIR  DIR/dlpack/dlpack.h, e.g. Debian's libdlpack-dev header
#                      copied to the host (the IOP cases skip without it)
#   --no-mpi           no MPI run (default: with MPI where mpicc is found)
#   --build=DIR        build in DIR and keep it; a DIR already built by an
#                      earlier run with the same options is used as it is
#   --build-only       build, run nothing
#
# At NRANKS 1 the suite runs at one rank, and of the benchmarks only
# allreduce_bw (at one rank); p2p_bw, put_bw and signal_latency need two.
# N4C_GPU_BENCH=0: no benchmarks. N4C_GPU_SUITE=0: no conformance suite.
# N4C_GPU_CORPUS=0: no CUDA corpus (examples/cuda, built with the host's
# nvcc -arch=sm_90, N4C_GPU_ARCH to change it; its report in OUTDIR/corpus.txt).
# N4C_GPU_TIMEOUT: the suite's --timeout (default 120 s a case).
#
# Needs: CUDA, NCCL, and for the MPI run Open MPI. For the JSON reports,
# jansson (found with pkg-config). A host without it (no apt, as on the GPU
# hosts) takes N4C_JANSSON=DIR: jansson installed under DIR, e.g. built from
# its release tarball, copied to the host, with
#   ./configure --prefix=DIR --disable-shared && make && make install
# (a static library: the programs need no library path), or a distribution's
# libjansson.a, jansson.h and jansson_config.h laid out as DIR/lib and
# DIR/include with DIR/lib/pkgconfig/jansson.pc. Without jansson the suite
# still writes TAP and JUnit, and no JSON report.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0): it can take a shared
# host's GPUs down. Every program started here inherits it, and mpirun
# passes it on with -x.
set -u
usage() { sed -n '6,17p' "$0" >&2; exit 2; }
nccl= cuda= dlpack= mpi=auto build= build_only=no
while [ $# -gt 0 ]; do
  case $1 in
    --with-nccl=*) nccl=${1#*=} ;;
    --with-cuda=*) cuda=${1#*=} ;;
    --with-dlpack=*) dlpack=${1#*=} ;;
    --no-mpi) mpi=no ;;
    --build=*) build=${1#*=} ;;
    --build-only) build_only=yes ;;
    --help|-h) usage ;;
    -*) echo "gpu-run.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
  shift
done
[ $# -ge 2 ] || usage
tarball=$1 out=$2 n=${3:-2}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ "$mpi" = auto ]; then
  if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then mpi=yes; else
    mpi=no; echo "no mpicc/mpirun: no MPI run"; fi
fi
if [ -n "$dlpack" ] && [ ! -f "$dlpack/dlpack/dlpack.h" ]; then
  echo "gpu-run.sh: --with-dlpack=$dlpack: no $dlpack/dlpack/dlpack.h" >&2; exit 2
fi
if [ -n "${N4C_JANSSON:-}" ]; then
  export PKG_CONFIG_PATH="$N4C_JANSSON/lib/pkgconfig:$N4C_JANSSON/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  # Should it be a shared library after all, the programs find it.
  export LDFLAGS="${LDFLAGS:+$LDFLAGS }-Wl,-rpath,$N4C_JANSSON/lib -Wl,-rpath,$N4C_JANSSON/lib64"
fi
set -- --with-nccl${nccl:+=$nccl} --with-cuda${cuda:+=$cuda}
[ "$mpi" = yes ] && set -- "$@" --with-mpi
[ -n "$dlpack" ] && set -- "$@" CPPFLAGS="-I$dlpack${CPPFLAGS:+ $CPPFLAGS}"
# A kept build is reused when it was configured with these options.
want="$(basename "$tarball") $*"
if [ -n "$build" ] && [ -f "$build/.gpu-run-config" ] && [ "$(cat "$build/.gpu-run-config")" = "$want" ] &&
   [ -x "$build"/nccl4c-*/conformance/n4c-conformance ]; then
  cd "$build"/nccl4c-* || exit 1
  echo "using the build in $(pwd)"
else
  work=${build:-$(mktemp -d)}
  rm -rf "$work" && mkdir -p "$work" || exit 1
  tar -C "$work" -xzf "$tarball" || exit 1
  cd "$work"/nccl4c-* || exit 1
  log="$out/build.log"
  { ./configure "$@" && make -j"$(nproc)" && make bench; } >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  echo "$want" >"$work/.gpu-run-config"
  sed -n '/^nccl4c .* configured/,/^  prefix:/p' "$log"
fi
[ "$build_only" = yes ] && exit 0
json=yes
grep -q '^#define HAVE_JANSSON 1' config.h ||
  { json=no; echo "no jansson (see N4C_JANSSON above): TAP and JUnit reports, no JSON"; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
echo "gpu=$gpu ngpus=$(nvidia-smi -L | wc -l) nranks=$n"
if [ "${N4C_GPU_CORPUS:-1}" != 0 ]; then
  # The same programs make check builds with ncclsim-nvcc, and the same .out.
  ncclflags=-lnccl
  [ -n "$nccl" ] && ncclflags="-I$nccl/include -L$nccl/lib -lnccl -Xlinker -rpath,$nccl/lib"
  sh examples/cuda/run-corpus.sh --nvcc="${cuda:-/usr/local/cuda}/bin/nvcc -arch=${N4C_GPU_ARCH:-sm_90}" \
    --nccl="$ncclflags" --nccl4c="-Ilib -Llib/.libs -lnccl4c -Xlinker -rpath,$(pwd)/lib/.libs" \
    --out="$out/corpus" >"$out/corpus.txt" 2>&1
  echo "corpus rc=$?: $(tail -n 1 "$out/corpus.txt")"
  grep '^FAIL' "$out/corpus.txt"
fi
if [ "${N4C_GPU_SUITE:-1}" != 0 ]; then
  set --; [ $json = yes ] && set -- --json "$out/nccl-threads-n$n.json"
  ./conformance/n4c-conformance -n "$n" --timeout "${N4C_GPU_TIMEOUT:-120}" "$@" --junit "$out/nccl-threads-n$n.xml" \
    >"$out/nccl-threads-n$n.tap" 2>&1
  echo "threads rc=$?: $(grep -c '^ok' "$out/nccl-threads-n$n.tap") ok ($(grep -c '# SKIP' "$out/nccl-threads-n$n.tap") skip)"
  grep '^not ok' "$out/nccl-threads-n$n.tap"
  if [ "$mpi" = yes ]; then
    set --; [ $json = yes ] && set -- --json "$out/nccl-mpi-n$n.json"
    mpirun --allow-run-as-root -np "$n" -x NCCL_NVLS_ENABLE ./conformance/n4c-conformance --mpi \
      --timeout "${N4C_GPU_TIMEOUT:-120}" "$@" --junit "$out/nccl-mpi-n$n.xml" >"$out/nccl-mpi-n$n.tap" 2>&1
    echo "mpi rc=$?: $(grep -c '^ok' "$out/nccl-mpi-n$n.tap") ok ($(grep -c '# SKIP' "$out/nccl-mpi-n$n.tap") skip)"
    grep '^not ok' "$out/nccl-mpi-n$n.tap"
  fi
fi
[ "${N4C_GPU_BENCH:-1}" = 0 ] && exit 0 # N4C_GPU_BENCH=0: the suite only
bench() { # NAME ARGS...: bench/NAME's output into bench-NAME[-nN].txt
  name=$1 f="$out/bench-$1.txt"; shift
  [ "$name" = allreduce_bw ] && f="$out/bench-$name-n$n.txt"
  timeout 300 "./bench/$name" "$@" >"$f" 2>&1
  echo "$name rc=$?"; tail -3 "$f"
}
bench allreduce_bw $((256 << 20)) "$n"
if [ "$n" -ge 2 ]; then
  bench p2p_bw
  bench put_bw
  bench signal_latency
else
  echo "p2p_bw, put_bw, signal_latency: not run (they need 2 ranks)"
fi
