#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# offcpu_status: the off-CPU modes' status line and summary say what they
# count -- blocking episodes and the time blocked -- not "samples"; the
# blocked time is STAT offcpu_blocked_ns, which equals the sum of the OFFC
# rows' blocked_ns.  offwork runs until the test stops it: the recorders
# attach to it with -p, and their 2 s count from when they are attached.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/offcpu.sh"

start_offwork
if command -v script > /dev/null; then
	script -qec "$REC offwake -p $ow_pid -o $tmp/tty.stk 2" "$tmp/tty.txt" > /dev/null 2>&1
	check "status line on a TTY: episodes and blocked time, updated in place" \
		grep -q "$(printf '\r')stkrec: 1s  [0-9]* episodes  [0-9]*\.[0-9]s blocked  [0-9]* stacks  [0-9]* lost" "$tmp/tty.txt"
	check "status line: no 'samples' in an off-CPU recording" [ "$(grep -c samples "$tmp/tty.txt")" -eq 0 ]
else
	skip "status line on a TTY" "script(1) (bsdutils) is needed to give stkrec a TTY"
fi

"$REC" offcpu -p "$ow_pid" -o "$tmp/o.stk" 2 2> "$tmp/o.err"
rc=$?
check "offcpu -p offwork 2: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "summary line: blocking episodes and blocked time ($(cat "$tmp/o.err"))" \
	grep -Eq "^stkrec: wrote $tmp/o.stk: [0-9]+ blocking episodes \([0-9]+\.[0-9]s blocked\), [0-9]+ stacks, [0-9.]+ (B|KiB|MiB)\$" "$tmp/o.err"
# offwork's two threads are blocked nearly all the time: about 2 x 2 s.
st=$(stat_of "$tmp/o.stk" offcpu_blocked_ns)
rows=$(offc "$tmp/o.stk" | awk -F'\t' '{ n += $13 } END { printf "%.0f\n", n + 0 }')
check "STAT offcpu_blocked_ns ($st) is the OFFC rows' total ($rows)" [ "$st" -gt 0 -a "$st" = "$rows" ]
shown=$(sed -n 's/.*episodes (\([0-9]*\)\.\([0-9]\)s blocked).*/\1\2/p' "$tmp/o.err")
check "summary's blocked time (${shown:-?}00 ms) is STAT's, in tenths of seconds" \
	[ "$(expr "${shown:-x}" + 0 2>/dev/null)" = $((st / 100000000)) ]
check "the count is episodes: STAT samples ($(stat_of "$tmp/o.stk" samples)) is the OFFC rows' count" \
	[ "$(stat_of "$tmp/o.stk" samples)" = "$(offc "$tmp/o.stk" | awk -F'\t' '{ n += $12 } END { printf "%.0f\n", n + 0 }')" ]

finish
