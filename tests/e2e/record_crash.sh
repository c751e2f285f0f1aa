#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_crash: what survives when stkrec cannot finish.
#  - kill -9: every chunk flushed before the kill is in the file (what
#    the intervals since the last flush counted is lost: one interval, up
#    to four in a quiet profile), stkreport info reads it and says it was
#    not closed cleanly, and every STAT in it agrees with the rows before
#    it;
#  - the disk fills up while recording (a 48 KiB tmpfs): stkrec stops,
#    says how many chunks it kept in one line, exits 1, and the file holds
#    exactly those chunks, all readable; full before the file header:
#    one line, exit 1, and nothing left behind (no 0-byte capture);
#    one with a page free leaves a readable one.
# The workload (cpuwork, two threads) runs until the test ends; the kill
# comes once the file holds three flushes and counts, whatever the time
# that took; the full-disk recording has no DURATION: the disk filling
# ends it (the 120 s bound only stops a recorder that never ends).
# Exclusive: it mounts tmpfs file systems (unmounted in a trap), and the
# first flush, which must fit the small one, holds the maps of every
# process sampled: other tests' processes would swell it.
# harness: exclusive
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

bg "$CW" 600 2
cw=$bg_pid

# ---- kill -9 ----------------------------------------------------------------
bg "$REC" -q -F 299 -o "$tmp/k9.stk"
rpid=$bg_pid
# Four flushes with counts (STAT flushes, CNTS rows) on disk, rather than
# a time (at 299 Hz: samples land while each flush runs, which STAT must
# not count before their rows are written).
k9_ready() {
	[ "$(stat_of "$tmp/k9.stk" flushes 2>/dev/null)" -ge 4 ] &&
		[ "$(samples "$tmp/k9.stk" 2>/dev/null)" -gt 0 ]
}
wait_sampling "$tmp/k9.stk" "$rpid" && wait_until k9_ready ||
	fail "kill -9: no four flushes with counts in the file"
