#!/bin/sh
# make check: n4c-conformance --table merges two sample reports into the
# expected Markdown, and refuses a report that is not one.
: "${srcdir:=.}"
data=$srcdir/conformance/testdata
prog=./conformance/n4c-conformance
out=conformance/table-check.out
bad=conformance/table-check.bad.json

$prog --table "$data/report-a.json" "$data/report-b.json" >"$out" || {
  echo "not ok: --table failed (status $?)"; exit 1; }
diff -u "$data/table-expected.md" "$out" || {
  echo "not ok: the table differs from $data/table-expected.md"; exit 1; }

printf '{"backend": "nccl", "nranks": 2, "cases": [{"id": "X", ' >"$bad"
$prog --table "$bad" >/dev/null 2>&1
rc=$?
test $rc -eq 2 || { echo "not ok: a truncated report gave status $rc, not 2"; exit 1; }
