#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_signals: stkrec started as a background job of a non-interactive
# shell (which starts it with SIGINT ignored) and sent SIGINT or SIGTERM as
# soon as it catches them -- which it now does first thing in main(), so
# the signal lands while it checks options, opens the output or loads its
# BPF programs -- stops by itself with exit 0 and a closed file ending for
# the reason "signal", in profile and offwake mode.  It is given no
# DURATION: a lost signal leaves it running, which the test sees after a
# bound of 120 s that only keeps it from hanging.  And once it samples
# (its output exists), a SIGINT stops it the same way.
#
# Not tested, because no program can help it: a SIGINT sent before main()
# runs (in the forked shell, or while ld.so loads stkrec's libraries) meets
# the inherited SIG_IGN and the kernel discards it.  A script that must
# stop stkrec should wait until the output file exists.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# sig_bits PID FIELD: bits = the hex mask FIELD (SigIgn, SigCgt, ...) of
# /proc/PID/status as a number, or empty once PID is gone.  Shell builtins
# only, no command substitution: no fork, so a poll loop reacts quickly.
sig_bits() {
	bits=
	while read -r _k _m; do
		[ "$_k" = "$2:" ] && bits=$((0x$_m))
	done < "/proc/$1/status"
} 2>/dev/null

# The premise: sh starts a background job with SIGINT ignored.  The job
# sleeps until the test has looked and kills it.
bg sh -c 'sleep 3600 & echo $! > '"$tmp/sleep.pid"'; wait'
at_exit='[ -s "$tmp/sleep.pid" ] && kill "$(cat "$tmp/sleep.pid")" 2> /dev/null'
wait_until [ -s "$tmp/sleep.pid" ]
sig_bits "$(cat "$tmp/sleep.pid")" SigIgn
ign=$bits
kill "$(cat "$tmp/sleep.pid")"
# One command for check: "check ... [ A ] && [ B ]" would run B outside it.
check "premise: a background job of sh starts with SIGINT ignored (SigIgn $ign)" \
	[ $((${ign:-0} & 2)) -eq 2 ]

# stop_early SIG MODE: start "stkrec MODE -q -o FILE &" (no DURATION) and
# send SIG as soon as stkrec catches SIGINT and SIGTERM (which stkrec now
# sets up first thing in main, before checking options, opening the
# output or loading BPF), then wait for it to end.
stop_early() {
	sig=$1 mode=$2 f=$tmp/$1-$2.stk
	bg "$REC" "$mode" -q -o "$f" 2> "$tmp/$sig-$mode.err"
	pid=$bg_pid
	# Polled without a pause (the point is to catch stkrec early), then,
	# should a busy machine not have run it yet, every 0.1 s up to 120 s.
	i=0 ready=no
	while [ $i -lt 101200 ]; do
		# After the exec: until then the forked shell has the test's
		# own INT/TERM traps.  exec resets caught signals, so then
		# SigCgt is stkrec's.
		comm=
		read -r comm < "/proc/$pid/comm" 2>/dev/null
		i=$((i + 1))
		[ $i -gt 100000 ] && sleep 0.1
		[ "$comm" = stkrec ] || continue
		sig_bits "$pid" SigCgt
		[ -n "$bits" ] && [ $((bits & 0x4002)) -eq $((0x4002)) ] && { ready=yes; break; }
	done
	if [ $ready = no ]; then
		fail "$mode, SIG$sig at start: stkrec never caught SIGINT and SIGTERM ($(cat "$tmp/$sig-$mode.err"))"
		return
	fi
	existed=no
	[ -e "$f" ] && existed=yes
	kill "-$sig" "$pid"
	if ! wait_until sh -c '! kill -0 "$1" 2> /dev/null' - "$pid"; then
		fail "$mode, SIG$sig at start (output existed: $existed): still running after 120 s"
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		return
	fi
	wait "$pid"
	rc=$?
	check "$mode, SIG$sig at start (output existed: $existed): stopped, exit 0 (got $rc: $(cat "$tmp/$sig-$mode.err"))" \
		[ "$rc" -eq 0 ]
	"$REP" info "$f" > "$tmp/$sig-$mode.info" 2>&1
	check "$mode, SIG$sig at start: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/$sig-$mode.info"
	check "$mode, SIG$sig at start: META end_reason signal" [ "$(meta_of "$f" end_reason)" = signal ]
}

stop_early INT profile
stop_early TERM profile
stop_early INT offwake
stop_early TERM offwake

# The same shell, a signal once stkrec samples: the usual stop.
bg "$REC" -q -o "$tmp/late.stk" 2> "$tmp/late.err"
pid=$bg_pid
wait_sampling "$tmp/late.stk" "$pid" || fail "profile: stkrec starts sampling ($(cat "$tmp/late.err"))"
kill -INT "$pid"
alive=no
wait_until sh -c '! kill -0 "$1" 2> /dev/null' - "$pid" || alive=yes
check "profile, SIGINT while recording (background job): stopped" [ $alive = no ]
[ $alive = yes ] && kill -KILL "$pid"
wait "$pid"
rc=$?
check "profile, SIGINT while recording: exit 0 (got $rc: $(cat "$tmp/late.err"))" [ $rc -eq 0 ]
"$REP" info "$tmp/late.stk" > "$tmp/late.info" 2>&1
check "profile, SIGINT while recording: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/late.info"
check "profile, SIGINT while recording: META end_reason signal" [ "$(meta_of "$tmp/late.stk" end_reason)" = signal ]

finish
