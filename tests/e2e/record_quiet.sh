#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_quiet: a profile whose stacks repeat (stkrec -p of cpuwork, two
# threads: no other process comes) lets intervals end without a flush
# (record/engine/recorder.c quiet_tick(), SPEC.md CNTS), yet keeps every
# interval's rows apart, counted in the kernel with their interval:
#  - intervals ended quietly (STAT quiet_intervals), each with a CNTS
#    chunk of its own;
#  - no CNTS chunk covers more than one interval: none (but the last) is
#    longer than the flush interval plus what delayed its end (STAT
#    flush_late_ns_max: a tick that came late) and its flush's steps up
#    to the flip (flush_consume/refresh/collect_ns_max), all measured by
#    the recorder itself; and they come in time order, none starting
#    before the one before it ended;
#  - nothing is lost or counted twice: the CNTS rows add up to STAT
#    samples and none dropped.
# The recording stops once the file says three intervals ended quietly,
# whatever the time that took (the 120 s bound only stops a recorder
# that never gets there).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

bg "$CW" 3600 2
bg "$REC" -q -F 499 -p "$bg_pid" -o "$tmp/q.stk"
rpid=$bg_pid
quiet_3() {
	[ "$(stat_of "$tmp/q.stk" quiet_intervals 2>/dev/null)" -ge 3 ]
}
wait_sampling "$tmp/q.stk" "$rpid" && wait_until quiet_3 ||
	fail "no three quiet intervals in the file ($(stat_of "$tmp/q.stk" quiet_intervals))"
kill -INT "$rpid"
wait "$rpid"
rc=$?
check "stkrec stopped by SIGINT: exit 0 ($rc)" [ "$rc" -eq 0 ]

f=$tmp/q.stk
quiet=$(stat_of "$f" quiet_intervals)
flushes=$(stat_of "$f" flushes)
check "intervals ended without a flush (quiet_intervals $quiet, flushes $flushes)" \
	[ "$quiet" -ge 3 -a "$flushes" -ge 1 ]

# The longest CNTS chunk against the longest an interval can be.
ival=$(meta_of "$f" flush_interval_ns)
late=$(stat_of "$f" flush_late_ns_max)
steps=$(($(stat_of "$f" flush_consume_ns_max) + $(stat_of "$f" flush_refresh_ns_max) +
	$(stat_of "$f" flush_collect_ns_max)))
"$DUMP" "$f" > "$f.dump"
# The last chunk is left out: its interval ended with the recording (the
# stop may come when an end is due too).
set -- $(awk -F'\t' '$1 == "CHUNK" && $3 == "CNTS" {
		if (n++ && d > max) max = d
		d = $5 - $4
		if (prev && $4 < prev) back++
		prev = $5
	}
	END { printf "%d %.0f %d\n", n, max, back + 0 }' "$f.dump")
nchunks=$1 longest=$2 back=$3
check "CNTS chunks: at least one per interval ended quietly ($nchunks chunks, $quiet quiet)" \
	[ "$nchunks" -gt "$quiet" ]
check "no CNTS chunk longer than an interval: longest $longest ns <= $ival + late $late + flush steps $steps" \
	[ "$longest" -gt 0 -a "$longest" -le $((ival + late + steps)) ]
check "CNTS chunks in time order, none overlapping the one before ($back)" [ "$back" -eq 0 ]

rows=$(samples "$f")
total=$(stat_of "$f" samples)
check "the CNTS rows add up to STAT samples ($rows rows, $total samples)" \
	[ "$rows" -eq "$total" -a "$total" -gt 0 ]
check "no sample dropped ($(stat_of "$f" counts_map_full) counts_map_full)" \
	[ "$(stat_of "$f" counts_map_full)" -eq 0 ]

finish
