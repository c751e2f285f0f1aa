#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_lazy: an all-process recording builds a file's unwind table only
# once a stack needs it (most files a busy machine maps are never on a
# sampled stack), and still unwinds whole stacks.  While stkrec records
# every process:
#  - a first nofpwork (no frame pointers) is sampled until its stacks
#    reach _start..main: a stack met its pending mappings and asked for
#    their tables, which were built (STAT says mappings were loaded
#    pending and stacks met them);
#  - a second nofpwork, started after that, running 2 s of CPU time, has
#    >= 90% of its samples rooted at _start..main: the tables built on the
#    first one's request serve a process of the same files from its start.
# Before on-demand tables every mapping of every sampled process was built
# at once (libz3, libcrypto, ... under a system-wide capture of a build).
# No fixed durations: the recorder runs until the test stops it, and is
# known to be sampling before nofpwork starts; the first nofpwork runs
# until its stacks are whole (bounded by wait_until only against a hang),
# the second for a known amount of CPU time (-c), so its sample count
# comes from its work, not from the machine's load.
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
check "the first nofpwork's stacks reach _start..main once their tables are built" \
	wait_until whole "$tmp/all.stk" "$first"
stop "$first"
"$NOFP" -c 2 >/dev/null &
second=$!
wait "$second"
stop "$r"
rc=$?
check "stkrec (all processes) exits 0 after SIGTERM (got $rc)" [ "$rc" -eq 0 ]
"$DUMP" "$tmp/all.stk" >"$tmp/all.dump"
set -- $(rooted "$tmp/all.stk" "$second")
echo "     second nofpwork: $2 of $1 samples rooted at _start..main"
# 2 CPU s at 499 Hz: ~1000 samples however busy the machine is (samples
# follow the CPU time it used); at least half of them.
check "second nofpwork: >= 90% of $1 samples (>= 499) rooted at _start..main ($2)" \
	[ "$1" -ge 499 -a $(($2 * 10)) -ge $(($1 * 9)) ]
check "STAT unwind_mappings_pending: mappings were loaded without a table" \
	grep -q '^STAT	unwind_mappings_pending	[1-9]' "$tmp/all.dump"
check "STAT unwind_table_pending: stacks met them and asked" \
	grep -q '^STAT	unwind_table_pending	[1-9]' "$tmp/all.dump"
finish
