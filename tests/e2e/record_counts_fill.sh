#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_counts_fill: a quiet stretch (record/engine/recorder_loop.c
# plan_next_flush(): the counts stay in the kernel for several intervals
# while the last ones brought few keys) ends when a burst of new keys fills
# half the counts map, not when the map is full:
#  - threadchurn's eight threads spin in place (few keys: stretches are
#    planned); right after a flush, it is told to spin in a new thread
#    each millisecond (nearly every sample a key of its own: 2 CPUs at
#    999 Hz fill the 8192-entry map's half in about two seconds, within
#    a sixteen-interval stretch; eight threads keep most of the CPUs on a
#    machine that runs other work), then back after the next flush; again
#    until the kernel has said three times that a map was half full (STAT
#    counts_half_full: each drain clears the map's count of new keys, so
#    that the kernel tells again; a burst after a flush that planned no
#    stretch, as the one after start-up or after a burst, is a round
#    without it);
#  - nothing dropped (STAT counts_map_full 0), the CNTS rows add up to
#    STAT samples.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

TC=$O/tests/tools/threadchurn
bg "$TC" 8
tc=$bg_pid
wait_until is_comm "$tc" threadchurn || fail "threadchurn never started"
f=$tmp/c.stk
bg "$REC" -q -F 999 -p "$tc" -o "$f"
rpid=$bg_pid
wait_sampling "$f" "$rpid" || fail "stkrec did not start: $(tail -1 "$tmp/err" 2>/dev/null)"

flushed_since() {
	[ "$(stat_of "$f" flushes 2>/dev/null)" -gt "$1" ]
}
rounds=0
while [ "$rounds" -lt 20 ]; do
	rounds=$((rounds + 1))
	n=$(stat_of "$f" flushes)
	wait_until flushed_since "$n" || fail "no flush after $n"
	kill -USR1 "$tc"
	n=$(stat_of "$f" flushes)
	wait_until flushed_since "$n" || fail "no flush after $n"
	kill -USR2 "$tc"
	[ "$(stat_of "$f" counts_half_full)" -ge 3 ] && break
done
kill -INT "$rpid"
wait "$rpid"
rc=$?
check "stkrec stopped by SIGINT: exit 0 ($rc)" [ "$rc" -eq 0 ]

half=$(stat_of "$f" counts_half_full)
[ "$half" -ge 3 ] || echo "note: samples $(stat_of "$f" samples), flushes $(stat_of "$f" flushes), quiet intervals $(stat_of "$f" quiet_intervals)"
check "the kernel said a counts map was half full, again after drains ($half times, $rounds bursts)" \
	[ "$half" -ge 3 ]
counts_whole "$f"
check "quiet intervals went by ($(stat_of "$f" quiet_intervals))" \
	[ "$(stat_of "$f" quiet_intervals)" -ge 1 ]

finish
