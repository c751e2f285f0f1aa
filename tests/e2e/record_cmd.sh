#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_cmd: stkrec -- CMD ARGS runs CMD once everything is attached,
# profiles it and every process it starts, stops when it exits and exits
# with its status (128+N for signal N, as a shell), 127 when CMD cannot be
# run; the file says why the recording ended and how CMD ended.
# The workloads are fixed amounts of work (cpuwork -n), never seconds a
# busy machine may eat; a signal to stkrec comes once it is sampling and
# CMD runs (what the file's appearing and CMD's own process say, no
# sleep); what is "left behind" is looked for by CMD's pid, not by a
# command line another test may run too.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

"$REC" -q -o "$tmp/ok.stk" -- true
check "-- true: exit 0" [ $? -eq 0 ]
"$REC" -q -o "$tmp/seven.stk" -- sh -c 'exit 7'
check "-- sh -c 'exit 7': exit 7" [ $? -eq 7 ]
check "META target_exit_status 7" [ "$(meta_of "$tmp/seven.stk" target_exit_status)" = 7 ]
check "META end_reason command" [ "$(meta_of "$tmp/seven.stk" end_reason)" = command ]
check "META target_command" [ "$(meta_of "$tmp/seven.stk" target_command)" = "sh -c exit 7" ]
"$REC" -q -o "$tmp/segv.stk" -- sh -c 'kill -SEGV $$'
check "-- CMD killed by SIGSEGV: exit 139" [ $? -eq 139 ]
"$REC" -q -o "$tmp/nf.stk" -- /nonexistent/cmd 2> "$tmp/nf.err"
rc=$?
check "-- missing command: exit 127" [ "$rc" -eq 127 ]
check "-- missing command: one line naming it" \
	[ "$(cat "$tmp/nf.err")" = "stkrec: /nonexistent/cmd: command not found" ]
check "-- missing command: no output file" [ ! -e "$tmp/nf.stk" ]

