#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_sideband: stkrec -- CMD follows CMD's new processes through the
# perf side-band without waking for each one (record/procs/mmapwatch.c:
# its records wake the loop once a quarter of a CPU's ring waits; a
# process's first sample reads them first, as every flush does), yet
# loses none of them:
#  - 150 rounds of two short processes (/bin/true, then a sleep of 10 ms
#    that keeps the rounds apart): the side-band woke the loop fewer
#    than 50 times (STAT loop_sideband_wakes; at each process's first
#    record, as before, it was at least once a round, 150+);
#  - every one of them was seen (STAT mmap_event_execs counts the 300
#    execs and more), no record lost.
# (unwind_shortlived and record_shortlived check that the samples of such
# processes keep their maps and whole stacks.)
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

"$REC" -q -F 999 -o "$tmp/s.stk" -- sh -c \
	'i=0; while [ $i -lt 150 ]; do /bin/true; sleep 0.01; i=$((i + 1)); done' \
	> "$tmp/out" 2> "$tmp/err"
rc=$?
check "stkrec -- sh (300 short processes) exits 0 ($rc: $(tail -1 "$tmp/err"))" [ "$rc" -eq 0 ]

f=$tmp/s.stk
wakes=$(stat_of "$f" loop_sideband_wakes)
all=$(stat_of "$f" loop_wakes)
execs=$(stat_of "$f" mmap_event_execs)
check "the side-band woke the loop fewer than 50 times for 300 processes ($wakes of $all wakes)" \
	[ "$wakes" -lt 50 -a "$all" -gt 0 ]
check "every exec was seen ($execs >= 300)" [ "$execs" -ge 300 ]
check "no side-band record lost ($(stat_of "$f" mmap_events_lost))" \
	[ "$(stat_of "$f" mmap_events_lost)" -eq 0 ]

finish
