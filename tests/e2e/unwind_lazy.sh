#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_lazy: an all-process recording unwinds whole stacks of a process
# started after it, its tables built off the main loop.  While stkrec
# records every process, a nofpwork (no frame pointers) started after it:
#  - is sampled until its stacks reach _start..main: its mappings reached
#    the unwinder (from the side-band, or its first sample) and the worker
#    built their tables (STAT says mappings were loaded pending);
#  - from then on, over the next ~200 ticks (2 s) of its CPU time, has
#    >= 90% of its samples rooted at _start..main: the tables built serve
#    its later stacks.
# Whether a sample meets a mapping while its table is built is the
# machine's timing, so not judged (a pending mapping met by a stack goes
# before the other builds: STAT unwind_table_pending).
# No fixed durations: the recorder runs until the test stops it, and is
# known to be sampling before nofpwork starts; nofpwork runs until its
# stacks are whole, then until it has used 200 more ticks of CPU time and
# a flush after that has landed (bounded by wait_until only against a
# hang), so the judged samples come from its work, not the machine's load.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

NOFP=$O/tests/unwind/nofpwork
need_files "$NOFP"

# rooted FILE PID: "samples rooted" of process PID's nofpwork samples, in
# FILE's folded report (the flushes so far while it is being recorded).
rooted() {
	"$REP" -f folded --pid "$2" "$1" 2>/dev/null |
	awk '$0 ~ /^nofpwork;/ { n = $NF; t += n; if ($0 ~ /^nofpwork;_start;.*;main;/) m += n }
	     END { printf "%d %d\n", t, m }'
}
# whole FILE PID: some of PID's samples are rooted at _start..main.
whole() {
	set -- $(rooted "$1" "$2")
	[ "$2" -gt 0 ]
}

bg "$REC" -q -F 499 -o "$tmp/all.stk"
r=$bg_pid
if ! wait_sampling "$tmp/all.stk" "$r"; then
	fail "stkrec (all processes) starts sampling"
	finish
fi
bg "$NOFP" -c 86400 >/dev/null
first=$bg_pid
check "nofpwork's stacks reach _start..main once their tables are built" \
	wait_until whole "$tmp/all.stk" "$first"
# The samples flushed so far, and its CPU time now: what follows is judged.
set -- $(rooted "$tmp/all.stk" "$first")
t0=$1 m0=$2
k0=$(cpu_ticks "$first")
# ticks_past PID N: PID has used N ticks of CPU time or more.
ticks_past() {
	[ "$(cpu_ticks "$1")" -ge "$2" ]
}
# grown FILE PID N: more than N of PID's samples are flushed in FILE.
grown() {
	set -- $(rooted "$1" "$2") "$3"
	[ "$1" -gt "$3" ]
}
check "nofpwork uses 200 more ticks of CPU time" wait_until ticks_past "$first" $((k0 + 200))
set -- $(rooted "$tmp/all.stk" "$first")
check "a flush lands after that" wait_until grown "$tmp/all.stk" "$first" "$1"
stop "$first"
stop "$r"
rc=$?
check "stkrec (all processes) exits 0 after SIGTERM (got $rc)" [ "$rc" -eq 0 ]
"$DUMP" "$tmp/all.stk" >"$tmp/all.dump"
set -- $(rooted "$tmp/all.stk" "$first")
t=$(($1 - t0)) m=$(($2 - m0))
echo "     nofpwork: $m0 of $t0 samples rooted when its stacks first were whole; $m of $t since"
# 200 ticks (2 CPU s) at 499 Hz: ~1000 samples however busy the machine is
# (samples follow the CPU time it used); at least half of them.
check "nofpwork after its tables were built: >= 90% of $t samples (>= 499) rooted at _start..main ($m)" \
	[ "$t" -ge 499 -a $((m * 10)) -ge $((t * 9)) ]
check "STAT unwind_mappings_pending: its mappings were loaded while their tables were built" \
	grep -q '^STAT	unwind_mappings_pending	[1-9]' "$tmp/all.dump"
finish
