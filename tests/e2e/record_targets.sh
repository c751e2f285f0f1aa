#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_targets: stkrec -p / -t stops once every target is gone, as perf
# record -p does, with one line saying so (also when a DURATION was given:
# nothing is left to record), exit 0 and META end_reason "targets"; with
# two targets it waits for the second.  Each stkrec runs under timeout(1)
# only so that one that never stops fails instead of hanging the suite.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
need_bpf

# The workloads, each a few seconds long: longer than stkrec takes to
# start on a loaded machine, so that each is sampled before it ends.
bg "$CW" 4
p1=$bg_pid
bg "$CW" 4 2
p2=$bg_pid
bg "$CW" 4
p3=$bg_pid
bg "$CW" 6
p4=$bg_pid
bg "$CW" 4
p5=$bg_pid
sleep 0.3
t2=$(ls "/proc/$p2/task" | grep -v "^$p2\$" | head -1)

# rec NAME STKREC-ARGS...: stkrec under timeout in the background; its
# exit status in $tmp/NAME.rc, stderr in $tmp/NAME.err.
rec() {
	_n=$1
	shift
	( timeout 120 "$REC" -o "$tmp/$_n.stk" "$@" 2> "$tmp/$_n.err"; echo $? > "$tmp/$_n.rc" ) &
}
rec p -p "$p1"
rec t -t "$t2"
rec two -p "$p3,$p4"
rec dur -p "$p5" 600
rec q -q -p "$p1"
wait

for n in p t two dur; do
	check "$n: exit 0 once the targets are gone" [ "$(cat "$tmp/$n.rc")" = 0 ]
	check "$n: META end_reason targets" [ "$(meta_of "$tmp/$n.stk" end_reason)" = targets ]
done
check "-p: one line says the process has exited" \
	grep -qx 'stkrec: the -p process has exited: nothing left to record, stopped' "$tmp/p.err"
check "-t: one line says the thread has exited" \
	grep -qx 'stkrec: the -t thread has exited: nothing left to record, stopped' "$tmp/t.err"
check "two -p targets: the line says every target has exited" \
	grep -qx 'stkrec: every -p/-t target has exited: nothing left to record, stopped' "$tmp/two.err"
check "two -p targets: the longer one recorded" [ "$(samples "$tmp/two.stk" "$p4")" -gt 0 ]
check "DURATION given: the line says it stopped before it" \
	grep -q '^stkrec: the -p process has exited: nothing left to record, stopped before the DURATION of 600' "$tmp/dur.err"
check "-q: exit 0" [ "$(cat "$tmp/q.rc")" = 0 ]
check "-q: no line" [ ! -s "$tmp/q.err" ]
finish
