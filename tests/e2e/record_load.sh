#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_load: the load run of make bench, shorter.  tests/unwind/stackfan
# (16384 call paths, more distinct stacks with the leaves' sampled
# instructions) on every CPU until the test stops it, stkrec at 999 Hz
# on it (-p: what else the machine runs -- a compiler's symbol tables, new
# binaries' unwind tables -- would grow the recorder's RSS by tens of MB
# and say nothing of its stacks) with a stacks set of 8192 ids, stopped
# (SIGINT) once its STAT
# says it has written over 10,000 distinct stacks and sent some again, and
# it has flushed 4 times more since the first RSS reading with 4096 stacks
# written (the baseline below: with many CPUs the first flush may already
# hold 10,000, and a baseline needs later readings): how long that takes is
# the machine's business, what is asserted is not:
#  - it holds well over 10,000 distinct stacks, more than the set, so the
#    kernel evicts ids and sends those stacks again;
#  - its RSS is flat after the first intervals (sampled every 0.5 s from
#    the first reading whose STAT says 4096 stacks written, half the set,
#    to the end, at least 4 flushes later: the median of the later half of
#    the readings within 25 % + 4 MiB of that first one, none above twice
#    it + 8 MiB);
#  - nothing is lost but what STAT counts: the report holds every counted
#    sample, stackfan has at least half the samples its CPU time while
#    sampled gives at 999 Hz, and the samples shown with a [Missed User
#    Stack] or [Missed Kernel Stack] (as profile.py marks them) are exactly
#    samples_stack_lost.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
FAN=$O/tests/unwind/stackfan
need_files "$FAN"

ncpu=$(nproc)
# Until stopped: an hour only bounds a test that dies without its trap.
bg "$FAN" 3600 "$ncpu"
fan=$bg_pid
bg "$REC" -q -F 999 --stack-storage-size 8192 -p "$fan" -o "$tmp/l.stk" 2> "$tmp/l.err"
rec=$bg_pid
wait_sampling "$tmp/l.stk" "$rec" || fail "stkrec starts sampling ($(cat "$tmp/l.err"))"
t0=$(cpu_ticks "$fan")

# Every 0.5 s: VmRSS in KiB with the stacks written and resent by the last
# flush and the flushes so far ("KIB WRITTEN RESENT FLUSHES" per line),
# until the recorder has seen enough: over 10,000 stacks written, some
# resent, and 4 flushes after the baseline reading (the first with 4096
# written), so that the RSS check has readings after it whatever the
# machine's size (the 240 readings, 120 s, only bound a broken recorder).
i=0 written=0 resent=0 flushes=0 base_flushes=
while kill -0 "$rec" 2>/dev/null && [ $i -lt 240 ]; do
	r=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$rec/status" 2>/dev/null)
	"$DUMP" "$tmp/l.stk" 2>/dev/null | awk -F'\t' '$1 == "STAT" { v[$2] = $3 }
		END { printf "%.0f %.0f %.0f\n", v["stacks_written"], v["stacks_resent"], v["flushes"] }' > "$tmp/now"
	read -r written resent flushes < "$tmp/now"
	if [ -n "$r" ]; then
		echo "$r $written $resent $flushes" >> "$tmp/rss"
		# The baseline: the same rule as the RSS check's below.
		[ -z "$base_flushes" ] && [ "$written" -ge 4096 ] && base_flushes=$flushes
	fi
	[ "$written" -gt 10000 ] && [ "$resent" -gt 0 ] && [ -n "$base_flushes" ] &&
		[ "$flushes" -ge $((base_flushes + 4)) ] && break
	i=$((i + 1))
	sleep 0.5
done
t1=$(cpu_ticks "$fan")
kill -INT "$rec"
wait "$rec"
rc=$?
check "stkrec exits 0 ($rc: $(cat "$tmp/l.err"))" [ "$rc" -eq 0 ]
stop "$fan"
# Without a baseline no flush count is enough.
want_flushes=$((${base_flushes:-1000000000} + 4))
check "stopped once over 10,000 stacks were written ($written) and some came again ($resent) by a flush, $flushes flushes (want $want_flushes: 4 after the baseline)" \
	[ "$written" -gt 10000 -a "$resent" -gt 0 -a "$flushes" -ge "$want_flushes" ]

written=$(stat_of "$tmp/l.stk" stacks_written)
check "over 10,000 distinct stacks written ($written), the set overflowed and stacks came again ($(stat_of "$tmp/l.stk" stacks_resent))" \
	[ "$written" -gt 10000 -a "$(stat_of "$tmp/l.stk" stacks_resent)" -gt 0 ]

# The first reading with half the set written against every later one: a
# leak shows in the last readings (the median of the second half of them
# within 25 % + 4 MiB of the baseline); a transient (the recorder starved
# by a busy machine, then a flush holding more: once +20 MiB that fell back
# before the end) is only bounded, at twice the baseline + 8 MiB.
awk '!base && $2 >= 4096 { base = $1; n = NR; next } base { r[++k] = $1; if ($1 > max) max = $1 }
	END {
		m = 0
		if (k) {
			h = int((k + 1) / 2); j = 0
			for (i = h; i <= k; i++) t[++j] = r[i]
			for (i = 2; i <= j; i++) { v = t[i]; for (x = i - 1; x >= 1 && t[x] > v; x--) t[x + 1] = t[x]; t[x + 1] = v }
			m = t[int((j + 1) / 2)]
		}
		printf "%d %d %d %d\n", base, m, max, k }' "$tmp/rss" > "$tmp/rss.sum"
read -r base late max later < "$tmp/rss.sum"
check "RSS flat after the first intervals (${base} KiB at 4096 stacks written, ${late} KiB the median of the later half, at most ${max} KiB over $later readings)" \
	[ "$base" -gt 0 -a "$later" -gt 0 -a "$late" -le $((base + base / 4 + 4096)) -a "$max" -le $((base * 2 + 8192)) ]

total=$(stat_of "$tmp/l.stk" samples)
lost=$(stat_of "$tmp/l.stk" samples_stack_lost)
"$REP" -f folded "$tmp/l.stk" > "$tmp/l.folded" 2> /dev/null
awk '{ n = $NF; all += n; if ($0 ~ /;\[Missed (User|Kernel) Stack\]/) missed += n }
	END { printf "%d %d\n", all, missed }' "$tmp/l.folded" > "$tmp/l.sum"
read -r all missed < "$tmp/l.sum"
check "the report holds every counted sample ($all of $total)" \
	[ "$all" -eq "$total" -a "$total" -gt 0 ]
# stackfan's CPU time was read after sampling began and before it ended:
# each tick of it is sampled about 999 / CLK_TCK times (half, for a late
# timer or a tick's accounting).
fans=$(samples "$tmp/l.stk" "$fan")
want=$(((t1 - t0) * 999 / $(getconf CLK_TCK)))
check "stackfan's samples are those of its CPU time at 999 Hz ($fans samples, $((t1 - t0)) ticks: ~$want)" \
	[ "$want" -gt 0 -a "$fans" -ge $((want / 2)) ]
check "the samples shown with a [Missed ... Stack] are the counted losses ($missed, samples_stack_lost $lost)" \
	[ "$missed" -eq "$lost" ]
check "no sample lost for want of counts entries ($(stat_of "$tmp/l.stk" counts_map_full))" \
	[ "$(stat_of "$tmp/l.stk" counts_map_full)" -eq 0 ]
finish
