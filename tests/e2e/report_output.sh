#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_output: stkreport's output is never silently lost, and never
# replaces its input.
#  - `stkreport -o X X` (and diff -o BASE) is refused, X unchanged;
#  - the report, diff and info to /dev/full: exit 1, one line that says
#    "No space left on device" (not a generic I/O error);
#  - a closed pipe with SIGPIPE ignored: one line "Broken pipe";
#  - -o on a full tmpfs: one line, and no partial file left behind.
# No BPF needed; the tmpfs part needs root (mount).

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie"

"$MK" --synthetic 3000 "$tmp/x.stk" "$FX/root/fx/fx_pie" "$FX/root/fx/libfx.so" >/dev/null ||
	{ fail "mkcapture --synthetic"; finish; }
cp "$tmp/x.stk" "$tmp/orig.stk"

# one_line NAME RC WANT_RC WANT_LINE: NAME.err is exactly WANT_LINE.
one_line() {
	check "$1: exit $3 (got $2)" [ "$2" -eq "$3" ]
	if [ "$(cat "$tmp/$1.err")" = "$4" ]; then pass "$1: '$4'"; else
		fail "$1: expected '$4', got: $(cat "$tmp/$1.err")"; fi
}

"$REP" -f folded -o "$tmp/x.stk" "$tmp/x.stk" 2>"$tmp/self.err"
one_line self $? 2 "stkreport: -o $tmp/x.stk is the capture being read ($tmp/x.stk); write elsewhere"
check "-o X X: X unchanged" cmp -s "$tmp/x.stk" "$tmp/orig.stk"
ln "$tmp/x.stk" "$tmp/hard.stk"
"$REP" -o "$tmp/hard.stk" "$tmp/x.stk" 2>"$tmp/hard.err"
check "-o a hard link of the input: refused (exit 2)" [ $? -eq 2 ]
"$REP" -o "$tmp/x.stk" - <"$tmp/x.stk" 2>"$tmp/stdin.err"
check "-o X with X on stdin: refused (exit 2)" [ $? -eq 2 ]
"$REP" diff -o "$tmp/x.stk" "$tmp/orig.stk" "$tmp/x.stk" 2>"$tmp/diffself.err"
check "diff -o NEW: refused (exit 2)" [ $? -eq 2 ]
check "diff -o NEW: NEW unchanged" cmp -s "$tmp/x.stk" "$tmp/orig.stk"

"$REP" -f folded "$tmp/x.stk" >/dev/full 2>"$tmp/full.err"
one_line full $? 1 "stkreport: writing the report: No space left on device"
"$REP" -f folded -o /dev/full "$tmp/x.stk" 2>"$tmp/fullo.err"
one_line fullo $? 1 "stkreport: writing /dev/full: No space left on device"
"$REP" diff "$tmp/x.stk" "$tmp/orig.stk" >/dev/full 2>"$tmp/fulld.err"
one_line fulld $? 1 "stkreport: writing the diff: No space left on device"
"$REP" info "$tmp/x.stk" >/dev/full 2>"$tmp/fulli.err"
one_line fulli $? 1 "stkreport: info: writing the output: No space left on device"

# SIGPIPE ignored (as a parent may leave it): the write fails with EPIPE.
# The report (~300 KB) is far more than a pipe holds.
(trap '' PIPE; "$REP" -f folded "$tmp/x.stk" 2>"$tmp/pipe.err"; echo $? >"$tmp/pipe.rc") | head -c 1 >/dev/null
one_line pipe "$(cat "$tmp/pipe.rc")" 1 "stkreport: writing the report: Broken pipe"

mnt=$tmp/small
mkdir "$mnt"
if mount -t tmpfs -o size=64k tmpfs "$mnt" 2>"$tmp/mount.err"; then
	at_exit='umount "$mnt" 2>/dev/null'
	head -c 1M /dev/zero >"$mnt/filler" 2>/dev/null
	"$REP" -f folded -o "$mnt/r.txt" "$tmp/x.stk" 2>"$tmp/tmpfs.err"
	one_line tmpfs $? 1 "stkreport: writing $mnt/r.txt: No space left on device"
	check "full tmpfs: no partial report left" [ ! -e "$mnt/r.txt" ]
	umount "$mnt" && at_exit=
else
	skip "full tmpfs" "cannot mount a tmpfs: $(cat "$tmp/mount.err")"
fi
finish
