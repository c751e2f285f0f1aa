#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_output: what -o names is safe.  A capture is created mode 0600
# whatever the umask (it holds the kernel's real addresses).  A start that
# fails after the output was opened (CMD passes the checks but its exec
# fails: its ELF interpreter does not exist) leaves whatever -o named as
# it was -- a regular file with its bytes, a symbolic link and its target,
# a device node, a FIFO -- and removes only the temporary file stkrec made
# (nothing named .NAME.* is left).  A recording that starts replaces a
# regular file or a symbolic link (never writing through it) and writes to
# a character device or FIFO in place, without removing it; a block device
# is refused with one line and left alone.  A second stkrec with the same
# -o refuses to start; an output removed or replaced while recording is
# saved beside as NAME.PID, said in one line, exit 1.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

od=$tmp/out
mkdir "$od"

# leftovers: the temporary files left in $od (none expected).
leftovers() {
	ls -A "$od" | grep '^\..*\.......$' | tr '\n' ' '
}

# A deterministic failure after the output is opened.
sed 's|ld-linux-x86-64.so.2|ld-linux-x86-64.so.X|' /bin/true > "$tmp/badinterp"
chmod +x "$tmp/badinterp"
grep -q 'ld-linux-x86-64.so.X' "$tmp/badinterp" ||
	skip_test "cannot make an executable with a missing interpreter here"

# failed_start OUT: stkrec -o OUT -- badinterp, which must fail (127).
failed_start() {
	"$REC" -q -o "$1" -- "$tmp/badinterp" 2> "$tmp/fail.err"
	rc=$?
	check "failed start -o $(basename "$1"): exit 127 (got $rc: $(cat "$tmp/fail.err"))" [ "$rc" -eq 127 ]
}

# -o a name that does not exist: nothing is left.
failed_start "$od/new.stk"
check "failed start, -o a new name: no file at it" [ ! -e "$od/new.stk" ]
check "failed start, -o a new name: no temporary left ($(leftovers))" [ -z "$(leftovers)" ]

# -o an existing regular file: its bytes and mode stay.
echo "precious data" > "$od/old.stk"
chmod 640 "$od/old.stk"
failed_start "$od/old.stk"
check "failed start, -o an existing file: its bytes stay" [ "$(cat "$od/old.stk" 2>/dev/null)" = "precious data" ]
check "failed start, -o an existing file: its mode stays" [ "$(stat -c %a "$od/old.stk" 2>/dev/null)" = 640 ]

# -o a symbolic link: the link and its target stay.
echo "target data" > "$od/target"
ln -s target "$od/link.stk"
failed_start "$od/link.stk"
check "failed start, -o a symlink: the link stays" [ "$(readlink "$od/link.stk")" = target ]
check "failed start, -o a symlink: its target's bytes stay" [ "$(cat "$od/target")" = "target data" ]

# -o a character device node (a null device of our own).
mknod "$od/mynull" c 1 3
failed_start "$od/mynull"
check "failed start, -o a device node: it is still there" [ -c "$od/mynull" ]

# -o a FIFO with a reader.  The reader is gone before the next one comes
# (stopped if it still waits): two readers of one FIFO would share what
# the recording below writes.
mkfifo "$od/fifo"
bg cat "$od/fifo" > "$tmp/fifo.got"
reader=$bg_pid
failed_start "$od/fifo"
stop "$reader"
check "failed start, -o a FIFO: it is still there" [ -p "$od/fifo" ]
check "failed start: no temporary left ($(leftovers))" [ -z "$(leftovers)" ]

# Recordings that start.
(umask 022; "$REC" -q -o "$od/new.stk" 1)
check "umask 022: a new capture is mode 600 (got $(stat -c %a "$od/new.stk"))" \
	[ "$(stat -c %a "$od/new.stk")" = 600 ]
(umask 000; "$REC" -q -o "$od/old.stk" 1)
check "umask 000: a capture replacing a 640 file is mode 600 (got $(stat -c %a "$od/old.stk"))" \
	[ "$(stat -c %a "$od/old.stk")" = 600 ]
"$REP" info "$od/old.stk" > "$tmp/old.info" 2>&1
check "-o an existing file: replaced by a capture closed cleanly" grep -q '^verdict: OK' "$tmp/old.info"

