#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: stkreport diff of real recordings of samples/cpuwork.
#  - base: the default split (leaf_a 60%, leaf_b 30%, leaf_c 10%); new:
#    -s 3,6,1 (30/60/10).  The two changed leaves top the list, leaf_b
#    +30 and leaf_a -30 points, self and total; leaf_c and the shared
#    callers do not change; its only warnings are the captures' own
#    recorded losses (which a loaded machine may cause);
#  - -f folded gives "stack base new", one line per stack of either side,
#    the columns summing to each side's samples;
#  - --fail-if-regress exits 3 and names leaf_b, and exits 0 for two runs
#    of the same split (the noise between those is printed);
#  - a rebuilt cpuwork (an extra function first: every address moves)
#    diffs against the original by name: leaf_b meets itself;
#  - usage errors exit 2.
#
# No luck: each recording is of cpuwork -n ROUNDS, a fixed amount of work
# (-- CMD: recorded from its first instruction), so its sample count is
# what the work took, not what a loaded machine left it.  Every tolerance
# comes from those counts: 4.5 binomial standard deviations of the shares
# the splits give (at least 2 points), and the regression gate's
# threshold is the 4.5-sigma noise of a share between two runs of these
# sizes.  So it needs no machine of its own.
#
# Exit 77 (skipped) when BPF cannot be used here (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
need_cmds cc nm

# About 3 s of CPU here, ~3000 samples at 999 Hz: 4.5 sigma of a 60%
# share is then ~4 points.
ROUNDS=2500
HZ=999

# rec OUT CPUWORK [ARGS...]: record a run of cpuwork.
rec() {
	_out=$1
	shift
	if ! "$REC" -q -F $HZ -o "$_out" -- "$@" >/dev/null 2>"$tmp/rec.err"; then
		fail "stkrec -- $*" "$(cat "$tmp/rec.err")"
		finish
	fi
}

# col TEXT FUNCTION FIELD: a field of FUNCTION's (cpuwork) line of a diff
# text: 1 self change, 2 self base %, 3 self new %, 4 self base samples,
# 5 self new samples, 6 total change, 7 total base %, 8 total new %,
# 9 total base samples, 10 total new samples.
col() {
	awk -v f="$2" -v k="$3" 'NF > 2 && $(NF-1) == f && $NF == "(cpuwork)" { v = $k; sub(/%$/, "", v); print v; exit }' "$1"
}
# near A B D: |A - B| <= D.
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { if (a == "") exit 1; x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }
# nsamples TEXT SIDE: the sample count a diff text gives SIDE (base, new).
nsamples() {
	awk -v s="$2:" '$1 == s { for (i = 2; i < NF; i++) if ($(i + 1) == "samples") print $i }' "$1"
}
# change_ok DESC GOT WANT QB NB QN NN [FLOOR]: a change of GOT points is
# WANT, within 4.5 standard deviations of the difference of two binomial
# shares, QB of NB samples and QN of NN (the shares the splits give, as
# fractions), never under FLOOR points (default 2).
change_ok() {
	_r=$(awk -v g="$2" -v w="$3" -v qb="$4" -v nb="$5" -v qn="$6" -v nn="$7" -v f="${8:-2}" 'BEGIN {
		if (g == "" || nb <= 0 || nn <= 0) { printf "0 1"; exit }
		tol = 100 * 4.5 * sqrt(qb * (1 - qb) / nb + qn * (1 - qn) / nn)
		if (tol < f) tol = f
		d = g - w; if (d < 0) d = -d
		printf "%.1f %d", tol, (d > tol) }')
	_tol=${_r% *}
	if [ "${_r#* }" -eq 0 ]; then
		pass "$1: $2 points ($5 and $7 samples), expected $3 +- $_tol"
	else
		fail "$1: '$2' points ($5 and $7 samples), expected $3 +- $_tol"
	fi
}

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

