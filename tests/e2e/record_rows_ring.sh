#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_rows_ring: the rows of samples that sent a new stack, or whose
# key was not counted lately, go to user space through the profile mode's
# "rows_ring" (count 1 each), not the counts map (bpf/profile.bpf.c);
# tests/unwind/stackfan makes new stacks all the time.  stkrec -F 999 --flush-interval 0.05 -p stackfan:
#  - rows came by the ring (STAT counts_ring_rows), at least one per stack
#    the kernel sent less those of samples whose other stack was known, so
#    > 0; no sample was dropped (counts_map_full 0);
#  - every sample is counted exactly once: the CNTS rows add up to STAT
#    samples, and every STAT's samples are the rows before it plus
#    counts_map_full (SPEC.md STAT), over dozens of flushes: a ring row
#    lands in its interval's flush, the STAT of the same set;
#  - the recorder stopped (SIGSTOP) until stackfan has run long enough to
#    fill the ring twice over (its rows sized as stkrec sizes it: at
#    least 64 KiB, 744 rows of 88 bytes) at the first part's share
#    of ring rows, the ring is not taken and fills: its rows then go to
#    the counts map (STAT counts_ring_full), none lost, the same sums
#    hold.  (If stackfan gets too little CPU for that in 120 s, that is
#    said, not failed.)
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
FAN=$O/tests/unwind/stackfan
need_files "$FAN"

# rows_sum FILE.dump: "STATS BAD FIRST_BAD": STAT chunks, those whose
# samples are not the CNTS rows before them + counts_map_full.
rows_sum() {
	awk -F'\t' '
	function end_stat() {
		nstat++
		if (s != rows + full) { bad++; if (!shown) shown = s "!=" rows "+" full }
	}
	$1 == "CHUNK" { if (instat) end_stat(); instat = $3 == "STAT"; s = full = 0 }
	$1 == "CNTS" { rows += $NF }
	instat && $1 == "STAT" && $2 == "samples" { s = $3 }
	instat && $1 == "STAT" && $2 == "counts_map_full" { full = $3 }
	END { if (instat) end_stat(); printf "%d %d %s\n", nstat, bad + 0, shown ? shown : "-" }' "$1"
}

# sums_hold FILE.stk MIN_STATS: none dropped, the CNTS rows add up to STAT
# samples, and every STAT's samples are the rows before it plus
# counts_map_full (at least MIN_STATS STAT chunks).  Leaves the total in
# $total.
sums_hold() {
	"$DUMP" "$1" > "$1.dump"
	counts_whole "$1"
	set -- $(rows_sum "$1.dump") "$2"
	check "every STAT's samples are the rows before it + counts_map_full: $2 of $1 differ ($3)" \
		[ "$1" -ge "$4" -a "$2" -eq 0 ]
}

ncpu=$(nproc)
# The rows ring's room, as record/modes/modeobj.c sizes it: two flush
# intervals of 88-byte rows at -F on every online CPU, in a power of two
# of bytes, 64 KiB at least.
ring_rows=$(awk -v c="$(getconf _NPROCESSORS_ONLN)" 'BEGIN {
	want = 999 * c * 88 * 2 * 0.05; n = 65536
	while (n < want) n *= 2
	printf "%d\n", n / 88 }')
bg "$FAN" 3600 "$ncpu"
fan=$bg_pid

# ---- steady: the ring carries the new stacks' rows --------------------------
"$REC" -q -F 999 --flush-interval 0.05 -p "$fan" -o "$tmp/a.stk" 3 > "$tmp/a.err" 2>&1
rc=$?
check "stkrec -p stackfan 3: exit 0 ($rc: $(cat "$tmp/a.err"))" [ "$rc" -eq 0 ]
sums_hold "$tmp/a.stk" 10
ring=$(stat_of "$tmp/a.stk" counts_ring_rows)
check "rows came by the ring ($ring of $total samples; $(stat_of "$tmp/a.stk" stacks_stored) stacks sent)" \
	[ "$ring" -gt 0 -a "$ring" -le "$total" ]
total_a=$total

# ---- a full ring: the counts map takes the rows ------------------------------
bg "$REC" -q -F 999 --flush-interval 0.05 -p "$fan" -o "$tmp/b.stk" 2> "$tmp/b.err"
rec=$bg_pid
wait_sampling "$tmp/b.stk" "$rec" || fail "stkrec starts sampling ($(cat "$tmp/b.err"))"
sleep 0.5
# Stopped until stackfan has run the ticks in which it sends, at the first
# part's share of ring rows, twice the rows the ring holds (120 s at
# most: wait_until's bound).
tck=$(getconf CLK_TCK)
need=$((2 * ring_rows * total_a * tck / (999 * (ring > 0 ? ring : 1)) + 1))
fan_ran() {
	[ $(($(cpu_ticks "$fan") - t0)) -ge "$need" ]
}
t0=$(cpu_ticks "$fan")
kill -STOP "$rec"
sleep 0.2
wait_until fan_ran
kill -CONT "$rec"
t1=$(cpu_ticks "$fan")
sleep 0.5
kill -INT "$rec"
wait "$rec"
rc=$?
check "stopped and continued: exit 0 ($rc: $(cat "$tmp/b.err"))" [ "$rc" -eq 0 ]
full=$(stat_of "$tmp/b.stk" counts_ring_full)
# stackfan's samples while stopped: about 999 / CLK_TCK a tick, of which
# the first part's share sent a new stack: twice the rows the ring
# holds are sure to fill it.
fan_samples=$(((t1 - t0) * 999 / tck))
if [ $((fan_samples * ring)) -ge $((2 * ring_rows * total_a)) ]; then
	check "the full ring's rows went to the counts map ($full; ~$fan_samples samples while stopped)" \
		[ "$full" -gt 0 ]
else
	echo "note: stackfan ran $((t1 - t0)) ticks while the recorder was stopped: the ring may not have filled ($full rows to the counts map)"
fi
sums_hold "$tmp/b.stk" 1
stop "$fan"
finish
