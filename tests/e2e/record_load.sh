#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_load: the load run of make bench, shorter.  tests/unwind/stackfan
# (16384 call paths, more distinct stacks with the leaves' sampled
# instructions) on every CPU, stkrec at 999 Hz system-wide for 8 s with a
# stacks set of 8192 ids:
#  - it holds well over 10,000 distinct stacks, more than the set, so the
#    kernel evicts ids and sends those stacks again;
#  - its RSS is flat after the first intervals (sampled every 0.5 s: the
#    last reading within 25 % + 4 MiB of the one at 3 s);
#  - nothing is lost but what STAT counts: the report holds every counted
#    sample, and the samples shown with a [Missed User Stack] or [Missed
#    Kernel Stack] (as profile.py marks them) are exactly
#    samples_stack_lost.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
FAN=$O/tests/unwind/stackfan
need_files "$FAN"

ncpu=$(nproc)
bg "$FAN" 11 "$ncpu"
sleep 0.5
"$REC" -q -F 999 --stack-storage-size 8192 -o "$tmp/l.stk" 8 2> "$tmp/l.err" &
rec=$!
# VmRSS in KiB every 0.5 s while it runs, "SECONDS*2 KIB" per line.
i=0
while kill -0 "$rec" 2>/dev/null; do
	r=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$rec/status" 2>/dev/null)
	[ -n "$r" ] && echo "$i $r" >> "$tmp/rss"
	i=$((i + 1))
	sleep 0.5
done
wait "$rec"
rc=$?
check "stkrec exits 0 ($rc: $(cat "$tmp/l.err"))" [ "$rc" -eq 0 ]

written=$(stat_of "$tmp/l.stk" stacks_written)
check "over 10,000 distinct stacks written ($written), the set overflowed and stacks came again ($(stat_of "$tmp/l.stk" stacks_resent))" \
	[ "$written" -gt 10000 -a "$(stat_of "$tmp/l.stk" stacks_resent)" -gt 0 ]

# The reading at 3 s (i = 6) against the last one and the largest after it.
awk '$1 == 6 { at3 = $2 } $1 >= 6 { last = $2; if ($2 > max) max = $2 }
	END { printf "%d %d %d\n", at3, last, max }' "$tmp/rss" > "$tmp/rss.sum"
read -r at3 last max < "$tmp/rss.sum"
check "RSS flat after the first intervals (${at3} KiB at 3 s, ${last} KiB at the end, at most ${max} KiB)" \
	[ "$at3" -gt 0 -a "$max" -le $((at3 + at3 / 4 + 4096)) ]

total=$(stat_of "$tmp/l.stk" samples)
lost=$(stat_of "$tmp/l.stk" samples_stack_lost)
"$REP" -f folded "$tmp/l.stk" > "$tmp/l.folded" 2> /dev/null
awk '{ n = $NF; all += n; if ($0 ~ /;\[Missed (User|Kernel) Stack\]/) missed += n }
	END { printf "%d %d\n", all, missed }' "$tmp/l.folded" > "$tmp/l.sum"
read -r all missed < "$tmp/l.sum"
check "the report holds every counted sample ($all of $total, at 999 Hz on $ncpu CPUs)" \
	[ "$all" -eq "$total" -a "$total" -gt $((ncpu * 999 * 8 / 2)) ]
check "the samples shown with a [Missed ... Stack] are the counted losses ($missed, samples_stack_lost $lost)" \
	[ "$missed" -eq "$lost" ]
check "no sample lost for want of counts entries ($(stat_of "$tmp/l.stk" counts_map_full))" \
	[ "$(stat_of "$tmp/l.stk" counts_map_full)" -eq 0 ]
finish
