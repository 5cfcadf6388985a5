#!/bin/sh
# make check: the argument of every ALWAYS() and NEVER() in lib/ and sim/
# calls no function. Coverage builds (--enable-coverage) replace the
# markers by their believed constant and drop the argument (config.h), so a
# call inside one runs in every build but that one: a coverage build once
# sent puts across hosts with an uninitialised remote key because the call
# that filled it sat inside NEVER(). A call is a name followed by "(".
# Run from any directory; reads the sources next to this script.
top=$(cd "$(dirname "$0")/.." && pwd)
bad=$(find "$top/lib" "$top/sim" -name '*.[ch]' -exec perl -ne '
  next if /^\s*#/;
  while (/\b(ALWAYS|NEVER)\(/g) {
    my ($i, $d, $arg) = (pos, 1, "");
    while ($i < length && $d > 0) {
      my $c = substr($_, $i++, 1);
      $d++ if $c eq "(";
      $d-- if $c eq ")";
      $arg .= $c if $d > 0;
    }
    print "$ARGV:$.: $arg\n" if $arg =~ /[A-Za-z_]\w*\s*\(/;
  }
  close ARGV if eof;
' {} +)
if test -n "$bad"; then
  echo "FAIL: a function called inside ALWAYS()/NEVER(), which coverage builds drop:"
  echo "$bad"
  exit 1
fi
echo "ok: no ALWAYS()/NEVER() argument calls a function"
