#!/bin/sh
# make check: n4c-conformance --table merges two sample reports into the
# expected Markdown. What it refuses: table-errors.sh.
: "${srcdir:=.}"
data=$srcdir/conformance/testdata
prog=./conformance/n4c-conformance
out=conformance/table-check.out

$prog --table "$data/report-a.json" "$data/report-b.json" >"$out" || {
  echo "not ok: --table failed (status $?)"; exit 1; }
diff -u "$data/table-expected.md" "$out" || {
  echo "not ok: the table differs from $data/table-expected.md"; exit 1; }
