#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_hostile: an unprivileged user cannot hang a root stkrec, and a
# signal stops stkrec whatever it is doing.
#
# The attack (tests/tools/fifotrap.c, run as nobody): map a small non-ELF
# file PROT_EXEC (the kernel's MMAP2 record then has no build-id, so the
# recorder reads the file), rename it and put a FIFO -- or a symbolic link
# to one -- at its old path, and stay on the CPU so that its mappings are
# written.  A recorder that opens that path for reading waits for a writer
# for good, deaf to SIGINT/SIGTERM.  The attacker is the recording's CMD
# (stkrec -- setpriv ... fifotrap): recorded from its first instruction,
# its mapping is in the capture whatever the machine's load (unless the
# kernel's mmap records were lost: that recording is made again, up to 3
# times in all), and the recording ends when it exits -- spinning (its mappings written while
# the FIFO is at the path) or already gone when they are written.  Each
# run must end by itself (exit 0, a closed file naming the trap's path);
# "timeout -k 5 120" only bounds a recorder that hung (124 or 137).
#
# Also, the same attack on a recording of every CPU stopped by SIGTERM
# once its flushes have written the attacker's mapping; SIGTERM while
# stkrec waits (in the kernel's fifo_open) to open a FIFO -o nobody reads
# ends it; and SIGHUP (the terminal closed) ends a recording like SIGTERM,
# with a closed file.  No sleep: each signal follows what it must land on.
# What nobody runs is a copy in the test's directory: the clone may lie in
# a directory nobody cannot enter.
# Exit 77 only when BPF cannot be used (not root, or no BTF) or setpriv is
# missing.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

need_files "$O/tests/tools/fifotrap"
need_cmds setpriv timeout
id nobody > /dev/null 2>&1 || skip_test "needs user nobody"
NOBODY="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
chmod 711 "$tmp"
TRAP=$tmp/fifotrap
cp "$O/tests/tools/fifotrap" "$TRAP" && chmod 755 "$TRAP"

# gone PID: PID has ended.
gone() {
	! kill -0 "$1" 2>/dev/null
}

# ends_within PID: wait for PID to end (at most 120 s, a bound against a
# hang, then it is killed); sets alive (yes: it had to be killed) and rc
# (its exit status).
ends_within() {
	alive=no
	if ! wait_until gone "$1"; then
		alive=yes
		kill -KILL "$1"
	fi
	wait "$1"
	rc=$?
}

# trap_dir NAME: a fresh directory the attacker owns.
trap_dir() {
	mkdir "$tmp/$1"
	chown nobody "$tmp/$1"
	echo "$tmp/$1"
}

# has_trap FILE DIR: the capture FILE holds a mapping of DIR/lib.so: the
# recorder had the trap's path to read.
has_trap() {
	"$DUMP" "$1" 2>/dev/null | awk -F'\t' -v p="$2/lib.so" '$1 == "MAP" && $10 == p { f = 1 } END { exit !f }'
}

# trap_paths FILE: the paths of FILE's mappings under $tmp, and STAT
# mmap_events_lost (a lost kernel record leaves the mapping to
# /proc/PID/maps, which names the renamed file): a failure's evidence.
trap_paths() {
	"$DUMP" "$1" 2>/dev/null | awk -F'\t' -v t="$tmp" '$1 == "MAP" && index($10, t) == 1 { print $10 }' |
		sort -u | tr '\n' ' '
	echo "mmap_events_lost $(stat_of "$1" mmap_events_lost)"
}

# attack NAME SPIN FLUSH [symlink]: stkrec -F 199 --flush-interval FLUSH
# -o NAME.stk -- (as nobody) fifotrap, spinning SPIN seconds: longer than
# a flush interval (its mappings are written while it runs), or less (the
# only flush comes after it exited: only its path is left to read).
# A recording whose kernel mmap records were lost (STAT mmap_events_lost:
# the side-band ring overflowed on a busy machine) took the trap's mapping
# from /proc/PID/maps, under the renamed file's name: the attack did not
# reach it.  It is made again, up to 3 times in all.
attack() {
	n=$1 spin=$2 fl=$3 how=${4:-}
	try=0
	while :; do
		try=$((try + 1))
		d=$(trap_dir "$n.$try")
		rm -f "$tmp/$n.stk"
		timeout -k 5 120 "$REC" -q -F 199 --flush-interval "$fl" -o "$tmp/$n.stk" -- \
			$NOBODY "$TRAP" "$d" "$spin" $how > "$tmp/$n.ready" 2> "$tmp/$n.err"
		rc=$?
		[ "$rc" -ne 0 -o "$try" -ge 3 ] && break
		has_trap "$tmp/$n.stk" "$d" && break
		[ "$(stat_of "$tmp/$n.stk" mmap_events_lost)" -eq 0 ] && break
		echo "note: $n: try $try lost kernel mmap records: $(trap_paths "$tmp/$n.stk")"
	done
	check "$n: the attacker set its trap ($(cat "$tmp/$n.ready"))" grep -q '^ready$' "$tmp/$n.ready"
	check "$n: stkrec ended by itself, exit 0 (got $rc: $(cat "$tmp/$n.err"))" [ "$rc" -eq 0 ]
	"$REP" info "$tmp/$n.stk" > "$tmp/$n.info" 2>&1
	check "$n: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/$n.info"
	check "$n: META end_reason command" [ "$(meta_of "$tmp/$n.stk" end_reason)" = command ]
	if has_trap "$tmp/$n.stk" "$d"; then
		pass "$n: the capture maps the trap's path $d/lib.so"
	else
		fail "$n: the capture maps the trap's path $d/lib.so" "$(trap_paths "$tmp/$n.stk")"
	fi
}

