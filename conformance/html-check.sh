#!/bin/sh
# make check: the page of --table --html renders in a browser. From the
# reports under docs/conformance/, headless Chromium takes a screenshot of
# the page (it must load: a PNG of the window's size that is not blank) and
# dumps the DOM it built, whose table must have one row per case of the
# reports, each case once. Skipped (77) without chromium or python3.
# N4C_TEST_WRAPPER (tests/run-test.sh: valgrind) goes before the program.
: "${srcdir:=.}"
prog="${N4C_TEST_WRAPPER:-} ./conformance/n4c-conformance"
d=conformance/html-check.d
width=1400 height=1000

browser=
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if test -z "$browser"; then
  echo "SKIP: no chromium (Debian: apt-get install chromium)"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: no python3 to read the DOM"
  exit 77
fi
if ./conformance/n4c-conformance --table /dev/null 2>&1 | grep -q 'built without jansson'; then
  echo "SKIP: n4c-conformance was built without jansson (no --table)"
  exit 77
fi
rm -rf "$d"
mkdir -p "$d" || exit 99
abs=$(cd "$d" && pwd) || exit 99
trap 'rm -rf "$abs/profile"' EXIT
fail() { echo "not ok: $*  (files in $d)"; exit 1; }

# The reports of the widest committed page (six columns): a table has one
# column per backend, launch and rank count, so not every report at once.
r=$srcdir/docs/conformance
set -- "$r"/ncclsim-2.30.7_sim_2026-11-22_threads-n2.json "$r"/nccl-2.28.3_H200x2_2026-11-22_threads-n2.json \
  "$r"/nccl-2.28.3_H200x2_2026-11-22_mpi-n2.json "$r"/ncclsim-2.30.7_sim_2026-11-22_threads-n4.json \
  "$r"/nccl-2.28.3_H200x4_2026-11-22_threads-n4.json "$r"/nccl-2.28.3_H200x4_2026-11-22_mpi-n4.json
$prog --table "$@" --html "$d/page.html" >"$d/table.md" || fail "--table --html failed (status $?)"

# chromium: as root it needs --no-sandbox; its own profile, not ~/.config.
headless() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --disable-extensions --hide-scrollbars --user-data-dir="$abs/profile" \
    --window-size=$width,$height "$@"
}
headless --screenshot="$abs/page.png" "file://$abs/page.html" >"$d/screenshot.log" 2>&1 ||
  { cat "$d/screenshot.log"; fail "$browser --screenshot failed"; }
headless --dump-dom "file://$abs/page.html" >"$d/dom.html" 2>"$d/dump-dom.log" ||
  { cat "$d/dump-dom.log"; fail "$browser --dump-dom failed"; }

python3 - "$d/page.png" "$d/dom.html" $width $height "$@" <<'PY' || fail "the page did not render as it should"
import json, struct, sys, zlib
from html.parser import HTMLParser

png, dom, width, height, reports = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
errors = []

# The screenshot: a PNG of the window's size whose pixels are not all alike
# (a page that did not load, or loaded blank, gives a uniform image whose
# decompressed scanlines hold a handful of byte values).
data = open(png, 'rb').read()
if data[:8] != b'\x89PNG\r\n\x1a\n':
    errors.append('%s is not a PNG' % png)
else:
    pos, idat, size = 8, b'', None
    while pos + 8 <= len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        if kind == b'IHDR':
            size = struct.unpack('>II', data[pos + 8:pos + 16])
        elif kind == b'IDAT':
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    values = len(set(zlib.decompress(idat)))
    if size != (width, height):
        errors.append('the screenshot is %s, not %dx%d' % (size, width, height))
    if values < 64:
        errors.append('the screenshot looks blank (%d distinct byte values)' % values)
    print('screenshot: %dx%d, %d bytes, %d distinct byte values' % (size + (len(data), values)))

# The DOM Chromium built: rows of <table id="cases">'s body.
class Rows(HTMLParser):
    def __init__(self):
        super().__init__()
        self.depth, self.in_body, self.rows, self.head_cells = 0, False, [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'table' and (self.depth or a.get('id') == 'cases'):
            self.depth += 1
        elif self.depth == 1 and tag == 'tbody':
            self.in_body = True
        elif self.depth == 1 and tag == 'tr' and self.in_body:
            self.rows.append(a.get('id'))
        elif self.depth == 1 and tag == 'th' and not self.in_body:
            self.head_cells += 1
    def handle_endtag(self, tag):
        if tag == 'table' and self.depth:
            self.depth -= 1
        elif tag == 'tbody' and self.depth == 1:
            self.in_body = False

p = Rows()
p.feed(open(dom, encoding='utf-8').read())
ids = []
for r in reports:
    for c in json.load(open(r, encoding='utf-8'))['cases']:
        if c['id'] not in ids:
            ids.append(c['id'])
if len(p.rows) != len(ids):
    errors.append('the table has %d rows, the reports %d cases' % (len(p.rows), len(ids)))
if p.rows != ids:
    errors.append('the rows are not the cases of the reports, once each, in order')
if p.head_cells != len(reports) + 4:
    errors.append('%d header cells, not %d (case, claim, a column per report, agree, why)'
                  % (p.head_cells, len(reports) + 4))
print('DOM: %d rows for the %d cases of %d reports' % (len(p.rows), len(ids), len(reports)))
for e in errors:
    print('not ok:', e)
sys.exit(1 if errors else 0)
PY
rm -rf "$d"
