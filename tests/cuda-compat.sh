# tests/cuda-compat.sh — ncclsim's public headers against CUDA's and NCCL's.
#
# tests/cuda-compat-gen.py reads everything ncclsim's headers declare
# (clang's AST) and writes one check per line: each function's exact
# signature, each struct's size, alignment and field offsets, each
# enumerator's value, with ncclsim's values. Two sets, each compared with
# the real header that declares the same things in NCCL 2.30.7:
#   host:   ncclsim's nccl.h, cuda_runtime.h and cuda_fp8.h, against the
#           real <nccl.h>, <cuda_runtime.h> and <cuda_fp8.h> (so nothing
#           that real NCCL declares elsewhere may be in ncclsim's nccl.h);
#   device: ncclsim's nccl_device/core.h against the real <nccl_device.h>
#           (skipped, saying so, where $N4C_CUDA_HOME/include has none).
# The checks must compile against ncclsim's headers (the generator read
# them right) and against the real ones in $N4C_CUDA_HOME/include; a check
# that fails there must be listed, with its reason, in
# tests/cuda-compat-known.txt, and a listed one that passes fails the test
# too (the list stays true).
# Skipped (77), saying why, without CUDA's headers, clang++ or python3.
# make turns this file into tests/cuda-compat with CXX and top_srcdir set.
cuda=${N4C_CUDA_HOME:-/usr/local/cuda}
for need in "$cuda/include/cuda_runtime_api.h" "$cuda/include/cuda_fp8.h"; do
  test -f "$need" || { echo "SKIP: no $need (set N4C_CUDA_HOME)"; exit 77; }
done
command -v clang++ >/dev/null || { echo "SKIP: no clang++ (the checks are generated from its AST)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (runs tests/cuda-compat-gen.py)"; exit 77; }
sim="$top_srcdir/sim/include"
known="$top_srcdir/tests/cuda-compat-known.txt"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/n4c-compat.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Entries that hold for these headers: "always", or "nccl<CODE" while the
# real nccl.h is older than CODE.
code=0
if test -f "$cuda/include/nccl.h"; then
  v() { sed -n "s/^#define NCCL_$1 *\([0-9]*\).*/\1/p" "$cuda/include/nccl.h" | head -n 1; }
  code=$(( $(v MAJOR) * 10000 + $(v MINOR) * 100 + $(v PATCH) ))
fi
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$known" |
  awk -v code="$code" '$1 == "always" || ($1 ~ /^nccl</ && code < substr($1, 6) + 0) {print $2}' | sort -u >"$tmp/known"

# compare SET SIM_HEADERS REAL_HEADERS: appends what differs to
# $tmp/differ and every check's key to $tmp/keys; 1 on a hard failure.
: >"$tmp/differ"
: >"$tmp/keys"
compare() {
  set_=$1 d="$tmp/$1"
  mkdir "$d" || return 1
  printf '%b' "$2" >"$d/headers.h"
  clang++ -std=c++17 -fsyntax-only -Xclang -ast-dump=json -I"$sim" -x c++ "$d/headers.h" >"$d/ast.json" || return 1
  python3 "$top_srcdir/tests/cuda-compat-gen.py" --set "$set_" --ast "$d/ast.json" --checks >"$d/sigs.inc" || return 1
  python3 "$top_srcdir/tests/cuda-compat-gen.py" --set "$set_" --ast "$d/ast.json" --probe >"$d/probe.cc" || return 1
  $CXX -std=c++17 -I"$sim" -o "$d/probe" "$d/probe.cc" || return 1
  "$d/probe" >"$d/layout.inc" || return 1
  # Without NCCL's nccl.h next to CUDA's, only the CUDA part is compared.
  if test -n "$3"; then
    cat "$d/sigs.inc" "$d/layout.inc" >"$d/all.inc"
  else
    echo "note: no $cuda/include/nccl.h: NCCL's declarations are not compared"
    cat "$d/sigs.inc" "$d/layout.inc" | grep -iv '// .*nccl' >"$d/all.inc"
  fi
  {
    printf '%b' "$3"
    printf '#include <cuda_runtime.h>\n#include <cuda_fp8.h>\n#include <cuda.h>\n#include <cstddef>\n'
    echo '#line 1 "checks"'
    cat "$d/all.inc"
  } >"$d/checks.cc"
  echo "$set_: $(grep -c . "$d/all.inc") checks ($(grep -c . "$d/sigs.inc") signatures)"
  sed -n 's|.*// ||p' "$d/all.inc" >>"$tmp/keys"
  if ! $CXX -std=c++17 -fsyntax-only -I"$sim" "$d/checks.cc" 2>"$d/sim.err"; then
    echo "FAIL: the $set_ checks do not hold against ncclsim's own headers:"
    head -n 20 "$d/sim.err"
    return 1
  fi
  $CXX -std=c++17 -fsyntax-only -fmax-errors=0 -w -isystem "$cuda/include" "$d/checks.cc" 2>"$d/real.err"
  # Each failing line of "checks" names what it checks in its comment.
  sed -n 's/^checks:\([0-9]*\):[0-9]*: error:.*/\1/p' "$d/real.err" | sort -un >"$d/lines"
  while read -r n; do sed -n "${n}s|.*// ||p" "$d/all.inc"; done <"$d/lines" | sort -u >"$d/differ"
  if grep -q 'error:' "$d/real.err" && ! test -s "$d/differ"; then
    echo "FAIL: the real headers do not compile here ($set_):"
    head -n 20 "$d/real.err"
    return 1
  fi
  for k in $(comm -23 "$d/differ" "$tmp/known"); do
    echo "FAIL: differs from the real headers ($set_): $k"
    n=$(grep -n "// $k\$" "$d/all.inc" | head -n 1 | cut -d: -f1)
    grep "^checks:$n:" "$d/real.err" | head -n 2
  done
  cat "$d/differ" >>"$tmp/differ"
  return 0
}

if test -f "$cuda/include/nccl.h"; then real_host='#include <nccl.h>\n'; else real_host=; fi
compare host '#include <nccl.h>\n#include <cuda_runtime.h>\n#include <cuda_fp8.h>\n#include <cuda.h>\n' "$real_host" || exit 1
if test -f "$cuda/include/nccl_device.h"; then
  compare device '#include <nccl_device.h>\n' '#include <nccl.h>\n#include <nccl_device.h>\n' || exit 1
else
  echo "note: no $cuda/include/nccl_device.h: ncclsim's nccl_device/core.h is not compared"
fi

sort -u "$tmp/differ" -o "$tmp/differ"
sort -u "$tmp/keys" -o "$tmp/keys"
rc=0
test -n "$(comm -23 "$tmp/differ" "$tmp/known")" && rc=1
for k in $(comm -13 "$tmp/differ" "$tmp/known"); do
  if grep -qxF "$k" "$tmp/keys"; then
    echo "FAIL: listed in tests/cuda-compat-known.txt but matches now: $k"
    rc=1
  fi
done
echo "$(grep -c . "$tmp/differ") known differences, each with its reason in tests/cuda-compat-known.txt"
exit $rc
