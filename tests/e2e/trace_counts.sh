#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# trace_counts: stkrec trace counts events, not samples, so every count by
# stack is exact.  eventwork does N write()s from writes_a and M from
# writes_b, K page faults from touch_pages (K fresh anonymous pages, one
# fault each) and L calls of libeventwork.so's evlib_tick from call_lib:
# a tracepoint (syscalls:sys_enter_write, found in tracefs whether it is
# mounted or not), a software event (page-faults), a uprobe and a
# uretprobe, recorded at once under -- CMD, each report the exact number
# on the exact stack, with the stacks unwound from .eh_frame (eventwork
# has no frame pointers).  Other processes' events are not counted.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/trace.sh"

N=1000 M=300 K=500 L=700
trace_run "$tmp/ew.stk" "$N $M $K $L" t:syscalls:sys_enter_write page-faults \
	"u:$EWLIB:evlib_tick" "r:$EWLIB:evlib_tick" sched:sched_process_exec
rc=$?
check "trace -- eventwork: CMD's exit status, SIGTERM (143: $rc)" [ $rc -eq 143 ]
check "META mode trace" [ "$(meta_of "$tmp/ew.stk" mode)" = trace ]
check "META events: the four in order, the library by its path" \
	[ "$(meta_of "$tmp/ew.stk" events)" = "syscalls:sys_enter_write,page-faults,u:$EWLIB:evlib_tick,r:$EWLIB:evlib_tick,sched:sched_process_exec" ]

# The tracepoint: every write on its stack, kernel frames under it.
a=$(folded_sum "$tmp/ew.stk" ';main;writes_a;write;.*do_syscall_64' sys_enter_write)
b=$(folded_sum "$tmp/ew.stk" ';main;writes_b;write;.*do_syscall_64' sys_enter_write)
check "sys_enter_write from writes_a: exactly $N ($a)" [ "$a" -eq $N ]
check "sys_enter_write from writes_b: exactly $M ($b)" [ "$b" -eq $M ]
w=$(trce_sum "$tmp/ew.stk" 0)
check "sys_enter_write: nothing else of eventwork's ($w rows' events)" [ "$w" -eq $((N + M)) ]

# The software event: one fault per page touched, with its user stack
# (a fault in user mode has no kernel stack, as in perf).
k=$(folded_sum "$tmp/ew.stk" ';main;touch_pages [0-9]+$' page-faults)
check "page-faults in touch_pages: exactly $K ($k)" [ "$k" -eq $K ]

# The uprobe and the uretprobe: every call, every return.
u=$(folded_sum "$tmp/ew.stk" ';main;call_lib;evlib_tick [0-9]+$' "u:$EWLIB:evlib_tick")
check "uprobe evlib_tick from call_lib: exactly $L ($u)" [ "$u" -eq $L ]
r=$(folded_sum "$tmp/ew.stk" ';main;call_lib [0-9]+$' "r:$EWLIB:evlib_tick")
check "uretprobe evlib_tick, back in call_lib: exactly $L ($r)" [ "$r" -eq $L ]
check "uprobe: no other event ($(trce_sum "$tmp/ew.stk" 2))" [ "$(trce_sum "$tmp/ew.stk" 2)" -eq $L ]

# A tracepoint with a raw tracepoint (sched_process_exec: attached raw
# where the kernel's links take cookies): CMD's one exec, its kernel
# stack from execve without the tracing frames (bpf_trace_run*).
x=$(folded_sum "$tmp/ew.stk" '^eventwork;.*;bprm_execve [0-9]+$' sched_process_exec)
check "sched_process_exec: eventwork's one exec, from execve ($x)" [ "$x" -eq 1 ]
check "sched_process_exec: no tracing frame shown" sh -c '! "$1" -f folded --event sched_process_exec "$2" 2>/dev/null | grep -q "bpf_trace_run\|__traceiter"' - "$REP" "$tmp/ew.stk"