# The whole process tree: sh -> (sh -> cpuwork), cpuwork started by a
# grandchild, and a second cpuwork started after a delay.  Each runs 500
# rounds (about half a CPU second: 50 samples at 99 Hz, whatever the
# load), not a time a busy machine could leave without a sample.
"$REC" -q -F 99 -o "$tmp/tree.stk" -- sh -c "sh -c '$CW -n 500'; sleep 0.2; $CW -n 500 & wait" 2> "$tmp/tree.err"
rc=$?
check "process tree: exit 0 ($(cat "$tmp/tree.err"))" [ $rc -eq 0 ]
"$DUMP" "$tmp/tree.stk" > "$tmp/tree.dump"
ncw=$(awk -F'\t' '$1 == "CNTS" && $4 == "cpuwork" { t[$2] = 1 } END { for (k in t) n++; print n + 0 }' "$tmp/tree.dump")
check "process tree: both cpuwork processes sampled ($ncw)" [ "$ncw" -eq 2 ]
nmaps=$(awk -F'\t' '$1 == "MAPS" && $3 == "cpuwork" { t[$2] = 1 } END { for (k in t) n++; print n + 0 }' "$tmp/tree.dump")
check "process tree: both have MAPS ($nmaps)" [ "$nmaps" -eq 2 ]
# CMD's own process is sampled as "stkrec" between fork and exec (perf's
# shows as perf-exec): that comm is the tree's only when its process also
# ran sh, never the recorder's own.
strangers=$(awk -F'\t' '
	$1 == "CNTS" && ($4 == "cpuwork" || $4 == "sh" || $4 == "sleep") { tree[$2] = 1; next }
	$1 == "CNTS" { row[++n] = $2 "\t" $4 }
	END {
		for (i = 1; i <= n; i++) {
			split(row[i], r, "\t")
			if (r[2] != "stkrec" || !(r[1] in tree)) print r[2] "/" r[1]
		}
	}' "$tmp/tree.dump" | sort -u | tr '\n' ' ')
check "process tree: nothing outside the tree (${strangers:-none})" [ -z "$strangers" ]

# Found but not runnable: 126 with the reason, as bash and env (127 is
# only for not found).
"$REC" -q -o "$tmp/nx.stk" -- /etc/passwd 2> "$tmp/nx.err"
rc=$?
check "-- a file without x: exit 126 ($rc)" [ "$rc" -eq 126 ]
check "-- a file without x: one line ($(cat "$tmp/nx.err"))" \
	[ "$(cat "$tmp/nx.err")" = "stkrec: /etc/passwd: Permission denied" ]
"$REC" -q -o "$tmp/nx.stk" -- /tmp 2> "$tmp/nx.err"
rc=$?
check "-- a directory: exit 126 ($rc)" [ "$rc" -eq 126 ]
check "-- a directory: one line ($(cat "$tmp/nx.err"))" \
	[ "$(cat "$tmp/nx.err")" = "stkrec: /tmp: Is a directory" ]
check "-- not runnable: no output file" [ ! -e "$tmp/nx.stk" ]

# DURATION with -- CMD is a time limit (as timeout(1)): the recording ends
# after DURATION at the latest, CMD gets SIGTERM, stkrec exits 0.  A CMD
# that ends sooner ends it, with CMD's status.
# CMD's arguments are this test's own (its shell's pid in them): another
# test's sleep cannot be taken for one left behind.
dsleep="sleep 30.$$"
"$REC" -q -o "$tmp/d.stk" 1 -- $dsleep 2> "$tmp/d.err"
rc=$?
check "DURATION 1 with -- $dsleep: exit 0 ($rc $(cat "$tmp/d.err"))" [ "$rc" -eq 0 ]
check "DURATION with -- CMD: META end_reason duration" [ "$(meta_of "$tmp/d.stk" end_reason)" = duration ]
left=$(pgrep -fx "$dsleep")
check "DURATION with -- CMD: no CMD left behind (${left:-none})" [ -z "$left" ]
[ -n "$left" ] && kill -KILL $left
"$REC" -q -o "$tmp/d2.stk" 30 -- sh -c 'exit 3' 2> "$tmp/d2.err"
rc=$?
check "DURATION 30 with -- sh -c 'exit 3': CMD's status 3 ($rc)" [ "$rc" -eq 3 ]
check "DURATION with -- CMD that ends first: META end_reason command" \
	[ "$(meta_of "$tmp/d2.stk" end_reason)" = command ]

# SIGTERM to stkrec: CMD is stopped too, the file is closed cleanly and
# stkrec exits with CMD's status.
# The file appears once everything is attached and CMD's exec succeeded
# (stk_writer__commit comes after child__release): the signal lands on a
# recording, with sleep running.
bg "$REC" -q -o "$tmp/term.stk" -- sleep 30.5
rpid=$bg_pid
wait_sampling "$tmp/term.stk" "$rpid" || fail "SIGTERM: stkrec -- sleep never started"
cmd=$(pgrep -P "$rpid")
kill -TERM "$rpid"
wait "$rpid"
rc=$?
check "SIGTERM: CMD (sleep) stopped with SIGTERM, exit 143 ($rc)" [ "$rc" -eq 143 ]
check "SIGTERM: META end_reason signal" [ "$(meta_of "$tmp/term.stk" end_reason)" = signal ]
"$REP" info "$tmp/term.stk" > "$tmp/term.info" 2>&1
check "SIGTERM: stkreport info says closed cleanly" grep -q '^verdict: OK' "$tmp/term.info"
check "SIGTERM: no CMD left behind (pid ${cmd:-none})" \
	sh -c "[ -n '$cmd' ] && ! kill -0 '$cmd' 2>/dev/null"

# A CMD that ignores SIGTERM: stkrec kills it after its grace period
# instead of waiting for it forever (a second Ctrl-C could not help: stkrec
# waits with SIGINT blocked).  SIGINT comes once CMD's sh has set its trap
# (its process is sleep: the exec follows the trap).  CMD would sleep ten
# minutes: the 120 s bound only keeps a stkrec that waits for it from
# hanging the suite, it is no timing test.
bg "$REC" -q -o "$tmp/deaf.stk" -- sh -c 'trap "" TERM; exec sleep 600.5'
rpid=$bg_pid
wait_sampling "$tmp/deaf.stk" "$rpid" || fail "CMD ignoring SIGTERM: stkrec never started"
cmd=$(pgrep -P "$rpid")
is_sleep() {
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ]
}
wait_until is_sleep "$cmd" || fail "CMD ignoring SIGTERM: sh never ran sleep"
kill -INT "$rpid"
gone() {
	! kill -0 "$1" 2>/dev/null
}
if wait_until gone "$rpid"; then
	pass "CMD ignoring SIGTERM: stkrec ends without it"
else
	fail "CMD ignoring SIGTERM: stkrec ends without it" "still running after 120 s"
	kill -KILL "$rpid"
fi
wait "$rpid"
rc=$?
check "CMD ignoring SIGTERM: killed with SIGKILL, exit 137 ($rc)" [ "$rc" -eq 137 ]
if [ -n "$cmd" ] && kill -0 "$cmd" 2>/dev/null; then
	fail "CMD ignoring SIGTERM: no CMD left behind" "pid $cmd still runs"
	kill -KILL "$cmd"
else
	pass "CMD ignoring SIGTERM: no CMD left behind (pid ${cmd:-none})"
fi
"$REP" info "$tmp/deaf.stk" > "$tmp/deaf.info" 2>&1
check "CMD ignoring SIGTERM: stkreport info says closed cleanly" grep -q '^verdict: OK' "$tmp/deaf.info"

finish
