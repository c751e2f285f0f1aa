#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_merge: stkreport merge on real recordings of profile (cpuwork),
# offcpu and offwake (offwork) captures:
#  - folded(merge(A, B)) is folded(A) + folded(B) line by line (profile:
#    exactly; off-CPU: each line's microseconds within the 1 us that
#    rounding the summed nanoseconds once instead of twice can add, and
#    the rows' episodes and nanoseconds exactly);
#  - merging a capture with itself doubles every line and keeps its stacks
#    (re-interned by content: no more stack records than the capture had);
#  - the output passes zstd -t and stkreport info (verdict OK, exit 0,
#    nothing on stderr), is mode 0600, and its META names the sources;
#  - profile + offcpu, offcpu + offwake, 49 Hz + 99 Hz and -o naming an
#    input are refused with one line, exit 1, and leave -o as it was.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone: merge keeps one kernel symbol per address, and BPF programs
# of recorders running beside it (other tests) load at addresses A and B
# name differently, so an offwake line's frames changed under the merge
# in a parallel make check.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
need_files "$OW"
need_cmds zstd

# Four recordings at once, then two (2 cores: cpuwork runs two in
# parallel, the off-CPU workload sleeps).  cpuwork does a fixed amount of
# work (-n ROUNDS, about 1.5 s of CPU here), not a time a loaded machine
# could leave it without samples; every workload is -- CMD, recorded from
# its first instruction.
"$REC" -q -o "$tmp/pa.stk" -- "$CW" -n 1500 > "$tmp/pa.out" 2>&1 &
p1=$!
"$REC" -q -o "$tmp/pb.stk" -- "$CW" -n 1500 > "$tmp/pb.out" 2>&1 &
p2=$!
"$REC" offcpu -q -o "$tmp/oa.stk" -- "$OW" 1 > "$tmp/oa.out" 2>&1 &
p3=$!
"$REC" offcpu -q -o "$tmp/ob.stk" -- "$OW" 1 > "$tmp/ob.out" 2>&1 &
p4=$!
for p in $p1 $p2 $p3 $p4; do
	wait $p || fail "a recording failed: $(cat "$tmp"/*.out)"
done
# The offwake pair after the others, and one after the other: a waker is
# whatever task a wakeup interrupted, any process on the machine.  Two
# recordings at once see the same short-lived waker, and one may have
# read its maps before it exited while the other could not: merge joins
# one pid of one boot into one process, so the merged rows resolve with
# the maps either had, and folded(merge) was not folded(A) + folded(B).
# Also a waker stack can run through another recorder's BPF program,
# which that recorder unloads when it exits, and the two captures then
# name the JIT address differently (merge keeps one name per kernel
# address: a known limit, see docs/reporting.md, stkreport merge).
"$REC" offwake -q -o "$tmp/wa.stk" -- "$OW" 1 > "$tmp/wa.out" 2>&1 ||
	fail "a recording failed: $(cat "$tmp"/wa.out)"
"$REC" offwake -q -o "$tmp/wb.stk" -- "$OW" 1 > "$tmp/wb.out" 2>&1 ||
	fail "a recording failed: $(cat "$tmp"/wb.out)"
"$REC" -q -F 99 -o "$tmp/p99.stk" -- "$CW" -n 500 > /dev/null 2>&1 ||
	fail "recording at -F 99 failed"

