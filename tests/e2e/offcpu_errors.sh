#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# offcpu_errors: every bad input to stkrec offcpu / offwake gives one clear
# line on stderr, exit 2, and no output file; options of one kind of mode
# are refused in the other; --help documents every off-CPU option.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

out=$tmp/out.stk

# expect CODE MESSAGE ARGS...: stkrec ARGS exits CODE, prints exactly
# MESSAGE as its only line, and leaves no output file.
expect() {
	code=$1 msg=$2
	shift 2
	rm -f "$out"
	"$REC" "$@" > "$tmp/stdout" 2> "$tmp/stderr"
	rc=$?
	got=$(cat "$tmp/stderr")
	if [ "$rc" -eq "$code" ] && [ "$got" = "$msg" ] && [ ! -e "$out" ] && [ ! -s "$tmp/stdout" ]; then
		pass "stkrec $*: exit $code, '$msg'"
	else
		fail "stkrec $*: exit $rc (want $code), stderr '$got' (want '$msg'), file $([ -e "$out" ] && echo left || echo absent)"
	fi
}

for mode in offcpu offwake; do
	expect 2 "stkrec: -m 5000 is greater than -M 2000: no block could be counted" \
		$mode -m 5000 -M 2000 -o "$out" 1
	expect 2 "stkrec: -u and -k cannot be used together (no thread is both a user and a kernel thread)" \
		$mode -u -k -o "$out" 1
done
expect 2 "stkrec: -m 11 is greater than -M 10: no block could be counted" offcpu -M 10 -m 11 -o "$out" 1
expect 2 "stkrec: --state 65536: unknown task state bits 0x10000 (known: 0xffff, see include/linux/sched.h)" \
	offcpu --state 65536 -o "$out" 1
expect 2 "stkrec: --state 4294901761: unknown task state bits 0xffff0000 (known: 0xffff, see include/linux/sched.h)" \
	offwake --state 4294901761 -o "$out" 1
expect 2 "stkrec: --state x: expected a task state bit mask, e.g. 2 for uninterruptible sleep" \
	offcpu --state x -o "$out" 1
expect 2 "stkrec: --state -1: expected a task state bit mask, e.g. 2 for uninterruptible sleep" \
	offcpu --state -1 -o "$out" 1
expect 2 "stkrec: --state 4294967296: expected a task state bit mask, e.g. 2 for uninterruptible sleep" \
	offcpu --state 4294967296 -o "$out" 1
expect 2 "stkrec: -m 0: expected a positive number of microseconds" offcpu -m 0 -o "$out" 1
expect 2 "stkrec: -m abc: expected a positive number of microseconds" offcpu -m abc -o "$out" 1
expect 2 "stkrec: -M -1: expected a positive number of microseconds" offwake -M -1 -o "$out" 1
expect 2 "stkrec: -M 1.5: expected a positive number of microseconds" offwake -M 1.5 -o "$out" 1
expect 2 "stkrec: option -m needs a value (see stkrec --help)" offcpu -o "$out" 1 -m
expect 2 "stkrec: option --state needs a value (see stkrec --help)" offcpu -o "$out" 1 --state
# Options of the other kind of mode.
expect 2 "stkrec: -F applies to profile mode only, not offcpu" offcpu -F 99 -o "$out" 1
expect 2 "stkrec: -C applies to profile mode only, not offwake" offwake -C 0 -o "$out" 1
expect 2 "stkrec: -m applies to offcpu and offwake only (e.g. stkrec offcpu -m ...)" -m 10 -o "$out" 1
expect 2 "stkrec: -u applies to offcpu and offwake only (e.g. stkrec offcpu -u ...)" profile -u -o "$out" 1
expect 2 "stkrec: --state applies to offcpu and offwake only (e.g. stkrec offcpu --state ...)" \
	--state 1 -o "$out" 1
# What off-CPU modes share with profile is checked the same way.
expect 2 "stkrec: -U and -K cannot be used together (neither gives both kinds of stacks)" \
	offwake -U -K -o "$out" 1
expect 2 "stkrec: -p abc: expected a list of process ids, e.g. 1234,5678" offcpu -p abc -o "$out" 1
expect 2 "stkrec: -p/-t cannot be combined with -- CMD (CMD selects what is profiled)" \
	offwake -p 1 -o "$out" -- true
expect 2 "stkrec: 'x': neither a mode (profile, offcpu, offwake, trace) nor a DURATION in seconds" offcpu -o "$out" x
expect 2 "stkrec: duration '0.0': expected a positive number of seconds" offcpu -o "$out" 0.0
expect 2 "stkrec: unknown option '-z' (see stkrec --help)" offwake -z -o "$out" 1
gone=$(sh -c 'echo $$')
expect 1 "stkrec: -p $gone: no such process" offcpu -p "$gone" -o "$out" 1
expect 1 "stkrec: -t $gone: no such thread" offwake -t "$gone" -o "$out" 1

# --help of the off-CPU modes: exit 0, every option, exit codes.
"$REC" offcpu --help > "$tmp/help" 2>&1
rc=$?
missing=
for o in -p --pid -t --tid -u --user-threads-only -k --kernel-threads-only -U --user-stacks-only \
	-K --kernel-stacks-only -m --min-block-time -M --max-block-time --state \
	--stack-storage-size -o --output --flush-interval DURATION "-- CMD"; do
	grep -qe " $o" "$tmp/help" || missing="$missing $o"
done
check "offcpu --help: exit 0 (got $rc), documents every option (missing:${missing:- none})" \
	[ "$rc" -eq 0 -a -z "$missing" ]
check "offcpu --help: documents the exit status" grep -q "Exit status: 0 success, 1 failure, 2 usage error" "$tmp/help"
check "profile --help points to the off-CPU modes" eval '"$REC" --help | grep -q "stkrec offcpu"'

finish
