#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_errors: every bad input and missing permission gives one clear
# line on stderr, the documented exit code (2 usage, 1 failure), and no
# output file: nothing is attached and nothing half-written is left.
# What runs as another user, or as root without CAP_DAC_OVERRIDE, is a
# copy of stkrec in the test's world-readable directory: the clone may lie
# in a directory only its owner can enter.
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

max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
online=$(cat /sys/devices/system/cpu/online)

expect 2 "stkrec: -F 0: frequency must be at least 1 Hertz" -F 0 -o "$out" 1
expect 2 "stkrec: -F -5: frequency must be a positive number of Hertz" -F -5 -o "$out" 1
expect 2 "stkrec: -F abc: not a number; expected Hertz, e.g. -F 99" -F abc -o "$out" 1
expect 2 "stkrec: -F $((max + 1)): above the kernel's limit of $max Hz (sysctl kernel.perf_event_max_sample_rate)" \
	-F $((max + 1)) -o "$out" 1
expect 2 "stkrec: -U and -K cannot be used together (neither gives both kinds of stacks)" -U -K -o "$out" 1
expect 2 "stkrec: -C 1-0: not a CPU list; expected e.g. 0-3,8" -C 1-0 -o "$out" 1
expect 2 "stkrec: -C x: not a CPU list; expected e.g. 0-3,8" -C x -o "$out" 1
expect 2 "stkrec: -C 4096: CPU 4096 is not online (online: $online)" -C 4096 -o "$out" 1
expect 2 "stkrec: -p abc: expected a list of process ids, e.g. 1234,5678" -p abc -o "$out" 1
expect 2 "stkrec: -t 0: expected a list of thread ids, e.g. 1234,5678" -t 0 -o "$out" 1
expect 2 "stkrec: duration '0': expected a positive number of seconds" -o "$out" 0
expect 2 "stkrec: 'x': neither a mode (profile, offcpu, offwake, trace) nor a DURATION in seconds" -o "$out" x
expect 2 "stkrec: unexpected argument '2': DURATION is given already ('1')" -o "$out" 1 2
# The mode word may stand anywhere before --; a wrong one is named.
expect 2 "stkrec: 'ofcpu': neither a mode (profile, offcpu, offwake, trace) nor a DURATION in seconds" \
	-o "$out" ofcpu 5
expect 2 "stkrec: two modes given, 'offcpu' and 'offwake': choose one" offcpu -o "$out" offwake 1
expect 2 "stkrec: -m applies to offcpu and offwake only (e.g. stkrec offcpu -m ...)" \
	-m 10 -o "$out" profile 1
"$REC" -o "$out" offcpu --help > "$tmp/help" 2>&1
check "-o FILE offcpu --help: the offcpu help" grep -q '^Usage: stkrec offcpu|offwake' "$tmp/help"
"$REC" -q -m 10 -o "$out" offcpu 1 2> "$tmp/late.err"
rc=$?
check "-m 10 -o FILE offcpu 1: records offcpu (exit $rc $(cat "$tmp/late.err"))" \
	[ "$rc" -eq 0 -a "$(meta_of "$out" mode)" = offcpu ]
rm -f "$out"
expect 2 "stkrec: unknown option '--bogus' (see stkrec --help)" --bogus -o "$out" 1
expect 2 "stkrec: unknown option '-z' (see stkrec --help)" -z -o "$out" 1
# A long option that takes no value, given one: named as typed, not by
# getopt's optopt (the option's val, which printed as '-h').
expect 2 "stkrec: option '--help' takes no value (see stkrec --help)" --help=1
expect 2 "stkrec: option -o needs a value (see stkrec --help)" 1 -o
expect 2 "stkrec: --stack-storage-size 0: expected a number from 1 to 4194304" \
	--stack-storage-size 0 -o "$out" 1