attack fifo 5 1
attack symlink 5 1 symlink
attack fifo-exited 2 3600

# The same attack on a recording of every CPU, stopped by SIGTERM once
# two flushes after the trap was set have written the attacker's
# mapping (a recorder caught by the FIFO never writes it: then the
# signal comes after the 120 s bound).
d=$(trap_dir term)
bg "$REC" -q -o "$tmp/term.stk" 2> "$tmp/term.err"
pid=$bg_pid
wait_sampling "$tmp/term.stk" "$pid" || fail "SIGTERM with the attacker running: stkrec never started"
bg $NOBODY "$TRAP" "$d" 600 > "$tmp/term.ready" 2>&1
attacker=$bg_pid
ready() {
	grep -q '^ready$' "$tmp/term.ready"
}
wait_until ready
f0=$(stat_of "$tmp/term.stk" flushes)
# (Lost kernel mmap records leave the mapping under the renamed file's
# name: then the signal comes after the two flushes, and a note says so.)
trap_written() {
	[ "$(stat_of "$tmp/term.stk" flushes)" -ge $((f0 + 2)) ] &&
		{ has_trap "$tmp/term.stk" "$d" || [ "$(stat_of "$tmp/term.stk" mmap_events_lost)" -gt 0 ]; }
}
wait_until trap_written || fail "SIGTERM with the attacker running: its mapping never written"
has_trap "$tmp/term.stk" "$d" ||
	echo "note: SIGTERM with the attacker running: mmap records lost: $(trap_paths "$tmp/term.stk")"
kill -TERM "$pid"
ends_within "$pid"
stop "$attacker"
check "SIGTERM with the attacker running: stkrec stopped (not killed after 120 s)" [ $alive = no ]
check "SIGTERM with the attacker running: exit 0 (got $rc: $(cat "$tmp/term.err"))" [ "$rc" -eq 0 ]
"$REP" info "$tmp/term.stk" > "$tmp/term.info" 2>&1
check "SIGTERM with the attacker running: the file is closed cleanly" \
	grep -q '^verdict: OK' "$tmp/term.info"
check "SIGTERM with the attacker running: META end_reason signal" \
	[ "$(meta_of "$tmp/term.stk" end_reason)" = signal ]

# SIGTERM while stkrec waits for a reader of its -o FIFO: once it sleeps
# in the kernel's open of it (fifo_open, waiting in wait_for_partner).
mkfifo "$tmp/out.fifo"
bg "$REC" -q -o "$tmp/out.fifo" 30 2> "$tmp/fifo.err"
pid=$bg_pid
in_fifo_open() {
	grep -q fifo_open "/proc/$pid/stack" 2>/dev/null ||
		[ "$(cat "/proc/$pid/wchan" 2>/dev/null)" = wait_for_partner ]
}
wait_until in_fifo_open || fail "stkrec -o FIFO: never waited in the FIFO's open"
kill -TERM "$pid"
ends_within "$pid"
check "SIGTERM while opening a FIFO -o nobody reads: stkrec stopped (not killed after 120 s)" [ $alive = no ]
lines=$(wc -l < "$tmp/fifo.err")
check "SIGTERM while opening a FIFO -o: exit 1 with one line (got $rc: $(cat "$tmp/fifo.err"))" \
	test "$rc" -eq 1 -a "$lines" -eq 1
check "SIGTERM while opening a FIFO -o: the FIFO is still there" [ -p "$tmp/out.fifo" ]

# SIGHUP: the terminal stkrec runs in closed.
bg "$REC" -q -o "$tmp/hup.stk" 2> "$tmp/hup.err"
pid=$bg_pid
wait_sampling "$tmp/hup.stk" "$pid" || fail "SIGHUP: stkrec never started"
kill -HUP "$pid"
ends_within "$pid"
check "SIGHUP while recording: stkrec stopped (not killed after 120 s)" [ $alive = no ]
check "SIGHUP while recording: exit 0 (got $rc: $(cat "$tmp/hup.err"))" [ "$rc" -eq 0 ]
"$REP" info "$tmp/hup.stk" > "$tmp/hup.info" 2>&1
check "SIGHUP while recording: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/hup.info"
check "SIGHUP while recording: META end_reason signal" [ "$(meta_of "$tmp/hup.stk" end_reason)" = signal ]

finish