# fsum FILE...: folded lines summed by stack, sorted.
fsum() {
	cat "$@" | awk '{ c = $NF; sub(/ [0-9]+$/, ""); n[$0] += c }
		END { for (k in n) printf "%s %.0f\n", k, n[k] }' | LC_ALL=C sort
}
# Stacks through a BPF program's JIT code ([bpf] frames: a waker inside
# stkrec's own programs) are left out: two recordings load programs at
# the same addresses, so a merge cannot name those frames as both did.
folded() {
	"$REP" -f folded "$1" 2> /dev/null | grep -v ' \[bpf\];' | fsum
}
# merged NAME IN...: merge, checking exit 0, empty stderr, zstd -t, info.
merged() {
	_out=$tmp/$1.stk
	shift
	_in=$(for _f in "$@"; do basename "$_f"; done | tr '\n' ' ')
	"$REP" merge -o "$_out" "$@" > "$tmp/merge.out" 2> "$tmp/merge.err"
	_rc=$?
	check "merge $_in: exit 0 (got $_rc: $(cat "$tmp/merge.err"))" [ "$_rc" -eq 0 ]
	check "merge $_in: stderr empty" [ ! -s "$tmp/merge.err" ]
	check "merge $_in: zstd -t accepts the output" zstd -q -t "$_out"
	"$REP" info "$_out" > "$tmp/info.out" 2> "$tmp/info.err"
	_rc=$?
	check "merge $_in: stkreport info exit 0, verdict OK, stderr empty" \
		sh -c "[ $_rc -eq 0 ] && grep -q '^verdict: OK' '$tmp/info.out' && [ ! -s '$tmp/info.err' ]"
}
# exact A B: the two sorted folded files are the same.
exact() {
	if cmp -s "$2" "$3"; then pass "$1"; else fail "$1"; diff "$2" "$3" | head -n 6; fi
}
# near A B: the same lines, each count of B within 0..N above A's.
near() {
	_n=$4
	awk -v n="$_n" 'NR == FNR { c = $NF; sub(/ [0-9]+$/, ""); a[$0] = c; next }
		{ c = $NF; sub(/ [0-9]+$/, ""); seen[$0] = 1
		  if (!($0 in a)) { bad++; print "only in the second: " $0 " " c }
		  else if (c < a[$0] || c > a[$0] + n) { bad++; print "count " c " vs " a[$0] ": " $0 } }
		END { for (k in a) if (!(k in seen)) { bad++; print "only in the first: " k " " a[k] }
		      exit bad > 0 }' "$2" "$3" > "$tmp/near.out"
	if [ $? -eq 0 ]; then
		pass "$1"
	else
		fail "$1"
		head -n 6 "$tmp/near.out"
	fi
}
# rowsum FILE: episodes and blocked ns of every OFFC row.
rowsum() {
	"$DUMP" "$1" | awk -F'\t' '$1 == "OFFC" { c += $12; ns += $13 } END { printf "%.0f %.0f\n", c, ns }'
}
addpair() {
	echo "$1 $2" | awk '{ printf "%.0f %.0f\n", $1 + $3, $2 + $4 }'
}

# ---- profile ----------------------------------------------------------
merged pab "$tmp/pa.stk" "$tmp/pb.stk"
folded "$tmp/pa.stk" > "$tmp/pa.f"
folded "$tmp/pb.stk" > "$tmp/pb.f"
folded "$tmp/pab.stk" > "$tmp/pab.f"
fsum "$tmp/pa.f" "$tmp/pb.f" > "$tmp/pa+pb.f"
check "profile: folded(A) has cpuwork's leaves" grep -q 'work_a;leaf_a ' "$tmp/pa.f"
exact "profile: folded(merge(A, B)) = folded(A) + folded(B), line by line" "$tmp/pa+pb.f" "$tmp/pab.f"
check "profile: samples of the merge = samples(A) + samples(B)" \
	[ "$(samples "$tmp/pab.stk")" -eq $(($(samples "$tmp/pa.stk") + $(samples "$tmp/pb.stk"))) ]
check "profile: META merged_sources 2" [ "$(meta_of "$tmp/pab.stk" merged_sources)" = 2 ]
uuid=$("$REP" info "$tmp/pb.stk" | sed -n 's/^uuid: //p')
check "profile: META merged_from_1 is B's uuid and path" \
	[ "$(meta_of "$tmp/pab.stk" merged_from_1)" = "$uuid $tmp/pb.stk" ]
check "profile: META mode and frequency kept" \
	[ "$(meta_of "$tmp/pab.stk" mode)" = profile -a "$(meta_of "$tmp/pab.stk" frequency)" = "$(meta_of "$tmp/pa.stk" frequency)" ]
check "the output is mode 0600" [ "$(stat -c %a "$tmp/pab.stk")" = 600 ]

merged paa "$tmp/pa.stk" "$tmp/pa.stk"
awk '{ c = $NF; sub(/ [0-9]+$/, ""); printf "%s %.0f\n", $0, 2 * c }' "$tmp/pa.f" > "$tmp/pa2.f"
folded "$tmp/paa.stk" > "$tmp/paa.f"
exact "profile: merge(A, A) doubles every folded line" "$tmp/pa2.f" "$tmp/paa.f"
st_a=$("$REP" info "$tmp/pa.stk" | sed -n 's/^stacks: //p')
st_aa=$("$REP" info "$tmp/paa.stk" | sed -n 's/^stacks: //p')
# At most A's: a capture may hold the same frames under two ids (a stack
# stkrec unwound from a copy, and the kernel's own of the same frames),
# which the merge interns once; never more (A's stacks twice).
check "profile: merge(A, A) re-interns the stacks: $st_aa stacks, A has $st_a" \
	[ "$st_aa" -le "$st_a" -a "$st_aa" -gt 0 ]
