#!/bin/sh
# make check: n4c-conformance --table merges two sample reports into the
# expected Markdown and HTML (testdata/table-expected.*), and the committed
# real-GPU reports into the committed table and page under docs/conformance/
# (so those stay what the program makes of the reports). The page is one
# self-contained file: no script, nothing fetched. Bad input: table-errors.sh.
# N4C_TEST_WRAPPER (tests/run-test.sh: valgrind) goes before the program.
: "${srcdir:=.}"
data=$srcdir/conformance/testdata
docs=$srcdir/docs/conformance
prog="${N4C_TEST_WRAPPER:-} ./conformance/n4c-conformance"
out=conformance/table-check.out

if ./conformance/n4c-conformance --table /dev/null 2>&1 | grep -q 'built without jansson'; then
  echo "SKIP: n4c-conformance was built without jansson (no --table)"
  exit 77
fi

fail() { echo "not ok: $*"; exit 1; }
self_contained() {
  if grep -n -i -E '<script|<link|<img|<iframe|<object|<embed|src=|url\(|@import|https?:' "$1"; then
    fail "$1 is not self-contained (the lines above)"
  fi
}

$prog --table "$data/report-a.json" "$data/report-b.json" --html "$out.html" >"$out.md" ||
  fail "--table failed (status $?)"
diff -u "$data/table-expected.md" "$out.md" || fail "the table differs from $data/table-expected.md"
diff -u "$data/table-expected.html" "$out.html" || fail "the page differs from $data/table-expected.html"
echo "ok: the sample reports give the expected table and page"

# The committed pages: regenerate one with
#   n4c-conformance --table <these reports, in this order> --html <page> > <table>
# check_page PAGE REPORT...
check_page() {
  page=$1
  shift
  reports=
  for f; do reports="$reports $docs/$f"; done
  $prog --table $reports --html "$out.docs.html" >"$out.docs.md" ||
    fail "--table of the reports in $docs failed (status $?)"
  diff -u "$docs/$page.md" "$out.docs.md" >/dev/null || fail "$docs/$page.md is not what --table makes of the reports"
  diff -u "$docs/$page.html" "$out.docs.html" >/dev/null ||
    fail "$docs/$page.html is not what --table --html makes of the reports"
  echo "ok: $docs/$page.md and .html are what --table makes of the reports there"
  self_contained "$out.docs.html"
}
check_page table_nccl-2.30.7_H100x1_2026-11-23 \
  ncclsim-2.30.7_sim_2026-11-23_threads-n1.json nccl-2.30.7_H100x1_2026-11-23_threads-n1.json
check_page table_nccl-2.30.7_H200x2_2026-11-23 \
  ncclsim-2.30.7_sim_2026-11-23_threads-n2.json nccl-2.30.7_H200x2_2026-11-23_threads-n2.json \
  nccl-2.30.7_H200x2_2026-11-23_mpi-n2.json
check_page table_nccl-2.28.3_H200x2-x4_2026-11-22 \
  ncclsim-2.30.7_sim_2026-11-22_threads-n2.json nccl-2.28.3_H200x2_2026-11-22_threads-n2.json \
  nccl-2.28.3_H200x2_2026-11-22_mpi-n2.json ncclsim-2.30.7_sim_2026-11-22_threads-n4.json \
  nccl-2.28.3_H200x4_2026-11-22_threads-n4.json nccl-2.28.3_H200x4_2026-11-22_mpi-n4.json

self_contained "$out.html"
echo "ok: the pages have no script and fetch nothing"
