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
# for good, past its duration and deaf to SIGINT/SIGTERM.  Each run here
# must end by itself (exit 0, within the bound "timeout -k 5 20" sets far
# past its duration; 124 or 137 means it hung) with a closed file.
#
# Also: SIGTERM while stkrec waits to open a FIFO -o nobody reads ends it,
# and SIGHUP (the terminal closed) ends a recording like SIGTERM, with a
# closed file.
# Exit 77 only when BPF cannot be used (not root, or no BTF) or setpriv is
# missing.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
TRAP=$O/tests/tools/fifotrap

need_files "$TRAP"
need_cmds setpriv timeout
id nobody > /dev/null 2>&1 || skip_test "needs user nobody"
NOBODY="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
chmod 711 "$tmp"

# wait_for FILE: until FILE is not empty (at most 20 s); 0 if it is.
wait_for() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$1" ]
}

# ends_within PID: wait up to 20 s for PID to end, then kill it; sets
# alive (yes: it had to be killed) and rc (its exit status).
ends_within() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	alive=no
	if kill -0 "$1" 2>/dev/null; then
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

# attack NAME SPIN [symlink]: stkrec -o NAME.stk 4, the attacker started
# once the recording runs and spinning SPIN seconds (less than a flush
# interval: it is gone when its mappings are written, and only its path
# is left to read).
attack() {
	n=$1 spin=$2 how=${3:-}
	d=$(trap_dir "$n")
	bg timeout -k 5 20 "$REC" -q -o "$tmp/$n.stk" 4 2> "$tmp/$n.err"
	pid=$bg_pid
	wait_for "$tmp/$n.stk"
	bg $NOBODY "$TRAP" "$d" "$spin" $how > "$tmp/$n.ready" 2>&1
	wait "$pid"
	rc=$?
	check "$n: the attacker set its trap ($(cat "$tmp/$n.ready"))" grep -q '^ready$' "$tmp/$n.ready"
	check "$n: stkrec ended by itself, exit 0 (got $rc: $(cat "$tmp/$n.err"))" [ "$rc" -eq 0 ]
	"$REP" info "$tmp/$n.stk" > "$tmp/$n.info" 2>&1
	check "$n: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/$n.info"
	check "$n: META end_reason duration" [ "$(meta_of "$tmp/$n.stk" end_reason)" = duration ]
}

attack fifo 5
attack symlink 5 symlink
attack fifo-exited 0.3

# The same attack, stopped by SIGTERM in the middle of the recording.
d=$(trap_dir term)
bg "$REC" -q -o "$tmp/term.stk" 30 2> "$tmp/term.err"
pid=$bg_pid
wait_for "$tmp/term.stk"
bg $NOBODY "$TRAP" "$d" 30 > "$tmp/term.ready" 2>&1
wait_for "$tmp/term.ready"
# Two flushes: the attacker's mappings are being written.
sleep 2
kill -TERM "$pid"
ends_within "$pid"
check "SIGTERM with the attacker running: stkrec stopped within 20 s" [ $alive = no ]
check "SIGTERM with the attacker running: exit 0 (got $rc: $(cat "$tmp/term.err"))" [ "$rc" -eq 0 ]
"$REP" info "$tmp/term.stk" > "$tmp/term.info" 2>&1
check "SIGTERM with the attacker running: the file is closed cleanly" \
	grep -q '^verdict: OK' "$tmp/term.info"
check "SIGTERM with the attacker running: META end_reason signal" \
	[ "$(meta_of "$tmp/term.stk" end_reason)" = signal ]

# SIGTERM while stkrec waits for a reader of its -o FIFO.
mkfifo "$tmp/out.fifo"
bg "$REC" -q -o "$tmp/out.fifo" 30 2> "$tmp/fifo.err"
pid=$bg_pid
# Until it sleeps in the open (or anywhere: the signal must end it).
i=0
state=
while [ "$state" != S ] && [ $i -lt 200 ]; do
	sleep 0.1
	state=$(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	i=$((i + 1))
done
sleep 1
kill -TERM "$pid"
ends_within "$pid"
check "SIGTERM while opening a FIFO -o nobody reads: stkrec stopped within 20 s" [ $alive = no ]
lines=$(wc -l < "$tmp/fifo.err")
check "SIGTERM while opening a FIFO -o: exit 1 with one line (got $rc: $(cat "$tmp/fifo.err"))" \
	test "$rc" -eq 1 -a "$lines" -eq 1
check "SIGTERM while opening a FIFO -o: the FIFO is still there" [ -p "$tmp/out.fifo" ]

# SIGHUP: the terminal stkrec runs in closed.
bg "$REC" -q -o "$tmp/hup.stk" 30 2> "$tmp/hup.err"
pid=$bg_pid
wait_for "$tmp/hup.stk"
sleep 1
kill -HUP "$pid"
ends_within "$pid"
check "SIGHUP while recording: stkrec stopped within 20 s" [ $alive = no ]
check "SIGHUP while recording: exit 0 (got $rc: $(cat "$tmp/hup.err"))" [ "$rc" -eq 0 ]
"$REP" info "$tmp/hup.stk" > "$tmp/hup.info" 2>&1
check "SIGHUP while recording: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/hup.info"
check "SIGHUP while recording: META end_reason signal" [ "$(meta_of "$tmp/hup.stk" end_reason)" = signal ]

finish
