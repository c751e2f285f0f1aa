#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_sample_truth: the samples of a profile capture against the
# kernel's own count of the sample periods its cpu-clock events elapsed
# (read() of each event: the time it ran, / the period), carried to the
# file as STAT cpu_clock_periods:
#  - the capture has cpu_clock_periods, and the program never ran more
#    often than the events elapsed periods (one per CPU of slack: the
#    count is read just before the programs are detached);
#  - the program's runs, sample_events, are what the file holds:
#    system-wide (no filter) every run is a sample, and the rows of the
#    CNTS chunks add up to STAT samples exactly, over the flushes of
#    --flush-interval 0.05 at 999 Hz, as many as a busy machine lets the
#    recorder make (the double-buffered counts lose
#    nothing when they are flipped and drained);
#  - the periods the kernel did not deliver (cpu_clock_periods -
#    sample_events: hrtimer overruns, a CPU busy in another BPF
#    program or bpf() call) are printed, not asserted: they depend on the
#    machine's load.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

"$REC" -q -F 999 --flush-interval 0.05 -o "$tmp/a.stk" 2 > "$tmp/rec.out" 2>&1
rc=$?
check "stkrec -F 999 --flush-interval 0.05 2: exit 0 (got $rc: $(cat "$tmp/rec.out"))" [ "$rc" -eq 0 ]
"$DUMP" "$tmp/a.stk" > "$tmp/a.dump"
awk -F'\t' '$1 == "STAT" { v[$2] = $3 }
	$1 == "CNTS" { rows += $NF }
	$1 == "META" && $2 == "cpus" { cpus = $3 }
	END { printf "%.0f %.0f %.0f %.0f %.0f %.0f\n", v["cpu_clock_periods"], v["sample_events"],
		v["samples"], rows, v["flushes"], cpus }' "$tmp/a.dump" > "$tmp/n"
read -r periods runs samples rows flushes cpus < "$tmp/n"
check "STAT cpu_clock_periods is there ($periods)" [ "$periods" -gt 0 ]
check "the program ran at most once per period the events elapsed ($runs runs, $periods periods, $cpus CPUs)" \
	[ "$runs" -le $((periods + cpus)) ]
check "system-wide, every run of the program is a sample ($runs runs, $samples samples)" \
	[ "$runs" -eq "$samples" ]
check "the CNTS rows of $flushes flushes add up to STAT samples ($rows rows, $samples samples)" \
	[ "$rows" -eq "$samples" ]
if [ "$periods" -gt 0 ]; then
	echo "note: $((periods - runs)) of $periods periods not delivered to the program" \
		"($(awk -v p="$periods" -v r="$runs" 'BEGIN { printf "%.1f", 100 * (p - r) / p }')%)"
fi
finish
