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
#  - a STAT follows every flush: one STAT per flush, each one's flushes
#    one more than the last's;
#  - the STATs before the last carry cpu_clock_periods as last read (at
#    most every 10 s: the 2 s here read it at the first flush only, never
#    more than the last STAT's), and the last STAT has it read at the end;
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
# Chunk by chunk: the STATs, their flushes and cpu_clock_periods.
awk -F'\t' '
	$1 == "CHUNK" && $3 == "STAT" { nstat++ }
	$1 == "STAT" && $2 == "flushes" { if ($3 != nstat) badseq++ }
	$1 == "STAT" && $2 == "cpu_clock_periods" { p[nstat] = $3 }
	END {
		for (i = 2; i < nstat; i++) if (p[i] != p[1]) moved++
		printf "%d %d %d %.0f %.0f\n", nstat, badseq + 0, moved + 0, p[1], p[nstat]
	}' "$tmp/a.dump" > "$tmp/s"
read -r nstat badseq moved first last < "$tmp/s"
check "one STAT per flush ($nstat STATs, $flushes flushes)" [ "$nstat" -eq "$flushes" ]
check "each STAT's flushes is one more than the last's ($badseq not)" [ "$badseq" -eq 0 ]
check "the STATs before the last carry cpu_clock_periods as read at the first ($moved differ)" \
	[ "$moved" -eq 0 ]
check "the last STAT's cpu_clock_periods is read at the end ($first at the first STAT, $last at the last)" \
	[ "$last" -gt "$first" ]
if [ "$periods" -gt 0 ]; then
	echo "note: $((periods - runs)) of $periods periods not delivered to the program" \
		"($(awk -v p="$periods" -v r="$runs" 'BEGIN { printf "%.1f", 100 * (p - r) / p }')%)"
fi
finish
