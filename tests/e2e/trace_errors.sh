#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# trace_errors: what stkrec trace refuses, each with one line on stderr and
# the right exit status (2 for an event spelt wrong or not on this machine,
# with a hint), a kprobe on a kernel without kprobes (one line, exit 1; where
# the kernel has kprobes it records), a glob cut by --max-probes (said in one
# warning), the rate cap (events over it counted in STAT, none lost:
# counted + capped is every event), and tracefs left as it was found (stkrec
# mounts it for the lookup when it is not mounted, and unmounts it).
# Exclusive: the tracefs check compares the system's mounts before and after
# (another trace test would mount tracefs for its own lookup meanwhile).
# harness: exclusive
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/trace.sh"

# expect_usage DESC PATTERN ARGS...: exit 2, one line matching PATTERN.
expect_fail() {
	want=$1 desc=$2 pat=$3
	shift 3
	"$REC" "$@" -q -o "$tmp/bad.stk" -- true > "$tmp/out" 2> "$tmp/err"
	rc=$?
	check "$desc: exit $want (got $rc)" [ "$rc" -eq "$want" ]
	check "$desc: one line ($(cat "$tmp/err"))" [ "$(wc -l < "$tmp/err")" -eq 1 ]
	check "$desc: says '$pat'" grep -q -- "$pat" "$tmp/err"
	check "$desc: no capture left" [ ! -e "$tmp/bad.stk" ]
}

mounts() { awk '$3 == "tracefs"' /proc/mounts | sort; }
mounts > "$tmp/mounts.before"
ls -d /tmp/stkrec-tracefs.* 2> /dev/null > "$tmp/dirs.before"

expect_fail 2 "no EVENT" "no EVENT given" trace
expect_fail 2 "a word that is no event" "expected t:CATEGORY:NAME" trace nosuchevent
expect_fail 2 "an unknown prefix" "unknown prefix" trace x:a:b
expect_fail 2 "a comma" "no commas" trace t:syscalls:sys_enter_write,page-faults
expect_fail 2 "no such tracepoint" "no such tracepoint" trace t:syscalls:sys_enter_nosuch
expect_fail 2 "no such category" "no tracepoint category" trace 't:nosuchcat:x*'
expect_fail 2 "a glob that matches nothing" "matches" trace 't:syscalls:nosuch_*'
expect_fail 2 "no such binary" "no binary or library" trace u:/nonexistent/bin:main
expect_fail 2 "no such library" "no binary or library" trace u:nosuchlib_xyz:f
expect_fail 2 "no such function" "has no function 'nosuch'" trace "u:$EW:nosuch"
expect_fail 2 "a uprobe glob that matches nothing" "no function of .* matches 'zzz\*'" trace "u:$EW:zzz*"
expect_fail 2 "an event twice" "given twice" trace page-faults faults
expect_fail 2 "-c 0" "-c 0: expected a positive number" trace page-faults -c 0
expect_fail 2 "--rate-cap in profile" "applies to trace only" --rate-cap 5
expect_fail 2 "an event before the mode word" "events follow the mode word" page-faults trace
if [ -e /sys/bus/event_source/devices/kprobe ]; then
	"$REC" trace -q p:vfs_write -o "$tmp/kp.stk" -- "$EW" 10 0 0 0 2> "$tmp/kp.err"
	check "p:vfs_write on a kernel with kprobes: records ($(cat "$tmp/kp.err"))" \
		[ "$(trce_sum "$tmp/kp.stk" 0)" -ge 10 ]
else
	expect_fail 1 "p:vfs_write without kprobes" \
		"p:vfs_write: this kernel has no kprobes (CONFIG_KPROBE_EVENTS)" trace p:vfs_write
	expect_fail 1 "k:vfs_read without kprobes" "this kernel has no kprobes" trace k:vfs_read
fi

# A glob past --max-probes: cut, and said in one warning; the first ones
# in name order are attached.
"$REC" trace -q 't:syscalls:sys_enter_*' --max-probes 3 -o "$tmp/glob.stk" -- true 2> "$tmp/glob.err"
check "glob over --max-probes: exit 0" [ $? -eq 0 ]
check "glob over --max-probes: one warning ($(cat "$tmp/glob.err"))" \
	grep -q "warning: t:syscalls:sys_enter_\*: [0-9]* events match, more than --max-probes 3 allows: 3 events attached" "$tmp/glob.err"
n=$(meta_of "$tmp/glob.stk" events | tr ',' '\n' | grep -c '^syscalls:sys_enter_')
check "glob over --max-probes: 3 events in META ($n)" [ "$n" -eq 3 ]

# A uprobe glob: every function it matches, one event each, in name order.
"$REC" trace -q "u:$EWLIB:evlib_*" -o "$tmp/ug.stk" -- "$EW" 0 0 0 5
check "uprobe glob: evlib_tick attached" [ "$(meta_of "$tmp/ug.stk" events)" = "u:$EWLIB:evlib_tick" ]
check "uprobe glob: its 5 calls" [ "$(trce_sum "$tmp/ug.stk" 0)" -eq 5 ]

# The rate cap: 1000 writes in a burst against 10 a second.  Every event
# is counted or capped, never lost and never both; a burst of 1000 cannot
# spread over the 100 seconds it would take to pass them all.
"$REC" trace -q --rate-cap 10 t:syscalls:sys_enter_write -o "$tmp/cap.stk" -- "$EW" 1000 0 0 0
counted=$(trce_sum "$tmp/cap.stk" 0)
capped=$(stat_of "$tmp/cap.stk" trace_events_capped)
check "rate cap: counted + capped = 1000 ($counted + $capped)" [ $((counted + capped)) -eq 1000 ]
check "rate cap: some capped ($capped)" [ "$capped" -gt 0 ]
check "rate cap: STAT samples is the counted ($(stat_of "$tmp/cap.stk" samples))" \
	[ "$(stat_of "$tmp/cap.stk" samples)" -eq "$counted" ]
check "META rate_cap 10" [ "$(meta_of "$tmp/cap.stk" rate_cap)" = 10 ]

mounts > "$tmp/mounts.after"
ls -d /tmp/stkrec-tracefs.* 2> /dev/null > "$tmp/dirs.after"
check "tracefs mounts as found ($(cat "$tmp/mounts.before" | wc -l) before)" cmp -s "$tmp/mounts.before" "$tmp/mounts.after"
check "no temporary tracefs directory left" cmp -s "$tmp/dirs.before" "$tmp/dirs.after"

finish
