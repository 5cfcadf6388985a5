#!/bin/sh
# make check (configure --with-mpi): the conformance suite on ncclsim with
# ranks as MPI processes, `mpirun -np N n4c-conformance --mpi`. Run from the
# top build directory by suite-mpi2.tap and suite-mpi4.tap, which give N.
# Open MPI refuses root unless told, and oversubscribes a 2-core machine
# only when told; its own allocations are not freed at exit, so LeakSanitizer
# (ASan builds) is off for these runs: the thread suites check ncclsim's.
n=$1
if test "${N4C_SUITE_MAX_RANKS:-$n}" -lt "$n"; then
  echo "1..0 # SKIP $n ranks > N4C_SUITE_MAX_RANKS=$N4C_SUITE_MAX_RANKS"
  exit 0
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "1..0 # SKIP mpirun not found (Debian: openmpi-bin)"
  exit 0
fi
json="--json conformance/report-mpi$n.json"
./conformance/n4c-conformance --table /dev/null 2>&1 | grep -q 'built without jansson' && json=
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
exec mpirun -np "$n" ./conformance/n4c-conformance --mpi --timeout $((300 * ${N4C_SLOWDOWN:-1})) $json \
  --junit conformance/report-mpi$n.xml