"$REC" -q -o "$od/link.stk" 1
check "-o a symlink: the link is replaced by the capture" test -f "$od/link.stk" -a ! -L "$od/link.stk"
check "-o a symlink: its target is not written through" [ "$(cat "$od/target")" = "target data" ]

"$REC" -q -o "$od/mynull" 1
check "-o a device node: records (exit $?) and the node stays" [ -c "$od/mynull" ]

bg cat "$od/fifo" > "$tmp/fifo.stk"
reader=$bg_pid
"$REC" -q -o "$od/fifo" 1
rc=$?
wait "$reader"
check "-o a FIFO: records (exit $rc) and the FIFO stays" [ -p "$od/fifo" ]
"$REP" info "$tmp/fifo.stk" > "$tmp/fifo.info" 2>&1
check "-o a FIFO: the reader gets a capture closed cleanly" grep -q '^verdict: OK' "$tmp/fifo.info"

# A block device: refused, left alone (major 240: local use, no driver).
mknod "$od/blk" b 240 0
"$REC" -q -o "$od/blk" 1 2> "$tmp/blk.err"
rc=$?
said=no
[ "$(cat "$tmp/blk.err")" = "stkrec: $od/blk: not a regular file, character device or FIFO" ] && said=yes
check "-o a block device: exit 1, one line ($(cat "$tmp/blk.err"))" test "$rc" -eq 1 -a $said = yes
check "-o a block device: it is still there" [ -b "$od/blk" ]
check "no temporary left at the end ($(leftovers))" [ -z "$(leftovers)" ]

# One recorder per -o: a second one with the same -o refuses to start
# with one line and leaves the first's capture alone.  Before, both ran
# and the first said "wrote" of a file that was the second's.
bg "$REC" -q -o "$od/same.stk" 2> "$tmp/same1.err"
first=$bg_pid
wait_sampling "$od/same.stk" "$first" || fail "-o same.stk: the first stkrec starts ($(cat "$tmp/same1.err"))"
"$REC" -q -o "$od/same.stk" 1 2> "$tmp/same2.err"
rc=$?
said=no
grep -qxF "stkrec: $od/same.stk: another stkrec is writing it; choose another -o" "$tmp/same2.err" &&
	said=yes
check "a second stkrec -o the same file: exit 1, one line ($rc: $(cat "$tmp/same2.err"))" \
	test "$rc" -eq 1 -a $said = yes
kill -INT "$first"
wait "$first"
rc=$?
check "the first stkrec ends as usual (exit $rc: $(cat "$tmp/same1.err"))" [ "$rc" -eq 0 ]
"$REP" info "$od/same.stk" > "$tmp/same.info" 2>&1
check "... and its capture is at its name, closed cleanly" grep -q '^verdict: OK' "$tmp/same.info"

# The output removed, or replaced by another file, while recording: the
# capture is saved beside as NAME.PID, one line says where, exit 1.
# Before, "wrote NAME" and exit 0 of a file that was gone.
# gone_case HOW: "rm" or "mv" (another file put in its place).
gone_case() {
	f=$od/$1.stk
	bg "$REC" -q -o "$f" 2> "$tmp/$1.err"
	pid=$bg_pid
	wait_sampling "$f" "$pid" || fail "$1: stkrec starts ($(cat "$tmp/$1.err"))"
	if [ "$1" = rm ]; then
		rm "$f"
		how=removed
	else
		echo other > "$f.new" && mv "$f.new" "$f"
		how="replaced by another file"
	fi
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	said=no
	grep -qxF "stkrec: $f was $how during the recording; the capture is saved as $f.$pid" "$tmp/$1.err" &&
		said=yes
	check "$1 of -o while recording: exit 1, one line saying where the capture went ($rc: $(cat "$tmp/$1.err"))" \
		test "$rc" -eq 1 -a $said = yes
	"$REP" info "$f.$pid" > "$tmp/$1.info" 2>&1
	check "$1 of -o while recording: the capture saved is whole" grep -q '^verdict: OK' "$tmp/$1.info"
}
gone_case rm
gone_case mv
check "mv of -o while recording: the file put there is left alone" [ "$(cat "$od/mv.stk")" = other ]

finish
