# tests/cuda-compat.sh — ncclsim's public headers against CUDA's and NCCL's.
#
# tests/cuda-compat-gen.py reads everything ncclsim's nccl.h, cuda_runtime.h
# and cuda_fp8.h declare (clang's AST) and writes one check per line: each
# function's exact signature, each struct's size, alignment and field
# offsets, each enumerator's value, with ncclsim's values. The checks must
# compile against ncclsim's headers (the generator read them right) and
# against the real ones in $N4C_CUDA_HOME/include; a check that fails
# there must be listed, with its reason, in tests/cuda-compat-known.txt,
# and a listed one that passes fails the test too (the list stays true).
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

printf '#include <nccl.h>\n#include <cuda_runtime.h>\n#include <cuda_fp8.h>\n' >"$tmp/headers.h"
clang++ -std=c++17 -fsyntax-only -Xclang -ast-dump=json -I"$sim" -x c++ "$tmp/headers.h" >"$tmp/ast.json" || exit 1
python3 "$top_srcdir/tests/cuda-compat-gen.py" --ast "$tmp/ast.json" --checks >"$tmp/sigs.inc" || exit 1
python3 "$top_srcdir/tests/cuda-compat-gen.py" --ast "$tmp/ast.json" --probe >"$tmp/probe.cc" || exit 1
$CXX -std=c++17 -I"$sim" -o "$tmp/probe" "$tmp/probe.cc" || exit 1
"$tmp/probe" >"$tmp/layout.inc" || exit 1

# Without NCCL's nccl.h next to CUDA's, only the CUDA part is compared.
if test -f "$cuda/include/nccl.h"; then
  cat "$tmp/sigs.inc" "$tmp/layout.inc" >"$tmp/all.inc"
  real_headers='#include <nccl.h>'
else
  echo "note: no $cuda/include/nccl.h: NCCL's declarations are not compared"
  cat "$tmp/sigs.inc" "$tmp/layout.inc" | grep -iv '// .*nccl' >"$tmp/all.inc"
  real_headers=
fi
{
  echo "$real_headers"
  printf '#include <cuda_runtime.h>\n#include <cuda_fp8.h>\n#include <cstddef>\n'
  echo '#line 1 "checks"'
  cat "$tmp/all.inc"
} >"$tmp/checks.cc"
echo "$(grep -c . "$tmp/all.inc") checks ($(grep -c . "$tmp/sigs.inc") signatures)"

if ! $CXX -std=c++17 -fsyntax-only -I"$sim" "$tmp/checks.cc" 2>"$tmp/sim.err"; then
  echo "FAIL: the checks do not hold against ncclsim's own headers:"
  head -n 20 "$tmp/sim.err"
  exit 1
fi
$CXX -std=c++17 -fsyntax-only -fmax-errors=0 -w -isystem "$cuda/include" "$tmp/checks.cc" 2>"$tmp/real.err"
# Each failing line of "checks" names what it checks in its comment.
sed -n 's/^checks:\([0-9]*\):[0-9]*: error:.*/\1/p' "$tmp/real.err" | sort -un >"$tmp/lines"
while read -r n; do sed -n "${n}s|.*// ||p" "$tmp/all.inc"; done <"$tmp/lines" | sort -u >"$tmp/differ"
if grep -q 'error:' "$tmp/real.err" && ! test -s "$tmp/differ"; then
  echo "FAIL: the real headers do not compile here:"
  head -n 20 "$tmp/real.err"
  exit 1
fi
# Entries that hold for these headers: "always", or "nccl<CODE" while the
# real nccl.h is older than CODE.
code=0
if test -f "$cuda/include/nccl.h"; then
  v() { sed -n "s/^#define NCCL_$1 *\([0-9]*\).*/\1/p" "$cuda/include/nccl.h" | head -n 1; }
  code=$(( $(v MAJOR) * 10000 + $(v MINOR) * 100 + $(v PATCH) ))
fi
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$known" |
  awk -v code="$code" '$1 == "always" || ($1 ~ /^nccl</ && code < substr($1, 6) + 0) {print $2}' | sort -u >"$tmp/known"
rc=0
for k in $(comm -23 "$tmp/differ" "$tmp/known"); do
  echo "FAIL: differs from the real headers: $k"
  n=$(grep -n "// $k\$" "$tmp/all.inc" | head -n 1 | cut -d: -f1)
  grep "^checks:$n:" "$tmp/real.err" | head -n 2
  rc=1
done
for k in $(comm -13 "$tmp/differ" "$tmp/known"); do
  if grep -q "// $k\$" "$tmp/all.inc"; then
    echo "FAIL: listed in tests/cuda-compat-known.txt but matches now: $k"
    rc=1
  fi
done
echo "$(grep -c . "$tmp/differ") known differences, each with its reason in tests/cuda-compat-known.txt"
exit $rc
