#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# trace_report: the reports of a trace capture, in BCC stackcount's
# layouts and per event: text sections headed by the event, folded lines
# led by the event, --event for one, pprof with one sample type per event
# (go tool pprof -sample_index=EVENT totals that event's exact count), svg;
# stkreport info lists the events and stkread.py (from SPEC.md alone)
# counts what info counts; merge doubles a capture merged with itself and
# refuses captures of other events; diff compares the same events, or the
# one --event names.  The counts are eventwork's exact ones.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/trace.sh"
need_cmds go python3

N=200 M=100 L=50
trace_run "$tmp/a.stk" "$N $M 0 $L" t:syscalls:sys_enter_write "u:$EWLIB:evlib_tick"
check "recorded" [ -s "$tmp/a.stk" ]
"$REC" trace -q t:syscalls:sys_enter_write -o "$tmp/w.stk" -- "$EW" 10 20 0 0
check "recorded a second capture, one event" [ -s "$tmp/w.stk" ]

# text: a section per event, in META's order, headed with its count.
"$REP" "$tmp/a.stk" > "$tmp/a.txt" 2> "$tmp/a.err"
check "text: exit 0" [ $? -eq 0 ]
check "text: sys_enter_write's section ($(head -1 "$tmp/a.txt"))" \
	[ "$(head -1 "$tmp/a.txt")" = "syscalls:sys_enter_write: $((N + M)) events" ]
check "text: then evlib_tick's" grep -qx "u:$EWLIB:evlib_tick: $L events" "$tmp/a.txt"
check "text: writes_a's stack with its count" awk -v n=$N '
	/^ +writes_a$/ { a = 1 } a && $1 == n { ok = 1; exit } /^$/ { a = 0 } END { exit !ok }' "$tmp/a.txt"
check "summary: counts events" grep -q "of $((N + M + L)) events fully symbolized" "$tmp/a.err"

# folded: every line led by its event.
"$REP" -f folded "$tmp/a.stk" > "$tmp/a.folded" 2> /dev/null
check "folded: every line starts with an event" awk -v u="u:$EWLIB:evlib_tick;" '
	index($0, "syscalls:sys_enter_write;") != 1 && index($0, u) != 1 { bad = 1 } END { exit bad }' "$tmp/a.folded"
check "folded: writes_b's line $M" grep -q "^syscalls:sys_enter_write;eventwork;.*;writes_b;write;.* $M\$" "$tmp/a.folded"
check "folded --event: no event frame" sh -c '! "$1" -f folded --event evlib_tick "$2" 2>/dev/null | grep -q "^u:"' - "$REP" "$tmp/a.stk"
check "folded --event 1: evlib_tick's $L" [ "$(folded_sum "$tmp/a.stk" ';call_lib;evlib_tick ' 1)" -eq $L ]
"$REP" --event nosuch "$tmp/a.stk" > /dev/null 2> "$tmp/ev.err"
check "--event nosuch: exit 1" [ $? -eq 1 ]
check "--event nosuch: one line ($(cat "$tmp/ev.err"))" [ "$(wc -l < "$tmp/ev.err")" -eq 1 ]
"$REP" --event 0 "$top/samples/profile.stk" > /dev/null 2> "$tmp/ev2.err"
check "--event on a profile: refused in one line" grep -q "not a trace capture" "$tmp/ev2.err"

# pprof: a sample type per event, each totalling its event's count.
"$REP" -f pprof -o "$tmp/a.pb.gz" "$tmp/a.stk" 2> /dev/null
check "pprof: written" [ -s "$tmp/a.pb.gz" ]
for ev in syscalls:sys_enter_write:$((N + M)) "u:$EWLIB:evlib_tick:$L"; do
	name=${ev%:*} want=${ev##*:}
	go tool pprof -symbolize=none -sample_index="$name" -top "$tmp/a.pb.gz" > "$tmp/top" 2>&1
	check "pprof -sample_index=$name: Total samples = $want" grep -q "Total samples = $want\b" "$tmp/top"
done
"$REP" -f svg -o "$tmp/a.svg" "$tmp/a.stk" 2> /dev/null
check "svg: written, every event's frames" grep -q "writes_a" "$tmp/a.svg"

# info lists the events; stkread.py counts what info counts.
"$REP" info "$tmp/a.stk" > "$tmp/info" 2>&1
check "info: the events" grep -q "^meta events: syscalls:sys_enter_write,u:" "$tmp/info"
check "info: trace events $((N + M + L))" grep -qx "trace events: $((N + M + L))" "$tmp/info"
python3 "$top/tests/tools/stkread.py" "$tmp/a.stk" > "$tmp/py" 2>&1
check "stkread.py: trace events $((N + M + L))" grep -qx "trace events: $((N + M + L))" "$tmp/py"
check "stkread.py: trace rows as info" [ "$(grep '^trace rows' "$tmp/py")" = "$(grep '^trace rows' "$tmp/info")" ]

# merge: with itself, every count doubles; other events are refused.
"$REP" merge -o "$tmp/aa.stk" "$tmp/a.stk" "$tmp/a.stk"
check "merge with itself: exit 0" [ $? -eq 0 ]
check "merge with itself: writes_a $((2 * N))" [ "$(folded_sum "$tmp/aa.stk" ';writes_a;write;' 0)" -eq $((2 * N)) ]
check "merge: META events kept" [ "$(meta_of "$tmp/aa.stk" events)" = "$(meta_of "$tmp/a.stk" events)" ]
"$REP" merge -o "$tmp/aw.stk" "$tmp/a.stk" "$tmp/w.stk" 2> "$tmp/merge.err"
check "merge of other events: exit 1" [ $? -eq 1 ]
check "merge of other events: one line ($(cat "$tmp/merge.err"))" grep -q "traced different events" "$tmp/merge.err"
check "merge of other events: nothing written" [ ! -e "$tmp/aw.stk" ]

# diff: other events need --event; with it, each side's own.
"$REP" diff "$tmp/a.stk" "$tmp/w.stk" > /dev/null 2> "$tmp/diff.err"
check "diff of other events: exit 1" [ $? -eq 1 ]
check "diff of other events: one line ($(cat "$tmp/diff.err"))" [ "$(wc -l < "$tmp/diff.err")" -eq 1 ]
check "diff of other events: says so" grep -q "did not count the same events" "$tmp/diff.err"
"$REP" diff --event sys_enter_write "$tmp/a.stk" "$tmp/w.stk" > "$tmp/diff" 2> /dev/null
check "diff --event: exit 0" [ $? -eq 0 ]
check "diff --event: base $((N + M)) events" grep -q "^base: .*: trace, $((N + M)) events" "$tmp/diff"
check "diff --event: new 30 events" grep -q "^new: .*: trace, 30 events" "$tmp/diff"

finish