rec "$tmp/base.stk" "$CW" -n $ROUNDS
rec "$tmp/new.stk" "$CW" -s 3,6,1 -n $ROUNDS
rec "$tmp/base2.stk" "$CW" -n $ROUNDS
rec "$tmp/rebuilt.stk" "$tmp/rebuilt/cpuwork" -s 3,6,1 -n $ROUNDS

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
n_base=$(nsamples "$tmp/diff.txt" base)
n_new=$(nsamples "$tmp/diff.txt" new)
# NAME CHANGE BASE-SHARE NEW-SHARE (shares of all samples, as the splits
# give them).  A leaf's self and total change as its share; a caller's
# self share is ~0, not 0 (a sample can land in run's own loop between
# two calls: at most a point), its total as its leaves'.
for spec in "leaf_b +30 .3 .6" "leaf_a -30 .6 .3" "leaf_c 0 .1 .1" "run 0 1 1" \
	    "work_a -30 .6 .3" "mid_b +30 .3 .6"; do
	set -- $spec
	fn=$1 want=$2 qb=$3 qn=$4
	case $fn in
	leaf_*) change_ok "$fn: self change" "$(col "$tmp/diff.txt" "$fn" 1)" "$want" "$qb" "$n_base" "$qn" "$n_new" ;;
	*) change_ok "$fn: self change" "$(col "$tmp/diff.txt" "$fn" 1)" 0 0 "$n_base" 0 "$n_new" 1 ;;
	esac
	change_ok "$fn: total change" "$(col "$tmp/diff.txt" "$fn" 6)" "$want" "$qb" "$n_base" "$qn" "$n_new"
done
share_ok "leaf_b: share of base" "$(col "$tmp/diff.txt" leaf_b 4)" "$n_base" 30
share_ok "leaf_b: share of new" "$(col "$tmp/diff.txt" leaf_b 5)" "$n_new" 60
# The warnings: exactly those the captures' own loss counters call for.
# A loaded machine can make a recorder lose records (a busy machine's
# mmaps overflowing its ring, STAT mmap_events_lost): diff must say so,
# and say nothing else for two captures of one kind, frequency and kernel.
for side in base new; do
	for sw in "counts_map_full samples dropped (counts map full)" \
		  "stacks_map_full stacks lost (no room: --stack-storage-size)" \
		  "stack_lookup_missing stacks lost before they were written" \
		  "events_lost process events lost" "mmap_events_lost mmap records lost"; do
		v=$(stat_of "$tmp/$side.stk" "${sw%% *}")
		[ "$v" -gt 0 ] && echo "warning: $side: $v ${sw#* }"
	done
done > "$tmp/warn.want"
# A side whose samples lost their stacks (the kernel's ring full, STAT
# samples_stack_lost) also gets "N stack traces could not be displayed".
lost_b=$(stat_of "$tmp/base.stk" samples_stack_lost)
lost_n=$(stat_of "$tmp/new.stk" samples_stack_lost)
grep '^warning' "$tmp/diff.txt" | awk -v lb="$lost_b" -v ln="$lost_n" '
	/^warning: base: [0-9]+ stack traces could not be displayed/ && lb > 0 { next }
	/^warning: new: [0-9]+ stack traces could not be displayed/ && ln > 0 { next }
	{ print }' > "$tmp/warn.got"
if grep -q '^base: .*base.stk: profile, [0-9]* samples in [0-9.]* s, '$HZ' Hz' "$tmp/diff.txt" &&
   grep -q '^new:  .*new.stk: profile, ' "$tmp/diff.txt" && cmp -s "$tmp/warn.want" "$tmp/warn.got"; then
	pass "totals: both captures' samples, durations, frequency; warnings only for the captures' losses ($(wc -l < "$tmp/warn.got"))"
else
	fail "totals" "$(tail -4 "$tmp/diff.txt"; echo "warnings expected:"; cat "$tmp/warn.want")"
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
	want=$(awk -v n="$n" -v s="$secs" -v hz=$HZ 'BEGIN { if (s > 0) printf "%.2f\n", 100 * n / (s * hz) }')
	near "$got" "$want" 0.05 || ok="$side: run $got%, $n samples in $secs s at $HZ Hz is $want%"
