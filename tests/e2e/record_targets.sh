#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_targets: stkrec -p / -t stops once every target is gone, as perf
# record -p does, with one line saying so (also when a DURATION was given:
# nothing is left to record), exit 0 and META end_reason "targets"; with
# two targets it waits for the second: once the first is gone, its file
# still gains three flushes (STAT flushes) and samples of the second.  The
# targets run until the test stops them (SIGTERM), and only once every
# recorder samples: their end is the event under test.
# Each stkrec runs under timeout(1) only so that one that never stops
# fails instead of hanging the suite.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# The workloads: an hour only bounds a test that dies without its trap.
bg "$CW" 3600
p1=$bg_pid
bg "$CW" 3600 2
p2=$bg_pid
bg "$CW" 3600
p3=$bg_pid
bg "$CW" 3600
p4=$bg_pid
bg "$CW" 3600
p5=$bg_pid
# p2's second thread, once it exists.
second_thread() {
	t2=$(ls "/proc/$p2/task" 2>/dev/null | grep -v "^$p2\$" | head -1)
	[ -n "$t2" ]
}
wait_until second_thread || fail "cpuwork $p2 starts its second thread"

# rec NAME STKREC-ARGS...: stkrec under timeout in the background (the
# subshell's pid in $pid_NAME); its exit status in $tmp/NAME.rc, stderr in
# $tmp/NAME.err.
rec() {
	_n=$1
	shift
	( timeout 120 "$REC" -o "$tmp/$_n.stk" "$@" 2> "$tmp/$_n.err"; echo $? > "$tmp/$_n.rc" ) &
	eval "pid_$_n=\$!"
}
rec p -p "$p1"
rec t -t "$t2"
rec two -p "$p3,$p4"
rec dur -p "$p5" 600
rec q -q -p "$p1"
for n in p t two dur q; do
	eval "wait_sampling \"\$tmp/\$n.stk\" \$pid_$n" ||
		fail "$n: stkrec starts sampling ($(cat "$tmp/$n.err"))"
done

# The first of two targets goes: the recorder goes on recording the
# second, so its file gains flushes (STAT flushes) and samples of p4 after
# p3 is reaped.  One that stopped at the first exit was told by its pidfd
# before stop returned, and can write after this reading at most two STAT
# chunks: the end of a flush under way (its STAT was not in the file yet)
# and the final one.  Three more flushes it never writes: it fails with
# certainty, whatever the machine's speed.  The 120 s of wait_until only
# bound a recorder that hangs; one that exits ends the wait at once.
stop "$p3"
f0=$(stat_of "$tmp/two.stk" flushes)
s0=$(samples "$tmp/two.stk" "$p4")
went_on() {
	f1=$(stat_of "$tmp/two.stk" flushes)
	s1=$(samples "$tmp/two.stk" "$p4")
	[ "$f1" -ge $((f0 + 3)) ] && [ "$s1" -gt "$s0" ]
}
settled() {
	went_on || ! kill -0 "$pid_two" 2> /dev/null
}
wait_until settled
went_on
on=$?
check "two -p targets: still recording the second once the first has gone (flushes $f0 -> $f1, want >= $((f0 + 3)); samples of $p4 $s0 -> $s1)" \
	[ $on -eq 0 ]
for p in $p1 $p2 $p4 $p5; do
	stop "$p"
done
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
check "DURATION given: the line says it stopped before it" \
	grep -q '^stkrec: the -p process has exited: nothing left to record, stopped before the DURATION of 600' "$tmp/dur.err"
check "-q: exit 0" [ "$(cat "$tmp/q.rc")" = 0 ]
check "-q: no line" [ ! -s "$tmp/q.err" ]
finish