esym_a=$("$REP" info "$tmp/pa.stk" | sed -n 's/^chunks ESYM: //p')
esym_aa=$("$REP" info "$tmp/paa.stk" | sed -n 's/^chunks ESYM: //p')
check "profile: merge(A, A) keeps each embedded image and symbol table once (ESYM: A ${esym_a:-0}, merged ${esym_aa:-0})" \
	[ "${esym_aa:-0}" -eq "${esym_a:-0}" ]

# ---- offcpu, offwake ----------------------------------------------------
for k in o w; do
	kind=$([ $k = o ] && echo offcpu || echo offwake)
	merged ${k}ab "$tmp/${k}a.stk" "$tmp/${k}b.stk"
	check "$kind: META mode $kind" [ "$(meta_of "$tmp/${k}ab.stk" mode)" = $kind ]
	folded "$tmp/${k}a.stk" > "$tmp/${k}a.f"
	folded "$tmp/${k}b.stk" > "$tmp/${k}b.f"
	folded "$tmp/${k}ab.stk" > "$tmp/${k}ab.f"
	fsum "$tmp/${k}a.f" "$tmp/${k}b.f" > "$tmp/${k}a+${k}b.f"
	check "$kind: folded(A) has offwork's threads" grep -q '^ow-waiter;' "$tmp/${k}a.f"
	near "$kind: folded(merge(A, B)) = folded(A) + folded(B) line by line (within 1 us of rounding)" \
		"$tmp/${k}a+${k}b.f" "$tmp/${k}ab.f" 1
	check "$kind: episodes and blocked ns of the rows add up exactly" \
		[ "$(rowsum "$tmp/${k}ab.stk")" = "$(addpair "$(rowsum "$tmp/${k}a.stk")" "$(rowsum "$tmp/${k}b.stk")")" ]
	merged ${k}aa "$tmp/${k}a.stk" "$tmp/${k}a.stk"
	set -- $(rowsum "$tmp/${k}a.stk")
	check "$kind: merge(A, A) doubles the rows' episodes and blocked ns" \
		[ "$(rowsum "$tmp/${k}aa.stk")" = "$(addpair "$1 $2" "$1 $2")" ]
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); printf "%s %.0f\n", $0, 2 * c }' "$tmp/${k}a.f" > "$tmp/${k}a2.f"
	folded "$tmp/${k}aa.stk" > "$tmp/${k}aa.f"
	near "$kind: merge(A, A) doubles every folded line (within 1 us)" "$tmp/${k}a2.f" "$tmp/${k}aa.f" 1
done

# ---- refusals ------------------------------------------------------------
# refused DESC PATTERN IN...: exit 1, one stderr line matching, -o untouched.
refused() {
	_rd=$1 _p=$2
	shift 2
	echo keep > "$tmp/keep.stk"
	"$REP" merge -o "$tmp/keep.stk" "$@" > /dev/null 2> "$tmp/ref.err"
	_rc=$?
	check "$_rd: exit 1 (got $_rc)" [ "$_rc" -eq 1 ]
	check "$_rd: one line: $(cat "$tmp/ref.err")" \
		sh -c "[ \$(wc -l < '$tmp/ref.err') -eq 1 ] && grep -qE -- '$_p' '$tmp/ref.err'"
	check "$_rd: -o left as it was, no temporary file" \
		sh -c "[ \"\$(cat '$tmp/keep.stk')\" = keep ] && ! ls -A '$tmp' | grep -q '^\.keep\.stk\.'"
}
refused "profile + offcpu" "^stkreport merge: .*pa.stk is a profile capture, .*oa.stk an offcpu one: refusing to mix kinds" \
	"$tmp/pa.stk" "$tmp/oa.stk"
refused "offcpu + offwake" "is an offcpu capture, .* an offwake one: refusing to mix kinds" \
	"$tmp/oa.stk" "$tmp/wa.stk"
refused "profiles at different -F" "samples at [0-9]+ Hz, .* at 99 Hz: refusing to merge" \
	"$tmp/pa.stk" "$tmp/p99.stk"
cp "$tmp/pa.stk" "$tmp/keep2.stk"
"$REP" merge -o "$tmp/keep2.stk" "$tmp/pb.stk" "$tmp/keep2.stk" > /dev/null 2> "$tmp/ref.err"
rc=$?
check "-o naming an input: exit 1, one line ($(cat "$tmp/ref.err"))" \
	sh -c "[ $rc -eq 1 ] && grep -q 'is the input' '$tmp/ref.err' && [ \$(wc -l < '$tmp/ref.err') -eq 1 ]"
check "-o naming an input: the input is intact" cmp -s "$tmp/pa.stk" "$tmp/keep2.stk"
"$REP" merge "$tmp/pa.stk" > /dev/null 2>&1
check "merge without -o: usage error, exit 2" [ $? -eq 2 ]

finish
