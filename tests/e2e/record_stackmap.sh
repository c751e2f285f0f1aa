#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_stackmap: a stacks set far too small (--stack-storage-size 64: 64
# ids, a 4 KiB ring) against a workload with known truth
# (tests/tools/pathwork: 400 call paths pw_top_X -> pw_mid_X -> pw_leaf_X,
# path X run only by thread pw(X % 4)).
#  - profile: the set overflows and the kernel sends stacks again; every
#    sample that lost its stack (a full ring) is counted (STAT
#    samples_stack_lost, the summary's warning, and exactly the samples
#    the report shows without frames), and every reported path is one the
#    workload has, in the thread that runs it: no sample is attributed to
#    a stack it did not have.
#  - a set that holds the working set sends each stack once.
#  - offcpu -m 2000000: the 400 short blocks (a stack each) that -m drops
#    are forgotten, the one long block that counts keeps its stacks; no
#    false "increase --stack-storage-size"; the status line's "lost"
#    counts only real losses.  Also when four threads block in each stack
#    together.
#  - offcpu system-wide: MAPS only for processes the file has rows of.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
PW=$O/tests/tools/pathwork
need_files "$PW"

# ---- profile: losses counted, no path misattributed ------------------------
"$REC" -U -F 499 --stack-storage-size 64 -o "$tmp/p.stk" -- "$PW" profile 3 \
	> /dev/null 2> "$tmp/p.err"
rc=$?
check "profile: exit 0 ($rc: $(cat "$tmp/p.err"))" [ "$rc" -eq 0 ]
lost=$(stat_of "$tmp/p.stk" samples_stack_lost)
total=$(stat_of "$tmp/p.stk" samples)
resent=$(stat_of "$tmp/p.stk" stacks_resent)
check "profile: the set overflowed, its evicted stacks were sent again ($resent; $lost of $total samples lost their stack)" \
	[ "$resent" -gt 0 ]
if [ "$lost" -gt 0 ]; then
	check "profile: the summary says so with the hint" \
		grep -q "^stkrec: warning: $lost of $total samples have no stack: the kernel's ring of new stacks was full (--stack-storage-size 64); increase --stack-storage-size\$" "$tmp/p.err"
else
	check "profile: no loss, no hint" sh -c "! grep -q 'stack-storage-size' '$tmp/p.err'"
fi
"$REP" -f folded "$tmp/p.stk" > "$tmp/p.folded" 2> /dev/null
# Lines "comm;[Missed User Stack] count" are samples whose stack was lost
# (profile.py's mark); the others are checked
# against the truth: below pw_thread, pw_top_X, pw_mid_X, pw_leaf_X (and
# work) in that order, one X, in thread pw(X % 4).  One frame may be
# missing right above the last one: a sample on the first instructions of
# a function, before it pushed its frame pointer, shows its caller's
# caller (a frame-pointer walk cannot see the caller there; stkrec walks
# frame pointers until pathwork's tables are built, longer under load:
# CI once saw pw2;start_thread;pw_top_362).  Any other
# gap, another X or the wrong thread is a sample attributed to a stack it
# did not have.
awk -v threads=4 '
{
	n = $NF; sub(/ [0-9]+$/, "")
	k = split($0, f, ";")
	all += n
	if (k == 2 && f[2] == "[Missed User Stack]") { nostack += n; next }
	for (t = 1; t <= k && f[t] != "pw_thread"; t++)
		;
	# pw_thread names its thread first (snprintf, pthread_setname_np:
	# named without their symbol versions, pthread_setname_np@@GLIBC_2.34
	# in libc6-dbg'"'"'s .symtab): a sample there is on no path, and no
	# wrong one either.
	if (t < k && f[t + 1] ~ /^((__)?snprintf|pthread_setname_np)$/) next
	# On pw_top_X'"'"'s first instructions it is pw_thread that is missing.
	if (t > k && k >= 2 && f[k] ~ /^pw_top_[0-9]+$/ && f[k - 1] == "start_thread")
		t = k - 1
	bad = 0; x = -1; prev = -1; gaps = 0
	for (i = t + 1; i <= k; i++) {
		if (f[i] == "work") { lv = 3 }
		else if (f[i] ~ /^pw_(top|mid|leaf)_[0-9]+$/) {
			split(f[i], p, "_")
			lv = p[2] == "top" ? 0 : p[2] == "mid" ? 1 : 2
			if (x >= 0 && p[3] != x) bad = 1
			x = p[3]
		} else { bad = 1; continue }
		if (lv == prev + 2 && i == k && !gaps) gaps++
		else if (lv != prev + 1) bad = 1
		prev = lv
	}
	if (t > k && $0 ~ /pw_(top|mid|leaf)_/) bad = 1
	if (x >= 0) {
		if (f[1] != "pw" (x % threads)) bad = 1
		paths[x] = 1
	}
	if (bad) { wrong += n; if (shown++ < 3) print "wrong: " $0 > "/dev/stderr" }
	else if (x >= 0) good += n
}
END {
	np = 0; for (x in paths) np++
	printf "%d %d %d %d %d\n", all, nostack, wrong, good, np
}' "$tmp/p.folded" > "$tmp/p.truth" 2> "$tmp/p.wrong"
read -r all nostack wrong good npaths < "$tmp/p.truth"
check "profile: the report holds every sample ($all of $total)" [ "$all" -eq "$total" ]
check "profile: exactly the $lost lost samples are shown as [Missed User Stack] ($nostack)" \
	[ "$nostack" -eq "$lost" ]
