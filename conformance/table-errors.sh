#!/bin/sh
# make check: n4c-conformance --table refuses what is not a set of
# conformance reports, with exit status 2, no table and no page, and a
# message that says where: FILE:LINE:COLUMN where a file stops being JSON,
# the member that is missing or wrong in valid JSON of another shape, both
# files when two reports would make the same column.
# N4C_TEST_WRAPPER (tests/run-test.sh: valgrind) goes before the program.
: "${srcdir:=.}"
data=$srcdir/conformance/testdata
prog="${N4C_TEST_WRAPPER:-} ./conformance/n4c-conformance"
d=conformance/table-errors.d

if ./conformance/n4c-conformance --table /dev/null 2>&1 | grep -q 'built without jansson'; then
  echo "SKIP: n4c-conformance was built without jansson (no --table)"
  exit 77
fi

rm -rf "$d"
mkdir -p "$d" || exit 99
n=0
fail() { echo "not ok: $*"; exit 1; }

# refused NAME EXPECTED REPORT...: --table REPORT... --html fails as it
# should, and its message contains EXPECTED.
refused() {
  name=$1 want=$2
  shift 2
  n=$((n + 1))
  rm -f "$d/page.html"
  $prog --table "$@" --html "$d/page.html" >"$d/out" 2>"$d/err"
  rc=$?
  test $rc -eq 2 || { cat "$d/err"; fail "$name: status $rc, not 2"; }
  test -s "$d/out" && fail "$name: a table was printed"
  test -e "$d/page.html" && fail "$name: a page was written"
  grep -F -q -- "$want" "$d/err" || { cat "$d/err"; fail "$name: the message does not say '$want'"; }
  echo "ok $n - $name: $(grep n4c-conformance "$d/err")"
}

# Not JSON: where it stops (jansson's line and column: of the last character read).
printf '{\n  "backend": "nccl",\n  "nranks": 2,\n  "cases": [\n    {"id": "P2P-01", "res' >"$d/cut.json"
refused "truncated" "$d/cut.json:5:25: not JSON:" "$d/cut.json"
head -c 1000 "$srcdir/docs/conformance/nccl-2.28.3_H200x2_2026-11-22_mpi-n2.json" >"$d/cut-real.json"
refused "a real report cut short" "$d/cut-real.json:12:57: not JSON:" "$data/report-a.json" "$d/cut-real.json"
: >"$d/empty.json"
refused "an empty file" "$d/empty.json:1:" "$d/empty.json"
printf '{"backend": "nccl",\n "nranks": 2, "launch": "mpi",\n "nranks": 4, "cases": []}\n' >"$d/twice.json"
refused "a member given twice" "$d/twice.json:3:" "$d/twice.json"
printf '{"backend": "nccl", "nranks": 2, "cases": [\n  {"id": "P2P-01", "result": "pass"},\n]}\n' >"$d/comma.json"
refused "a trailing comma" "$d/comma.json:3:1: not JSON:" "$d/comma.json"
refused "a file that is not there" "$d/missing.json" "$data/report-a.json" "$d/missing.json"

# JSON, but not a report: which member.
echo '[{"id": "P2P-01", "result": "pass"}]' >"$d/array.json"
refused "an array" "$d/array.json: not a conformance report: the top level is an array, not an object" "$d/array.json"
echo '{"name": "nccl4c", "version": "0.1.0"}' >"$d/other.json"
refused "another program's JSON" "$d/other.json: not a conformance report: \"backend\" is missing" "$d/other.json"
echo '{"backend": "nccl", "nranks": "2", "cases": []}' >"$d/nranks.json"
refused "nranks a string" "$d/nranks.json: not a conformance report: \"nranks\" is a string, not an integer" "$d/nranks.json"
echo '{"backend": "nccl", "nranks": 2}' >"$d/nocases.json"
refused "no cases" "$d/nocases.json: not a conformance report: \"cases\" is missing" "$d/nocases.json"
echo '{"backend": "nccl", "nranks": 2, "cases": {"P2P-01": "pass"}}' >"$d/cases-object.json"
refused "cases an object" "\"cases\" is an object, not an array" "$d/cases-object.json"
echo '{"backend": "nccl", "nranks": 2, "cases": [{"id": "LIFE-01", "result": "pass"}, {"id": "P2P-01", "verdict": "pass"}]}' >"$d/noresult.json"
refused "a case without result" "$d/noresult.json: not a conformance report: cases[1] (P2P-01): \"result\" is missing" "$d/noresult.json"
echo '{"backend": "nccl", "nranks": 2, "cases": [{"id": "P2P-01", "result": "ok"}]}' >"$d/result.json"
refused "an unknown result" "cases[0] (P2P-01): \"result\" is \"ok\", not \"pass\", \"skip\" or \"fail\"" "$d/result.json"
echo '{"backend": "nccl", "nranks": 2, "cases": [{"id": 7, "result": "pass"}]}' >"$d/id.json"
refused "a numeric id" "cases[0]: \"id\" is an integer, not a string" "$d/id.json"
echo '{"backend": "nccl", "nranks": 2, "cases": [{"id": "P2P-01", "result": "pass", "detail": null}]}' >"$d/detail.json"
refused "a null detail" "cases[0] (P2P-01): \"detail\" is null, not a string" "$d/detail.json"
echo '{"backend": "nccl", "nranks": 2, "cases": [{"id": "P2P-01", "result": "pass"}, {"id": "P2P-01", "result": "fail"}]}' >"$d/dup-case.json"
refused "a case twice" "cases[1] (P2P-01): case P2P-01 is there twice (also cases[0])" "$d/dup-case.json"

# Two reports for one column: same backend, launch mode and rank count.
cp "$data/report-b.json" "$d/report-b-again.json"
refused "the same backend and launch twice" \
  "$d/report-b-again.json: a second report of nccl/mpi/2 (backend/launch/ranks), after $data/report-b.json" \
  "$data/report-a.json" "$data/report-b.json" "$d/report-b-again.json"

echo "all $n refused as they should be"
rm -rf "$d"
