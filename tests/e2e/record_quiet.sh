#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_quiet: a profile whose stacks repeat (stkrec -p of cpuwork, two
# threads: no other process comes) lets intervals end without a flush
# (record/engine/recorder_loop.c plan_next_flush(), SPEC.md CNTS), yet keeps every
# interval's rows apart, counted in the kernel with their interval:
#  - intervals ended quietly (STAT quiet_intervals), each with a CNTS
#    chunk of its own;
#  - every CNTS chunk (but the last, which ends with the recording) lies
#    inside one interval of the grid the kernel counts on (from the start
#    of sampling, --flush-interval apart; a flush splits the interval it
#    comes in), some whole, in time order;
#  - nothing is lost or counted twice: the CNTS rows add up to STAT
#    samples and none dropped.
# The recording stops once the file says three intervals ended quietly,
# whatever the time that took (the 120 s bound only stops a recorder
# that never gets there).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

bg "$CW" 3600 2
cw=$bg_pid
# Its exec done: the rows of a replaced image would have chunks of their own.
wait_until is_comm "$cw" cpuwork || fail "cpuwork never started"
bg "$REC" -q -F 499 -p "$cw" -o "$tmp/q.stk"
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

# The CNTS chunks against the grid of intervals: the first one's start
# (cpuwork runs from before the recording) and the interval.  NC chunks,
# OFF of them (but the last, which ends with the recording) not inside one
# interval of the grid (a flush splits the one it falls in; a row a
# program left uncommitted past a flush comes in a chunk of no length at
# the next), BACK of them
# starting before the one before ended, WHOLE of them one whole interval.
ival=$(meta_of "$f" flush_interval_ns)
"$DUMP" "$f" > "$f.dump"
set -- $(awk -F'\t' -v iv="$ival" '
	function cell(t) { return int((t - a[1]) / iv) }
	$1 == "CHUNK" && $3 == "CNTS" { a[++n] = $4; z[n] = $5 }
	END {
		for (i = 1; i <= n; i++) {
			if (i > 1 && a[i] < z[i - 1]) back++
			if (i == n) break
			if (z[i] - a[i] == iv && (a[i] - a[1]) % iv == 0) whole++
			else if (z[i] > a[i] && cell(a[i]) != cell(z[i] - 1)) off++
		}
		printf "%d %d %d %d\n", n, off + 0, back + 0, whole + 0
	}' "$f.dump")
nchunks=$1 off=$2 back=$3 whole=$4
check "CNTS chunks: more than the intervals that ended quietly ($nchunks chunks, $quiet quiet)" \
	[ "$nchunks" -gt "$quiet" ]
check "each CNTS chunk (but the last) inside one interval of the grid: $off of $nchunks not" [ "$off" -eq 0 ]
check "... and those of the intervals that ended quietly whole ($whole whole)" [ "$whole" -ge 1 ]
check "CNTS chunks in time order, none before the one before it ($back)" [ "$back" -eq 0 ]

counts_whole "$f"

finish