expect 2 "stkrec: --flush-interval 0: expected seconds from 0.001 to 3600" --flush-interval 0 -o "$out" 1
expect 2 "stkrec: --kallsyms=some: expected 'covering' or 'full'" --kallsyms=some -o "$out" 1
expect 2 "stkrec: --user-memory 0: expected megabytes from 1 to 16384" --user-memory 0 -o "$out" 1
expect 2 "stkrec: --user-memory 1x: expected megabytes from 1 to 16384" --user-memory 1x -o "$out" 1
expect 2 "stkrec: no command after '--'" -o "$out" --
expect 2 "stkrec: -p/-t cannot be combined with -- CMD (CMD selects what is profiled)" -p 1 -o "$out" -- true
# offcpu/offwake exist now (tests/e2e/offcpu_errors.sh has their bad inputs).
expect 2 "stkrec: -F applies to profile mode only, not offwake" offwake -F 99 -o "$out" 1

# A process that does not exist, and a thread given as a process.
gone=$(sh -c 'echo $$')
expect 1 "stkrec: -p $gone: no such process" -p "$gone" -o "$out" 1
expect 1 "stkrec: -t $gone: no such thread" -t "$gone" -o "$out" 1
# A cpuwork with a second thread, running until stopped; its thread is
# waited for, not slept for.
bg "$CW" 600 2
cw=$bg_pid
two_tasks() {
	[ "$(ls "/proc/$cw/task" 2>/dev/null | wc -l)" -ge 2 ]
}
wait_until two_tasks || fail "cpuwork 600 2: no second thread"
thr=$(ls "/proc/$cw/task" | grep -v "^$cw\$" | head -1)
expect 1 "stkrec: -p $thr: is a thread of process $cw (use -t $thr for the thread)" -p "$thr" -o "$out" 1
stop "$cw"

# An output path that cannot be written: refused before anything is attached.
expect 1 "stkrec: $tmp/no/such/dir/x.stk: No such file or directory" -o "$tmp/no/such/dir/x.stk" 1
mkdir "$tmp/ro" && chmod 0555 "$tmp/ro"
# The copy setpriv runs: $O may be out of reach without CAP_DAC_OVERRIDE.
mkdir "$tmp/bin" && cp "$REC" "$tmp/bin/stkrec" && chmod 0755 "$tmp/bin" "$tmp/bin/stkrec"
PREC=$tmp/bin/stkrec
if command -v setpriv > /dev/null; then
	# Root ignores directory permissions unless CAP_DAC_OVERRIDE is gone.
	rm -f "$out"
	setpriv --bounding-set=-dac_override "$PREC" -o "$tmp/ro/x.stk" 1 2> "$tmp/stderr"
	rc=$?
	check "read-only directory: exit 1, '$(cat "$tmp/stderr")'" \
		[ "$rc" -eq 1 -a "$(cat "$tmp/stderr")" = "stkrec: $tmp/ro/x.stk: Permission denied" ]
else
	skip "read-only directory" "no setpriv (util-linux)"
fi

