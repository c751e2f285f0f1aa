#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: a process in its own PID namespace (unshare --pid --fork
# --mount-proc, as a container runs) is reported with its host pid and,
# beside it, the pid it has in its namespace (pidn chunk, SPEC.md): the
# ns_pid and pid_ns labels in pprof (read back by go tool pprof -raw) and
# "comm (HOSTPID, ns pid N)" in text.  A process of the host's namespace,
# recorded alongside, has neither.  Both pids are those the shells saw:
# $! inside the namespace, $! outside it.  The namespaced process has
# exited long before the report (no /proc/PID to read there).  Each
# cpuwork does a fixed amount of work (-n 500: about half a CPU second,
# 100 samples at 199 Hz), never a time a busy machine may eat, and runs
# as the recording's CMD: recorded from its first instruction.
#
# Exit 77 (skip) when BPF cannot be used here, or unshare --pid cannot.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/pprof.sh"
need_files "$REC" "$REP" "$CW"
need_bpf
need_cmds unshare
unshare --pid --fork --mount-proc true 2>/dev/null || skip_test "unshare --pid --fork --mount-proc not usable here"

# Two cpuworks: one in the host's namespace (its pid in host.pid), one in a
# new PID namespace (its pid there in ns.pid).
"$REC" -q -F 199 -o "$tmp/ns.stk" -- sh -c '
	"$1" -n 500 >/dev/null & echo $! >"$2/host.pid"
	unshare --pid --fork --mount-proc sh -c "\"\$0\" -n 500 >/dev/null & echo \$! >\"\$1/ns.pid\"; wait" "$1" "$2"
	wait' sh "$CW" "$tmp" >/dev/null 2>"$tmp/rec.err" ||
	fail "stkrec -- unshare --pid" "$(cat "$tmp/rec.err")"
host=$(cat "$tmp/host.pid" 2>/dev/null)
ns=$(cat "$tmp/ns.pid" 2>/dev/null)
check "both workloads ran (host pid $host, ns pid $ns)" test -n "$host" -a -n "$ns"
check "STAT pid_ns_processes counts the namespaced process" \
	sh -c "'$REP' info '$tmp/ns.stk' | grep -Eq '^stat pid_ns_processes: [1-9]'"

# ---- text: the host pid, then the namespace's -----------------------------
"$REP" "$tmp/ns.stk" >"$tmp/ns.txt" 2>"$tmp/rep.err" || fail "stkreport text" "$(cat "$tmp/rep.err")"
line=$(grep -E '^ +- +cpuwork \([0-9]+, ns pid [0-9]+\)$' "$tmp/ns.txt" | head -n 1)
check "text: 'cpuwork (HOSTPID, ns pid $ns)' ($line)" \
	sh -c "echo '$line' | grep -Eq '\\(([0-9]+), ns pid $ns\\)\$'"
hostpid_of_ns=$(echo "$line" | sed -nE 's/.*\(([0-9]+), ns pid [0-9]+\)$/\1/p')
check "text: the namespaced process's host pid ($hostpid_of_ns) is not its ns pid" \
	test -n "$hostpid_of_ns" -a "$hostpid_of_ns" != "$ns"
check "text: the host's cpuwork has no ns pid" grep -Eq "^ +- +cpuwork \\($host\\)\$" "$tmp/ns.txt"
check "folded: unchanged, no pid in it" sh -c "'$REP' -f folded '$tmp/ns.stk' 2>/dev/null | grep -q '^cpuwork;' && ! '$REP' -f folded '$tmp/ns.stk' 2>/dev/null | grep -q 'ns pid'"

# ---- pprof: ns_pid and pid_ns labels ----------------------------------------
if pprof_tools; then
	"$REP" -f pprof -o "$tmp/ns.pb.gz" "$tmp/ns.stk" 2>"$tmp/rep.err" ||
		fail "stkreport -f pprof" "$(cat "$tmp/rep.err")"
	gopprof -raw "$tmp/ns.pb.gz" >"$tmp/ns.raw" 2>&1
	check "pprof: samples of the namespaced process carry ns_pid:[$ns] and its host pid" \
		grep -Eq "comm:\\[cpuwork\\] .*ns_pid:\\[$ns\\] pid:\\[$hostpid_of_ns\\] pid_ns:\\[[0-9]+\\]" "$tmp/ns.raw"
	ino=$(sed -nE "s/.*ns_pid:\\[$ns\\] pid:\\[$hostpid_of_ns\\] pid_ns:\\[([0-9]+)\\].*/\\1/p" "$tmp/ns.raw" | head -n 1)
	check "pprof: pid_ns is not the host's namespace ($ino)" \
		test -n "$ino" -a "pid:[$ino]" != "$(readlink /proc/self/ns/pid)"
	check "pprof: the host's cpuwork has no ns_pid label" \
		sh -c "grep -E 'pid:\\[$host\\] ' '$tmp/ns.raw' | grep -q . && ! grep -E 'pid:\\[$host\\] ' '$tmp/ns.raw' | grep -q ns_pid"
else
	skip "pprof labels" "needs $PPROF_TOOLS"
fi

# ---- merge keeps it ---------------------------------------------------------
"$REP" merge -o "$tmp/m.stk" "$tmp/ns.stk" 2>"$tmp/merge.err" || fail "stkreport merge" "$(cat "$tmp/merge.err")"
check "merge: the merged capture still names the ns pid" \
	sh -c "'$REP' '$tmp/m.stk' 2>/dev/null | grep -Eq '^ +- +cpuwork \\($hostpid_of_ns, ns pid $ns\\)\$'"

finish