check "profile: no sample on a path the workload does not have ($wrong; $(head -c 300 "$tmp/p.wrong"))" \
	[ "$wrong" -eq 0 ]
check "profile: samples on the workload's paths ($good, $npaths distinct paths)" \
	[ "$good" -gt 0 -a "$npaths" -ge 64 ]

# ---- a set that holds the working set does not churn --------------------------
# pathwork offcpu blocks once in each of its 400 paths (a user stack of
# its own each: at least 400 stacks, ~408 with the kernel's and the
# threads' start and end), then 1.5 s in one more: a set of 512 holds
# them all, so each is sent once (the LRU set's per-CPU free lists, or
# two CPUs meeting a new stack at once, may send a few twice), and every
# one is counted, so none is forgotten.  (A 64-entry set sends most of
# them again.)  The 400 are the workload's truth, not a machine's: CI
# once saw 355 when pathwork's sleeps were 50 us, some too short to leave
# the CPU on a loaded VM.
"$REC" offcpu --stack-storage-size 512 -o "$tmp/ws.stk" -- "$PW" offcpu 1500000 \
	> /dev/null 2> "$tmp/ws.err"
rc=$?
ws=$(stat_of "$tmp/ws.stk" stacks_written)
check "working set in the set: exit 0, no stack lost ($rc: $(cat "$tmp/ws.err"))" \
	[ "$rc" -eq 0 -a "$(stat_of "$tmp/ws.stk" samples_stack_lost)" -eq 0 ]