flushed=$("$DUMP" "$tmp/k9.stk" | grep -c '^CHUNK')
kill -KILL "$rpid"
wait "$rpid" 2> /dev/null
"$DUMP" "$tmp/k9.stk" > "$tmp/k9.dump"
rc=$?
n=$(grep -c '^CHUNK' "$tmp/k9.dump")
check "kill -9: the file reads without errors (stkdump exit $rc)" [ "$rc" -eq 0 ]
check "kill -9: all $flushed chunks seen before the kill are there ($n)" [ "$n" -ge "$flushed" ]
check "kill -9: it has counts ($(samples "$tmp/k9.stk") samples)" [ "$(samples "$tmp/k9.stk")" -gt 0 ]
check "kill -9: no trailer (SEGMENT closed 0)" grep -q "^SEGMENT	0	0	" "$tmp/k9.dump"
"$REP" info "$tmp/k9.stk" > "$tmp/k9.info" 2>&1
rc=$?
check "kill -9: stkreport info exits 1 ($rc)" [ "$rc" -eq 1 ]
check "kill -9: stkreport info says NOT CLOSED CLEANLY" grep -q '^verdict: NOT CLOSED CLEANLY' "$tmp/k9.info"
# Every STAT says what the chunks before it hold: its samples are the
# counts of the CNTS rows before it, plus the samples no row could take
# (counts_full).  Before: STAT read BPF's counters as it was written, with
# the samples taken since the rows were drained (1708 against 1484 rows
# in one capture killed under load).
set -- $(awk -F'\t' '
	$1 == "CHUNK" { if (instat) { nstat++; if (s != rows + full) bad++; if (!shown && s != rows + full) shown = s " != " rows " + " full }
			instat = $3 == "STAT"; s = full = 0 }
	$1 == "CNTS" { rows += $NF }
	instat && $1 == "STAT" && $2 == "samples" { s = $3 }
	instat && $1 == "STAT" && $2 == "counts_full" { full = $3 }
	END { if (instat) { nstat++; if (s != rows + full) bad++; if (!shown && s != rows + full) shown = s " != " rows " + " full }
	      printf "%d %d %s\n", nstat, bad + 0, shown ? shown : "-" }' "$tmp/k9.dump")
check "kill -9: every STAT's samples are the rows before it (+ counts_full): $2 of $1 differ (${3:-} ${4:-} ${5:-} ${6:-} ${7:-})" \
	[ "$1" -ge 4 -a "$2" -eq 0 ]
check "kill -9: stkreport info still shows the samples" grep -q "^samples: $(samples "$tmp/k9.stk")\$" "$tmp/k9.info"

# ---- ENOSPC -----------------------------------------------------------------
mnt=$tmp/small
mkdir "$mnt"
if mount -t tmpfs -o size=128k tmpfs "$mnt" 2> "$tmp/mount.err"; then
	at_exit='umount "$mnt" 2>/dev/null'
	# All CPUs at a high rate with kernel stacks: about 10 KiB a second.  The
	# first flush holds every process's maps and embedded symbols, which
	# under a parallel make check took more than 48 KiB before any counts.
	bg "$REC" -F 997 --flush-interval 0.2 -o "$mnt/full.stk" > "$tmp/full.out" 2> "$tmp/full.err"
	rpid=$bg_pid
	gone() {
		! kill -0 "$1" 2>/dev/null
	}
	wait_until gone "$rpid" || { fail "ENOSPC: stkrec still records after 120 s"; kill -TERM "$rpid"; }
	wait "$rpid"
	rc=$?
	msg=$(cat "$tmp/full.err")
	check "ENOSPC: exit 1 ($rc)" [ "$rc" -eq 1 ]
	check "ENOSPC: one line: '$msg'" \
		sh -c "[ \$(grep -c . '$tmp/full.err') -eq 1 ] && grep -Eq '^stkrec: $mnt/full.stk: No space left on device while writing; [0-9]+ chunks kept\$' '$tmp/full.err'"
	kept=$(sed -n 's/.*; \([0-9]*\) chunks kept$/\1/p' "$tmp/full.err")
	"$DUMP" "$mnt/full.stk" > "$tmp/full.dump"
	rc=$?
	n=$(grep -c '^CHUNK' "$tmp/full.dump")
	check "ENOSPC: the file reads without errors (stkdump exit $rc)" [ "$rc" -eq 0 ]
	check "ENOSPC: it holds exactly the $kept chunks kept ($n)" [ "$n" = "$kept" ]
	check "ENOSPC: and they include counts" [ "$(samples "$mnt/full.stk")" -gt 0 ]
	# Full before the file header: nothing is left behind (no 0-byte
	# capture, no temporary file).
	rm -f "$mnt/full.stk"
	head -c 1M /dev/zero > "$mnt/filler" 2>/dev/null
	"$REC" -q -o "$mnt/h.stk" 1 > /dev/null 2> "$tmp/hdr.err"
	rc=$?
	check "ENOSPC on the file header: exit 1 ($rc)" [ "$rc" -eq 1 ]
	check "ENOSPC on the file header: one line ($(cat "$tmp/hdr.err"))" \
		[ "$(cat "$tmp/hdr.err")" = "stkrec: $mnt/h.stk: No space left on device" ]
	left=$(ls -A "$mnt" | grep -v '^filler$')
	check "ENOSPC on the file header: no file left behind (${left:-none})" [ -z "$left" ]
	umount "$mnt" && at_exit=
else
	fail "ENOSPC: cannot mount a tmpfs: $(cat "$tmp/mount.err")"
fi

# ---- ENOSPC at once: one page, full before the start or after the header ----
if mount -t tmpfs -o size=4k tmpfs "$mnt" 2> "$tmp/mount.err"; then
	at_exit='umount "$mnt" 2>/dev/null'
	dd if=/dev/zero of="$mnt/fill" bs=4096 count=1 2> /dev/null
	"$REC" -q -o "$mnt/none.stk" 1 2> "$tmp/none.err"
	rc=$?
	check "a full disk at the start: exit 1, one line ($rc: $(cat "$tmp/none.err"))" \
		[ "$rc" -eq 1 -a "$(cat "$tmp/none.err")" = "stkrec: $mnt/none.stk: No space left on device" ]
	check "a full disk at the start: no file, no temporary left ($(ls -A "$mnt" | tr '\n' ' '))" \
		[ "$(ls -A "$mnt")" = fill ]
	rm -f "$mnt/fill"
	"$REC" -q -o "$mnt/page.stk" 2 2> "$tmp/page.err"
	rc=$?
	check "one page of disk: exit 1, one line ($rc: $(cat "$tmp/page.err"))" \
		sh -c "[ $rc -eq 1 ] && [ \$(grep -c . '$tmp/page.err') -eq 1 ] && grep -Eq '^stkrec: $mnt/page.stk: No space left on device while writing; [0-9]+ chunks kept\$' '$tmp/page.err'"
	"$REP" info "$mnt/page.stk" > "$tmp/page.info" 2>&1
	check "one page of disk: the file left reads, not closed cleanly" \
		grep -q '^verdict: NOT CLOSED CLEANLY' "$tmp/page.info"
	check "one page of disk: no temporary left ($(ls -A "$mnt" | tr '\n' ' '))" \
		[ "$(ls -A "$mnt")" = page.stk ]
	umount "$mnt" && at_exit=
else
	fail "ENOSPC: cannot mount a tmpfs: $(cat "$tmp/mount.err")"
fi

stop "$cw"
finish
