#!/bin/sh
# make check: --junit. One run of a few cases on ncclsim at 2 ranks, with
# rank 1 made to stop at its first NCCL operation (NCCLSIM_FAULT) so that
# the run has passes, a skip and failures, writes TAP, a JUnit report and a
# JSON report. An XML parser (python3's xml.etree) reads the JUnit report,
# which must list the same cases as the other two, in the same order, with
# the same verdicts, details, claims, times and run properties.
# In a build without jansson the JUnit report is checked against TAP only,
# and --json must be refused before anything runs.
# N4C_TEST_WRAPPER (tests/run-test.sh: valgrind) goes before the program.
: "${srcdir:=.}"
prog="${N4C_TEST_WRAPPER:-} ./conformance/n4c-conformance"
d=conformance/junit-check.d
cases='LIFE-01,ERR-01,P2P-01,REG-07,SIG-03'

if test "${N4C_SUITE_MAX_RANKS:-2}" -lt 2; then
  echo "SKIP: 2 ranks > N4C_SUITE_MAX_RANKS=$N4C_SUITE_MAX_RANKS"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: no python3 to parse the XML"
  exit 77
fi
rm -rf "$d"
mkdir -p "$d" || exit 99
fail() { echo "not ok: $*"; exit 1; }

json="--json $d/report.json"
if ./conformance/n4c-conformance --table /dev/null 2>&1 | grep -q 'built without jansson'; then
  $prog -n 2 --filter "$cases" --json "$d/report.json" --junit "$d/report.xml" >"$d/refused.tap" 2>"$d/refused.err"
  rc=$?
  test $rc -eq 2 || fail "--json in a build without jansson: status $rc, not 2"
  grep -q 'built without jansson' "$d/refused.err" || fail "--json: no message saying why it is refused"
  test -s "$d/refused.tap" && fail "--json in a build without jansson: cases ran"
  echo "ok: --json is refused in a build without jansson: $(cat "$d/refused.err")"
  json=
fi

# Rank 1 stops at its first NCCL operation: peers time out after 2 s.
NCCLSIM_FAULT=1:1 NCCLSIM_TIMEOUT=2 \
  $prog -n 2 --filter "$cases" $json --junit "$d/report.xml" >"$d/run.tap"
rc=$?
test $rc -eq 1 || { cat "$d/run.tap"; fail "the run gave status $rc, not 1 (a case failed)"; }

python3 - "$d/report.xml" "$d/run.tap" ${json:+"$d/report.json"} <<'PY' || fail "the JUnit report does not match"
import json, re, sys
import xml.etree.ElementTree as ET

xml_path, tap_path = sys.argv[1], sys.argv[2]
json_path = sys.argv[3] if len(sys.argv) > 3 else None
errors = []

def check(cond, what):
    if not cond:
        errors.append(what)

def props(elem):
    p = elem.find('properties')
    return {} if p is None else {q.get('name'): q.get('value') for q in p.findall('property')}

root = ET.parse(xml_path).getroot()  # raises on XML that is not well formed
check(root.tag == 'testsuites', 'the root is <%s>, not <testsuites>' % root.tag)
suites = root.findall('testsuite')
check(len(suites) == 1, '%d <testsuite>, not 1' % len(suites))
suite = suites[0]
junit = []
for c in suite.findall('testcase'):
    f, s = c.find('failure'), c.find('skipped')
    check(f is None or s is None, '%s: both <failure> and <skipped>' % c.get('name'))
    verdict = 'fail' if f is not None else 'skip' if s is not None else 'pass'
    detail = (f if f is not None else s).get('message') if verdict != 'pass' else ''
    if f is not None:
        check((f.text or '') == detail, '%s: the failure text differs from its message' % c.get('name'))
    junit.append({'id': c.get('name'), 'classname': c.get('classname'), 'verdict': verdict,
                  'detail': detail, 'claim': props(c).get('claim'),
                  'divergence': props(c).get('divergence', ''), 'time': float(c.get('time'))})

count = lambda v: sum(1 for j in junit if j['verdict'] == v)
for elem in (root, suite):
    check(elem.get('tests') == str(len(junit)), '<%s tests=%s>, %d testcases' % (elem.tag, elem.get('tests'), len(junit)))
    check(elem.get('failures') == str(count('fail')), '<%s failures=%s>' % (elem.tag, elem.get('failures')))
    check(elem.get('skipped') == str(count('skip')), '<%s skipped=%s>' % (elem.tag, elem.get('skipped')))
    check(elem.get('errors') == '0', '<%s errors=%s>' % (elem.tag, elem.get('errors')))
for j in junit:
    check(j['classname'] == j['id'].split('-')[0], '%s: classname %s' % (j['id'], j['classname']))
for v in ('pass', 'skip', 'fail'):
    check(count(v) > 0, 'no case with verdict %s: the run does not cover it' % v)

# TAP: "ok N - ID claim", "not ok N - ...", "ok N - ID claim # SKIP reason".
tap = []
for line in open(tap_path, encoding='utf-8'):
    m = re.match(r'(not ok|ok) \d+ - (\S+)', line)
    if m:
        skip = re.search(r'(?<!\\)# SKIP ', line) is not None
        tap.append((m.group(2), 'fail' if m.group(1) == 'not ok' else 'skip' if skip else 'pass'))
check([(j['id'], j['verdict']) for j in junit] == tap,
      'cases and verdicts differ from TAP: %s versus %s' % ([(j['id'], j['verdict']) for j in junit], tap))

if json_path:
    rep = json.load(open(json_path, encoding='utf-8'))
    p = props(suite)
    check(p.get('backend') == rep['backend'], 'backend %s, JSON %s' % (p.get('backend'), rep['backend']))
    check(p.get('nccl_version_code') == str(rep['nccl_version']), 'nccl_version_code %s, JSON %s' % (p.get('nccl_version_code'), rep['nccl_version']))
    check(p.get('launch') == rep['launch'], 'launch %s, JSON %s' % (p.get('launch'), rep['launch']))
    check(p.get('nranks') == str(rep['nranks']), 'nranks %s, JSON %s' % (p.get('nranks'), rep['nranks']))
    check(p.get('nccl_version'), 'no nccl_version property')
    check(len(junit) == len(rep['cases']), '%d testcases, %d cases in the JSON report' % (len(junit), len(rep['cases'])))
    for j, r in zip(junit, rep['cases']):
        check(j['id'] == r['id'], 'testcase %s where the JSON report has %s' % (j['id'], r['id']))
        check(j['verdict'] == r['result'], '%s: %s, JSON %s' % (j['id'], j['verdict'], r['result']))
        check(j['detail'] == r['detail'] or j['verdict'] == 'pass', '%s: detail %r, JSON %r' % (j['id'], j['detail'], r['detail']))
        check(j['claim'] == r['claim'], '%s: claim %r, JSON %r' % (j['id'], j['claim'], r['claim']))
        check(j['divergence'] == r.get('divergence', ''), '%s: divergence %r, JSON %r' % (j['id'], j['divergence'], r.get('divergence')))
        check(abs(j['time'] - r['seconds']) <= 0.0011, '%s: time %s, JSON %s' % (j['id'], j['time'], r['seconds']))

for e in errors:
    print('not ok:', e)
if errors:
    sys.exit(1)
print('ok: %d testcases (%d pass, %d skip, %d fail) match TAP%s' %
      (len(junit), count('pass'), count('skip'), count('fail'), ' and the JSON report' if json_path else ''))
PY
rm -rf "$d"
test -n "$json" || { echo "SKIP: built without jansson: no JSON report to compare with"; exit 77; }
