#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_slice: --since/--until on a recording of cpuwork -p 8, which runs
# only leaf_a for 4 s and then only leaf_b for 4 s:
#  - --until 3 shows leaf_a and no leaf_b, --since 6 leaf_b and no leaf_a
#    (the intervals around the switch, which comes a little after 4 s as
#    the command starts after the capture, are left out of both);
#  - --until T and --since T split the capture: their folded lines add up
#    to the whole one's, line by line (every interval in exactly one);
#  - text and pprof take the slice too; info prints the timeline, one line
#    per second with a bar, and with a slice its total and lines only;
#  - a merged capture is sliced at the same offset of every source;
#  - bad seconds and an empty slice are usage errors (exit 2).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

"$REC" -q -o "$tmp/p.stk" -- "$CW" -p 8 > "$tmp/rec.out" 2>&1
rc=$?
check "record cpuwork -p 8: exit 0 (got $rc: $(cat "$tmp/rec.out"))" [ "$rc" -eq 0 ]

fsum() {
	cat "$@" | awk '{ c = $NF; sub(/ [0-9]+$/, ""); n[$0] += c }
		END { for (k in n) printf "%s %.0f\n", k, n[k] }' | LC_ALL=C sort
}
# folded FILE OPTS...: the folded report, summed by line.
folded() {
	_f=$1
	shift
	"$REP" -f folded "$@" "$_f" 2> "$tmp/rep.err" | fsum
}

folded "$tmp/p.stk" --until 3 > "$tmp/first.f"
folded "$tmp/p.stk" --since 6 > "$tmp/second.f"
a1=$(awk '/;leaf_a( |;)/ { n += $NF } END { print n + 0 }' "$tmp/first.f")
b1=$(awk '/;leaf_b( |;)/ { n += $NF } END { print n + 0 }' "$tmp/first.f")
a2=$(awk '/;leaf_a( |;)/ { n += $NF } END { print n + 0 }' "$tmp/second.f")
b2=$(awk '/;leaf_b( |;)/ { n += $NF } END { print n + 0 }' "$tmp/second.f")
echo "     --until 3: leaf_a $a1, leaf_b $b1; --since 6: leaf_a $a2, leaf_b $b2"
check "--until 3: leaf_a ($a1 samples) and no leaf_b ($b1)" [ "$a1" -gt 0 -a "$b1" -eq 0 ]
check "--since 6: leaf_b ($b2 samples) and no leaf_a ($a2)" [ "$b2" -gt 0 -a "$a2" -eq 0 ]

folded "$tmp/p.stk" > "$tmp/all.f"
folded "$tmp/p.stk" --until 4.5 > "$tmp/u.f"
folded "$tmp/p.stk" --since 4.5 > "$tmp/s.f"
fsum "$tmp/u.f" "$tmp/s.f" > "$tmp/us.f"
check "--until 4.5 + --since 4.5 = the whole capture, line by line" cmp -s "$tmp/all.f" "$tmp/us.f"
folded "$tmp/p.stk" --since 1 --until 2 > "$tmp/one.f"
n1=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/one.f")
tl1=$("$REP" info "$tmp/p.stk" | sed -n 's/^timeline 1-2 s: \([0-9]*\) samples.*/\1/p')
check "--since 1 --until 2: the samples of info's line 1-2 s ($n1, info ${tl1:-none})" [ "$n1" = "${tl1:-x}" ]

"$REP" --until 3 "$tmp/p.stk" > "$tmp/text.out" 2> /dev/null
check "text --until 3: exit 0, leaf_a and no leaf_b" \
	sh -c "[ $? -eq 0 ] && grep -q '^    leaf_a$' '$tmp/text.out' && ! grep -q 'leaf_b' '$tmp/text.out'"
"$REP" -f pprof -o "$tmp/p.pb.gz" --since 6 "$tmp/p.stk" 2> /dev/null
rc=$?
check "pprof --since 6: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "pprof --since 6: names leaf_b, not leaf_a" \
	sh -c "zcat '$tmp/p.pb.gz' | grep -qa leaf_b && ! zcat '$tmp/p.pb.gz' | grep -qa leaf_a"

# ---- info's timeline -------------------------------------------------------
"$REP" info "$tmp/p.stk" > "$tmp/info.out" 2> "$tmp/info.err"
rc=$?
check "info: exit 0 (got $rc), stderr empty" [ "$rc" -eq 0 -a ! -s "$tmp/info.err" ]
check "info: timeline heading" grep -qx 'timeline: 1 s per line, from the segment start' "$tmp/info.out"
check "info: a timeline line for 2-3 s with a bar" grep -qE '^timeline 2-3 s: [0-9]+ samples #+$' "$tmp/info.out"
nl=$(grep -c '^timeline [0-9]' "$tmp/info.out")
check "info: 8 to 10 timeline lines for 8 s ($nl)" within "$nl" 8 10
tl=$(awk '/^timeline [0-9]/ { n += $4 } END { print n + 0 }' "$tmp/info.out")
check "info: the timeline's samples are all the samples ($tl)" [ "$tl" -eq "$(samples "$tmp/p.stk")" ]
"$REP" info --since 6 "$tmp/p.stk" > "$tmp/info4.out" 2>&1
s4=$(sed -n 's/^slice: 6.000 s to the end: \([0-9]*\) samples$/\1/p' "$tmp/info4.out")
all4=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/second.f")
check "info --since 6: slice line with the report's samples (${s4:-none}, report $all4)" [ "${s4:-x}" = "$all4" ]
check "info --since 6: no timeline line before 6 s" \
	sh -c "! grep -qE '^timeline [0-5]-' '$tmp/info4.out' && grep -qE '^timeline 6-7 s' '$tmp/info4.out'"

# ---- a merged capture: every source from 0 -----------------------------------
"$REP" merge -o "$tmp/pp.stk" "$tmp/p.stk" "$tmp/p.stk" 2> "$tmp/merge.err"
folded "$tmp/pp.stk" --until 3 > "$tmp/pp_first.f"
awk '{ c = $NF; sub(/ [0-9]+$/, ""); printf "%s %.0f\n", $0, 2 * c }' "$tmp/first.f" > "$tmp/first2.f"
check "merge(P, P) --until 3 is twice P --until 3" cmp -s "$tmp/first2.f" "$tmp/pp_first.f"

# ---- usage errors -------------------------------------------------------------
for bad in abc -1 1e3 "" 2.5.1; do
	"$REP" --since "$bad" "$tmp/p.stk" > /dev/null 2> "$tmp/bad.err"
	rc=$?
	check "--since '$bad': exit 2 (got $rc), one line" [ "$rc" -eq 2 -a "$(wc -l < "$tmp/bad.err")" -eq 1 ]
done
"$REP" --since 3 --until 2 "$tmp/p.stk" > /dev/null 2>&1
check "--since 3 --until 2: exit 2" [ $? -eq 2 ]
"$REP" info --since x "$tmp/p.stk" > /dev/null 2>&1
check "info --since x: exit 2" [ $? -eq 2 ]

finish