# Counted = STAT samples; nothing capped at the default cap.
s=$(stat_of "$tmp/ew.stk" samples)
t=$(( $(trce_sum "$tmp/ew.stk" 0) + $(trce_sum "$tmp/ew.stk" 1) + $(trce_sum "$tmp/ew.stk" 2) + $(trce_sum "$tmp/ew.stk" 3) + $(trce_sum "$tmp/ew.stk" 4) ))
check "STAT samples is the rows' events ($s, $t)" [ "$s" -eq "$t" ]
check "STAT trace_events_capped 0" [ "$(stat_of "$tmp/ew.stk" trace_events_capped)" -eq 0 ]

# context-switches: sleep(1) blocks in nanosleep, so it is switched out at
# least once there, its kernel stack through the scheduler.
"$REC" trace -q context-switches -o "$tmp/cs.stk" -- sleep 0.01
check "context-switches: sleep switched out in nanosleep" \
	[ "$(folded_sum "$tmp/cs.stk" '^sleep;.*nanosleep.*;schedule [0-9]+$')" -ge 1 ]

# A library by its short name (u:c:FUNC is libc.so.6's), and a PATH command.
"$REC" trace -q u:c:getpid -o "$tmp/libc.stk" -- true 2> "$tmp/libc.err"
check "u:c:getpid: attaches (exit $?; $(cat "$tmp/libc.err"))" [ -s "$tmp/libc.stk" ]
check "u:c:getpid: META names libc.so.6" sh -c 'case "$1" in u:/*/libc.so.6:getpid) ;; *) exit 1 ;; esac' \
	- "$(meta_of "$tmp/libc.stk" events)"

# -U: no kernel stacks; -K: no user stacks (the counts stay exact).
trace_run "$tmp/u.stk" "20 10 0 0" -U t:syscalls:sys_enter_write
check "-U: rows have no kernel stack" sh -c '! "$1" "$2" | awk -F"\t" "\$1 == \"TRCE\" && \$7 >= 0 { bad = 1 } END { exit !bad }"' - "$DUMP" "$tmp/u.stk"
check "-U: writes_a still exactly 20" [ "$(folded_sum "$tmp/u.stk" ';writes_a;write [0-9]+$')" -eq 20 ]
"$REC" trace -q -K t:syscalls:sys_enter_write -o "$tmp/k.stk" -- "$EW" 20 10 0 0
check "-K: every row's user stack is -ENOENT" sh -c '! "$1" "$2" | awk -F"\t" "\$1 == \"TRCE\" && \$6 != -2 { bad = 1 } END { exit !bad }"' - "$DUMP" "$tmp/k.stk"
check "-K: 30 events" [ "$(trce_sum "$tmp/k.stk" 0)" -eq 30 ]

# -p: that process's events only, exactly.  eventwork waits for SIGUSR1
# (sent once stkrec samples and has its unwind tables), works, holds in
# pause(2) and is ended at once: stkrec stops by itself, the target gone,
# and its rows have its maps (taken when the recording started: the
# announcement of its first event finds it gone).  Another eventwork
# working meanwhile is not counted.
bg "$EW" 40 30 0 0 wait
target=$bg_pid
bg "$REC" trace -q --flush-interval 0.05 -p $target t:syscalls:sys_enter_write -o "$tmp/p.stk"
rec=$bg_pid
wait_sampling "$tmp/p.stk" $rec
wait_until tables_ready "$tmp/p.stk"
"$EW" 7 7 0 0
kill -USR1 $target
wait_until in_pause $target
kill $target
wait $rec
check "-p: stkrec stops when the target is gone" [ "$(meta_of "$tmp/p.stk" end_reason)" = targets ]
check "-p: writes_a exactly 40" [ "$(folded_sum "$tmp/p.stk" ';writes_a;write;')" -eq 40 ]
check "-p: writes_b exactly 30" [ "$(folded_sum "$tmp/p.stk" ';writes_b;write;')" -eq 30 ]
check "-p: nothing of another process ($(trce_sum "$tmp/p.stk" 0))" [ "$(trce_sum "$tmp/p.stk" 0)" -eq 70 ]

finish
