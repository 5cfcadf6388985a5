#!/bin/sh
# make check: README.md's table of NCCLSIM_* variables is the simulator's
# parameter list (SIM_PARAMS in sim/sim.h), as ncclsimParamDump prints it:
# every parameter, in the same order, with the same default, and no other
# NCCLSIM_ row. Run from the top build directory.
: "${srcdir:=.}"
readme=$srcdir/README.md
out=tests/readme-params
LC_ALL=C
export LC_ALL

test -r "$readme" || { echo "FAIL: $readme not found"; exit 99; }
${N4C_TEST_WRAPPER:-} ./tests/sim_param_dump >"$out.dump" || {
  echo "FAIL: tests/sim_param_dump failed (status $?)"; exit 1; }

# Dump lines:  NCCLSIM_X=<value><TAB>(default <default>) <meaning>
tab=$(printf '\t')
sed -n "s/^\(NCCLSIM_[A-Z0-9_]*\)=[^$tab]*$tab(default \([^)]*\)) .*/\1 \2/p" \
  "$out.dump" >"$out.want"
# README rows:  | `NCCLSIM_X` | <default> | <meaning> |
sed -n 's/^| *`\(NCCLSIM_[A-Z0-9_]*\)` *| *\([^|]*[^ |]\) *|.*/\1 \2/p' \
  "$readme" >"$out.got"

n_dump=$(wc -l <"$out.dump")
n_want=$(wc -l <"$out.want")
n_rows=$(grep -c '^| *`NCCLSIM_' "$readme")
n_got=$(wc -l <"$out.got")
if test "$n_want" -eq 0 || test "$n_want" -ne "$n_dump"; then
  echo "FAIL: could read $n_want of the $n_dump lines of ncclsimParamDump:"
  cat "$out.dump"
  exit 1
fi
if test "$n_got" -ne "$n_rows"; then
  echo "FAIL: $n_rows NCCLSIM_ rows in $readme, but only $n_got have the form"
  echo '  | `NCCLSIM_NAME` | default | meaning |'
  exit 1
fi
diff -u "$out.want" "$out.got" >"$out.diff" || {
  echo "FAIL: the NCCLSIM_* table of $readme differs from the parameters"
  echo "of sim/sim.h (SIM_PARAMS), as ncclsimParamDump gives them"
  echo "(- parameter and default, + README row):"
  cat "$out.diff"
  exit 1
}
echo "PASS: $n_want NCCLSIM_* parameters, all in $readme with their defaults"