done
if [ "$ok" = y ] && grep -q 'samples/s' "$tmp/time.txt"; then
	pass "--normalize=time: run's share is its samples per second / $HZ Hz on both sides"
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
# The threshold: 4.5 standard deviations of the difference of a 50% share
# (the noisiest) between two runs the sizes of base and base2, at least 2
# points; what two runs of one split may differ by.  The regression,
# +30 points give or take its own tolerance, must clear it by far.
n_base2=$("$REP" diff -n 0 "$tmp/base.stk" "$tmp/base2.stk" 2>/dev/null | nsamples /dev/stdin new)
thr=$(awk -v a="$n_base" -v b="$n_base2" 'BEGIN { if (a <= 0 || b <= 0) { print 100; exit }
	t = 100 * 4.5 * sqrt(0.25 * (1 / a + 1 / b)); if (t < 2) t = 2; printf "%.1f\n", t }')
reg_lo=$(awk -v a="$n_base" -v b="$n_new" 'BEGIN { if (a <= 0 || b <= 0) { print 0; exit }
	printf "%.1f\n", 30 - 100 * 4.5 * sqrt(0.21 / a + 0.24 / b) }')
check "gate threshold $thr points ($n_base and $n_base2 samples) under the regression's least, $reg_lo" \
	awk -v t="$thr" -v r="$reg_lo" 'BEGIN { exit !(t < r) }'
"$REP" diff --fail-if-regress "$thr" "$tmp/base.stk" "$tmp/new.stk" >/dev/null 2>"$tmp/gate.err"
rc=$?
if [ "$rc" = 3 ] && grep -q 'regression: leaf_b (cpuwork): total +' "$tmp/gate.err" &&
   ! grep -q 'regression: leaf_a' "$tmp/gate.err"; then
	pass "--fail-if-regress $thr: exit 3, names leaf_b"
else
	fail "--fail-if-regress $thr on the regression: exit $rc" "$(cat "$tmp/gate.err")"
fi
"$REP" diff -n 0 --fail-if-regress "$thr" "$tmp/base.stk" "$tmp/base2.stk" >"$tmp/same.txt" 2>"$tmp/same.err"
rc=$?
noise=$(awk '$1 ~ /^[+-][0-9]/ { for (k = 1; k <= 6; k += 5) { v = $k; if (v < 0) v = -v; if (v > m) m = v } } END { print m + 0 }' "$tmp/same.txt")
if [ "$rc" = 0 ]; then
	pass "--fail-if-regress $thr, two runs of one split: exit 0 (largest change $noise points)"
else
	fail "--fail-if-regress $thr, same split: exit $rc (largest change $noise points)" "$(cat "$tmp/same.err")"
fi

# ---- a rebuilt binary --------------------------------------------------------
"$REP" diff -n 0 "$tmp/new.stk" "$tmp/rebuilt.stk" >"$tmp/rebuilt.txt" 2>"$tmp/rebuilt.err"
n1=$(nsamples "$tmp/rebuilt.txt" base)
n2=$(nsamples "$tmp/rebuilt.txt" new)
check "rebuilt binary: leaf_b on one line, matched by name" \
	[ "$(grep -c ' leaf_b (cpuwork)$' "$tmp/rebuilt.txt")" = 1 ]
share_ok "rebuilt binary: leaf_b's share of the original's run" "$(col "$tmp/rebuilt.txt" leaf_b 9)" "$n1" 60
share_ok "rebuilt binary: leaf_b's share of the rebuilt's run" "$(col "$tmp/rebuilt.txt" leaf_b 10)" "$n2" 60
change_ok "rebuilt binary: leaf_b's total change" "$(col "$tmp/rebuilt.txt" leaf_b 6)" 0 .6 "$n1" .6 "$n2"

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