# Permissions: not root, and root without each capability.
if command -v setpriv > /dev/null; then
	expect_priv() {
		code=$1 msg=$2
		shift 2
		rm -f "$out"
		setpriv "$@" "$PREC" -o "$out" 1 > /dev/null 2> "$tmp/stderr"
		rc=$?
		if [ "$rc" -eq "$code" ] && [ "$(cat "$tmp/stderr")" = "$msg" ] && [ ! -e "$out" ]; then
			pass "setpriv $*: exit $code, '$msg'"
		else
			fail "setpriv $*: exit $rc, '$(cat "$tmp/stderr")' (want $code, '$msg')"
		fi
	}
	chmod 0777 "$tmp"
	expect_priv 1 "stkrec: must run as root, or with CAP_BPF and CAP_PERFMON (missing CAP_BPF and CAP_PERFMON)" \
		--reuid=65534 --regid=65534 --clear-groups
	expect_priv 1 "stkrec: missing CAP_BPF (needed to load BPF programs); run as root without dropping capabilities" \
		--bounding-set=-sys_admin,-bpf
	expect_priv 1 "stkrec: missing CAP_PERFMON (needed to sample all CPUs); run as root without dropping capabilities" \
		--bounding-set=-sys_admin,-perfmon
	# Without CAP_SYSLOG kallsyms shows zeros (unless perf_event_paranoid
	# allows addresses to everyone).  --kallsyms=full then refuses rather
	# than write a table nothing could use; by default the kernel's own
	# %pS still names the addresses recorded.
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
		rm -f "$out"
		setpriv --bounding-set=-sys_admin,-syslog "$PREC" --kallsyms=full -o "$out" 1 \
			> /dev/null 2> "$tmp/stderr"
		rc=$?
		want="stkrec: /proc/kallsyms: kernel addresses are hidden from this process (kernel.kptr_restrict); run as root with CAP_SYSLOG, or use -U for user stacks only"
		check "without CAP_SYSLOG, --kallsyms=full: exit 1, '$(cat "$tmp/stderr")'" \
			[ "$rc" -eq 1 -a "$(cat "$tmp/stderr")" = "$want" -a ! -e "$out" ]
		# A CMD in the kernel until the test stops it (dd's system calls):
		# stopped once a flush has named a kernel frame, or after the
		# 120 s bound if none ever is.  Stopped by SIGTERM, stkrec exits
		# with CMD's status: 143.
		rm -f "$out"
		bg setpriv --bounding-set=-sys_admin,-syslog "$PREC" -q -o "$out" -- \
			dd if=/dev/zero of=/dev/null bs=512 2> "$tmp/stderr"
		rp=$bg_pid
		has_ksym() {
			"$DUMP" "$out" 2>/dev/null | grep -q '^KSYM'
		}
		wait_sampling "$out" "$rp" && wait_until has_ksym
		kill -TERM "$rp"
		wait "$rp"
		rc=$?
		nk=$("$DUMP" "$out" | grep -c '^KSYM')
		check "without CAP_SYSLOG: kernel stacks still named ($nk KSYM, exit $rc $(cat "$tmp/stderr"))" \
			[ "$rc" -eq 143 -a "$nk" -gt 0 ]
		rm -f "$out"
		setpriv --bounding-set=-sys_admin,-syslog "$PREC" -q -U -o "$out" 1 2> "$tmp/stderr"
		rc=$?
		check "without CAP_SYSLOG, -U records ($(cat "$tmp/stderr"))" [ $rc -eq 0 -a -s "$out" ]
	else
		skip "without CAP_SYSLOG" "kernel.perf_event_paranoid < 2 shows kernel addresses to everyone"
	fi
else
	skip "missing capabilities" "no setpriv (util-linux)"
fi

# A failure after the output was opened and everything was attached: CMD
# passes the checks (an executable file) but execve() fails, because its
# ELF interpreter does not exist.  The file is removed and the exit status
# is a shell's for "not found".
sed 's|ld-linux-x86-64.so.2|ld-linux-x86-64.so.X|' /bin/true > "$tmp/badinterp"
chmod +x "$tmp/badinterp"
if grep -q 'ld-linux-x86-64.so.X' "$tmp/badinterp"; then
	expect 127 "stkrec: $tmp/badinterp: No such file or directory" -o "$out" -- "$tmp/badinterp"
fi
# A directory is found but cannot be run: 126, as bash says.
expect 126 "stkrec: $tmp: Is a directory" -o "$out" -- "$tmp"

# Help and version go to stdout and exit 0.
"$REC" --help > "$tmp/help" 2>&1
check "--help: exit 0, documents exit codes" [ $? -eq 0 ] 
check "--help: mentions every option" sh -c "grep -q -- '--stack-storage-size' '$tmp/help' && grep -q -- '--flush-interval' '$tmp/help' && grep -q 'Exit status' '$tmp/help'"
check "--version" [ "$("$REC" --version | head -n 1)" = "stkrec $(awk -F'"' '/define STK_VERSION_STRING/ { print $2 }' "$top/format/stk.h")" ]

finish