# (What the kernel side saw is in the line, for a failure in CI's log.)
wsstat=$("$DUMP" "$tmp/ws.stk" | awk -F'\t' '$1 == "STAT" { v[$2] = $3 }
	END { printf "episodes %d, filtered %d, counts full %d, start full %d", v["samples"], v["offcpu_filtered_block_time"], v["counts_map_full"], v["offcpu_start_map_full"] }')
check "working set in the set: every path's stack, each written once, a flush with them in it ($ws of 512, at least 400; $(stat_of "$tmp/ws.stk" flushes) flushes; $wsstat)" \
	[ "$ws" -ge 400 -a "$ws" -lt 448 -a "$(stat_of "$tmp/ws.stk" flushes)" -ge 2 ]
# Every stack comes from BPF's stack ring (the ring's ids are the
# user-space stkrec_stack_id() of its frames: a hash that disagreed with
# BPF's would leave every row without its stack).
check "working set in the set: every stack taken from the stack ring ($(stat_of "$tmp/ws.stk" stacks_from_ring) of $ws; $(stat_of "$tmp/ws.stk" stack_lookup_missing) missing)" \
	[ "$(stat_of "$tmp/ws.stk" stacks_from_ring)" -ge "$ws" -a "$(stat_of "$tmp/ws.stk" stack_lookup_missing)" -eq 0 ]
check "working set in the set: few sent twice, none forgotten ($(stat_of "$tmp/ws.stk" stacks_resent), $(stat_of "$tmp/ws.stk" stacks_forgotten))" \
	[ "$(stat_of "$tmp/ws.stk" stacks_resent)" -le $((ws / 20)) -a "$(stat_of "$tmp/ws.stk" stacks_forgotten)" -eq 0 ]

# ---- offcpu: dropped episodes' stacks are forgotten ----------------------------
ofc() {
	"$REC" offcpu -m 2000000 --stack-storage-size 64 -o "$tmp/$1.stk" -- "$PW" offcpu 2500000
}
ofc o > /dev/null 2> "$tmp/o.err"
rc=$?
check "offcpu: exit 0 ($rc: $(cat "$tmp/o.err"))" [ "$rc" -eq 0 ]
check "offcpu: no false hint to increase --stack-storage-size" \
	sh -c "! grep -q 'stack-storage-size' '$tmp/o.err'"
"$REP" -f folded "$tmp/o.stk" > "$tmp/o.folded" 2> /dev/null
# (main and not [Missed User Stack]: whether the unwinder has pathwork's
# libc tables yet decides if pw_long_sleep itself shows, not the map.)
check "offcpu: the long block that counts has its user stack ($(cat "$tmp/o.folded"))" \
	grep -q '^pathwork;.*;main;.*schedule' "$tmp/o.folded"
check "offcpu: no episode lost its stack (STAT samples_stack_lost $(stat_of "$tmp/o.stk" samples_stack_lost))" \
	[ "$(stat_of "$tmp/o.stk" samples_stack_lost)" -eq 0 ]
# The 400 short blocks' stacks came to the recorder at switch-out; -m
# filtered their episodes, nothing holds them: forgotten (held stacks
# past the set's 64 make the recorder ask the holders), not written.
dropped=$(stat_of "$tmp/o.stk" stacks_forgotten)
check "offcpu: the short blocks' stacks were forgotten ($dropped forgotten of $(stat_of "$tmp/o.stk" stacks_stored) sent; $(stat_of "$tmp/o.stk" offcpu_filtered_block_time) filtered; $(stat_of "$tmp/o.stk" stacks_written) written)" \
	[ "$dropped" -ge 300 -a "$(stat_of "$tmp/o.stk" stacks_written)" -lt 64 ]

# Four threads block in each of 400 stacks together (a stack has several
# holders at once); -m drops them all: forgotten once nothing holds them,
# and the long block that follows (after pw_pause) keeps its stacks.
"$REC" offcpu -m 2000000 --stack-storage-size 64 -o "$tmp/sh.stk" -- "$PW" offshared 2500000 \
	> /dev/null 2> "$tmp/sh.err"
rc=$?
"$REP" -f folded "$tmp/sh.stk" > "$tmp/sh.folded" 2> /dev/null
shstat=$("$DUMP" "$tmp/sh.stk" | awk -F'\t' '$1 == "STAT" { v[$2] = $3 } $1 == "META" { m[$2] = $3 }
	END { printf "episodes %d, filtered %d, counts full %d, start full %d, end %s after %.1f s", v["samples"], v["offcpu_filtered_block_time"], v["counts_map_full"], v["offcpu_start_map_full"], m["end_reason"], m["duration_ns"] / 1e9 }')
check "offcpu, shared stacks: exit 0 and the long block has its user stack ($rc $(cat "$tmp/sh.err"); $shstat; $(cat "$tmp/sh.folded"))" \
	grep -q '^pathwork;.*;main;.*schedule' "$tmp/sh.folded"
check "offcpu, shared stacks: no episode lost its stack, the unheld ones were forgotten ($(stat_of "$tmp/sh.stk" stacks_forgotten))" \
	[ "$(stat_of "$tmp/sh.stk" samples_stack_lost)" -eq 0 -a "$(stat_of "$tmp/sh.stk" stacks_forgotten)" -gt 0 ]

if command -v script > /dev/null; then
	script -qec "$REC offcpu -m 2000000 --stack-storage-size 64 -o $tmp/tty.stk -- $PW offcpu 2500000" \
		"$tmp/tty.txt" > /dev/null 2>&1
	# The last status line, while pw_long_sleep blocks.
	tr '\r' '\n' < "$tmp/tty.txt" | grep '^stkrec: [0-9]*s ' | tail -n 1 > "$tmp/tty.last"
	check "offcpu status line: none lost ($(cat "$tmp/tty.last"))" \
		grep -Eq ' [0-9]+ stacks  0 lost' "$tmp/tty.last"
else
	skip "status line on a TTY" "script(1) (bsdutils) is needed to give stkrec a TTY"
fi

# ---- offcpu system-wide: MAPS only for processes with rows -------------------
bg "$PW" offcpu 1500000
"$REC" offcpu -q -m 1000000 -o "$tmp/s.stk" 3 2> "$tmp/s.err"
"$DUMP" "$tmp/s.stk" | awk -F'\t' '
	$1 == "OFFC" { row[$2] = 1; if ($7) row[$7] = 1 }
	$1 == "MAPS" { maps[$2] = 1 }
	END { for (t in maps) { n++; if (!(t in row)) extra++ } printf "%d %d\n", n, extra }' \
	> "$tmp/s.maps"
read -r nmaps extra < "$tmp/s.maps"
check "offcpu system-wide: MAPS of $nmaps processes, none without a row ($extra)" [ "$extra" -eq 0 ]

finish
