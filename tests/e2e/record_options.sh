#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_options: what each stkrec option changes in the file.
#  -U: no kernel stacks and no kernel IPs; -K: no user stacks;
#  -p: only that process, though another one burns CPU next to it;
#  -t: only that thread of a two-thread process;
#  -C: accepted and recorded in META;
#  --kallsyms=full: the whole kernel symbol table;
#  --stack-storage-size too small (2 ids: every sample sends its stack
#    again) and the recorder stopped (SIGSTOP) while the burners use 3 s of
#    CPU, some 15,000 samples at 4999 Hz (its 256 KiB ring of new stacks
#    holds ~3,000): samples still counted, the stacks the full ring lost
#    counted in STAT, and profile.py's hint printed;
#  --flush-interval 0.25, until it has flushed 8 times (STAT): the i-th
#    flush never before i intervals from the start, some two less than
#    0.5 s apart (with the default 1 s, only a flush late by half a second
#    makes such a gap), no interval ended without a flush (asked for:
#    STAT quiet_intervals 0), and each CNTS chunk (but the final flush's)
#    holds rows of one 0.25 s interval of the grid the kernel counts on
#    (a flush splits the one it comes in), in time order;
#  the status line: on a TTY only (stopped once one came), never
#    with -q (none by its second flush), nor when stderr is no TTY.
# The recordings run at once over the same two burners, which run until
# the test stops them, so "without -p" really is the same window as "-p";
# they are stopped (SIGINT) once every one samples and the burners have
# used 1 s of CPU each in that window (cw2's second thread too): what each
# check counts comes from what the burners did, not from how long a busy
# machine took to start the recorders.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone: a dozen recorders at once load the machine for the others.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

ENOENT=-2

# Two CPU burners, so each filter has something to exclude; an hour only
# bounds a test that dies without its trap.
bg "$CW" 3600
cw1=$bg_pid
bg "$CW" 3600 2
cw2=$bg_pid
# cw2's second thread, once it exists.
second_thread() {
	cw2_tid=$(ls "/proc/$cw2/task" 2>/dev/null | grep -v "^$cw2\$" | head -1)
	[ -n "$cw2_tid" ]
}
wait_until second_thread || fail "cpuwork $cw2 starts its second thread"

# rec NAME STKREC-ARGS...: stkrec in the background, stderr in NAME.err.
rec() {
	_n=$1
	shift
	bg "$REC" "$@" 2> "$tmp/$_n.err"
	eval "pid_$_n=\$bg_pid"
}
# rc_of NAME: its exit status, once all have ended.
rc_of() { eval "echo \$rc_$1"; }
# flushes FILE: STAT flushes of a file being written (0 before the first).
flushes() { stat_of "$1" flushes 2> /dev/null; }
# thread_ticks PID TID: utime + stime of one thread, in clock ticks.
thread_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/task/$2/stat"
}

# No DURATION: each runs until the SIGINT below.
batch="u k p all t p2 c full notty small"
rec u -q -U -F 99 -o "$tmp/u.stk"
rec k -q -K -F 99 -o "$tmp/k.stk"
rec p -q -p "$cw2" -F 99 -o "$tmp/p.stk"
rec all -q -F 99 -o "$tmp/all.stk"
rec t -q -t "$cw2_tid" -F 99 -o "$tmp/t.stk"
rec p2 -q -p "$cw1,$cw2" -F 99 -o "$tmp/p2.stk"
rec c -q -C 0 -F 99 -o "$tmp/c.stk"
rec full -q --kallsyms=full -F 99 -o "$tmp/full.stk"
rec notty -p "$cw1" -o "$tmp/notty.stk"
rec small -F 4999 --stack-storage-size 2 -o "$tmp/small.stk"
# On a TTY (script(1) gives one; -f writes its typescript as it comes).
# The shell script(1) runs says stkrec's pid, then becomes stkrec.
tty=
if command -v script > /dev/null; then
	for n in tty ttyq; do
		q=
		[ $n = ttyq ] && q=-q
		bg script -qfec "echo \$\$ > $tmp/$n.pid; exec $REC $q -p $cw1 -o $tmp/$n.stk" \
			"$tmp/$n.txt" > /dev/null 2>&1
		eval "pid_$n=\$bg_pid"
	done
	tty="tty ttyq"
fi
for n in $batch $tty; do
	eval "wait_sampling \"\$tmp/\$n.stk\" \$pid_$n" ||
		fail "$n: stkrec starts sampling ($(cat "$tmp/$n.err" 2> /dev/null))"
done
# Stopped once it samples: nothing takes its ring of new stacks meanwhile.
kill -STOP "$pid_small"

# The window: from here, until the burners have used 1 s of CPU each (99
# samples at 99 Hz), and together 3 s (for the stopped recorder's ring).
c1=$(cpu_ticks "$cw1") c2=$(cpu_ticks "$cw2") ct=$(thread_ticks "$cw2" "$cw2_tid")
burned() {
	_a=$(cpu_ticks "$cw1") _b=$(cpu_ticks "$cw2") _t=$(thread_ticks "$cw2" "$cw2_tid")
	[ "$_a" -ge $((c1 + 100)) ] && [ "$_t" -ge $((ct + 100)) ] &&
		[ $((_a + _b)) -ge $((c1 + c2 + 300)) ]
}
wait_until burned || fail "the burners used 3 s of CPU"
kill -CONT "$pid_small"
for n in $batch; do
	eval "kill -INT \$pid_$n"
done
if [ -n "$tty" ]; then
	# The status line comes once a second: stopped once the first came,
	# and -q's once its first second has gone by (its second flush: the
	# status is shown just after the flush at each second).
	wait_until grep -q "$(printf '\r')stkrec: [0-9]*s " "$tmp/tty.txt" ||
		fail "tty: no status line came"
	ttyq_flushed() { [ "$(flushes "$tmp/ttyq.stk")" -ge 2 ]; }
	wait_until ttyq_flushed || fail "ttyq: no second flush came"
	kill -INT "$(cat "$tmp/tty.pid")" "$(cat "$tmp/ttyq.pid")"
fi
# All of them, not the burners.
for n in $batch; do
	eval "wait \$pid_$n"
	eval "rc_$n=$?"
done
for n in $tty; do
	eval "wait \$pid_$n"
done

# --flush-interval alone, with nothing else flushing beside it: until it
# has flushed 8 times and cw1 has used 0.1 s of CPU (~10 samples) meanwhile
# (the 1200 readings only bound a broken recorder).
rec fl -q -p "$cw1" --flush-interval 0.25 -F 99 -o "$tmp/fl.stk"
wait_sampling "$tmp/fl.stk" "$pid_fl" || fail "fl: stkrec starts sampling ($(cat "$tmp/fl.err"))"
c1=$(cpu_ticks "$cw1")
i=0
while { [ "$(flushes "$tmp/fl.stk")" -lt 8 ] || [ "$(cpu_ticks "$cw1")" -lt $((c1 + 10)) ]; } &&
	[ $i -lt 1200 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT "$pid_fl"
wait "$pid_fl"
rc_fl=$?
stop "$cw1"
stop "$cw2"

# ---- -U / -K --------------------------------------------------------------
rc=$(rc_of u)
check "-U: exit 0 ($(cat "$tmp/u.err"))" [ $rc -eq 0 ]
"$DUMP" "$tmp/u.stk" > "$tmp/u.dump"
bad=$(awk -F'\t' -v e=$ENOENT '$1 == "CNTS" && ($6 != e || $7 != "0x0" || $8 != "0x0") { n++ } END { print n + 0 }' "$tmp/u.dump")
users=$(awk -F'\t' '$1 == "CNTS" && $5 >= 0 { n += $9 } END { print n + 0 }' "$tmp/u.dump")
check "-U: every row has kernel stack -ENOENT and no kernel IPs ($bad rows do not)" [ "$bad" -eq 0 ]
check "-U: user stacks recorded ($users samples)" [ "$users" -gt 0 ]
check "-U: no KSYM chunk" [ "$(grep -c '^KSYM' "$tmp/u.dump")" -eq 0 ]
check "-U: META user_stacks_only 1" [ "$(meta_of "$tmp/u.stk" user_stacks_only)" = 1 ]

rc=$(rc_of k)
check "-K: exit 0 ($(cat "$tmp/k.err"))" [ $rc -eq 0 ]
"$DUMP" "$tmp/k.stk" > "$tmp/k.dump"
bad=$(awk -F'\t' -v e=$ENOENT '$1 == "CNTS" && $5 != e { n++ } END { print n + 0 }' "$tmp/k.dump")
check "-K: every row has user stack -ENOENT ($bad rows do not)" [ "$bad" -eq 0 ]
ustk=$(awk -F'\t' '$1 == "STCK" && $4 !~ /^0xffff/ { n++ } END { print n + 0 }' "$tmp/k.dump")
check "-K: no user stack in STCK ($ustk)" [ "$ustk" -eq 0 ]
check "-K: META kernel_stacks_only 1" [ "$(meta_of "$tmp/k.stk" kernel_stacks_only)" = 1 ]

# ---- -p / -t --------------------------------------------------------------
rc=$(rc_of p)
check "-p: exit 0 ($(cat "$tmp/p.err"))" [ $rc -eq 0 ]
mine=$(samples "$tmp/p.stk" "$cw2")
all=$(samples "$tmp/p.stk")
check "-p $cw2: $mine samples, all of them its own ($all)" [ "$mine" -gt 0 -a "$mine" -eq "$all" ]
# The same window without -p does see the other burner: the filter, not
# luck, excluded it.
check "without -p: the other burner $cw1 is sampled too" [ "$(samples "$tmp/all.stk" "$cw1")" -gt 0 ]
check "-p: META pid_filter $cw2" [ "$(meta_of "$tmp/p.stk" pid_filter)" = "$cw2" ]

rc=$(rc_of t)
check "-t: exit 0 ($(cat "$tmp/t.err"))" [ $rc -eq 0 ]
"$DUMP" "$tmp/t.stk" > "$tmp/t.dump"
tids=$(awk -F'\t' '$1 == "CNTS" { print $3 }' "$tmp/t.dump" | sort -u | tr '\n' ' ')
check "-t $cw2_tid: only that thread is sampled (tids: $tids)" [ "$tids" = "$cw2_tid " ]

check "-p A,B: both processes sampled" \
	[ "$(samples "$tmp/p2.stk" "$cw1")" -gt 0 -a "$(samples "$tmp/p2.stk" "$cw2")" -gt 0 ]

# ---- -C ------------------------------------------------------------------
rc=$(rc_of c)
check "-C 0: exit 0 ($(cat "$tmp/c.err"))" [ $rc -eq 0 ]
check "-C 0: META cpu_filter 0" [ "$(meta_of "$tmp/c.stk" cpu_filter)" = 0 ]

# ---- --kallsyms=full ------------------------------------------------------
nk=$("$DUMP" "$tmp/full.stk" | grep -c '^KSYM')
nsys=$(grep -c . /proc/kallsyms)
# BPF programs loaded meanwhile (ours, or anyone's) add and remove symbols.
check "--kallsyms=full: $nk symbols stored, /proc/kallsyms has $nsys" \
	within "$nk" $((nsys - nsys / 100)) $((nsys + nsys / 100))
check "--kallsyms=full: META kallsyms full" [ "$(meta_of "$tmp/full.stk" kallsyms)" = full ]
nk=$("$DUMP" "$tmp/all.stk" | grep -c '^KSYM')
check "default: only covering symbols ($nk)" [ "$nk" -lt $((nsys / 10)) ]

# ---- --stack-storage-size too small ---------------------------------------
rc=$(rc_of small)
check "tiny stacks set: still exit 0 ($rc)" [ "$rc" -eq 0 ]
full=$(stat_of "$tmp/small.stk" stacks_map_full)
enomem=$("$DUMP" "$tmp/small.stk" | awk -F'\t' '$1 == "CNTS" && ($5 == -12 || $6 == -12) { n += $9 } END { print n + 0 }')
check "tiny stacks set: ring-full losses counted in STAT ($full) and rows carry -ENOMEM ($enomem)" \
	[ "$full" -gt 0 -a "$enomem" -gt 0 ]
check "tiny stacks set: samples still counted ($(samples "$tmp/small.stk"))" [ "$(samples "$tmp/small.stk")" -gt 0 ]
check "tiny stacks set: profile.py's hint printed" grep -q 'increase --stack-storage-size' "$tmp/small.err"
check "tiny stacks set: the set of 2 overflowed, stacks came again ($(stat_of "$tmp/small.stk" stacks_resent))" \
	[ "$(stat_of "$tmp/small.stk" stacks_resent)" -gt 0 ]

# ---- --flush-interval ------------------------------------------------------
check "--flush-interval: exit 0 ($rc_fl: $(cat "$tmp/fl.err"))" [ "$rc_fl" -eq 0 ]
# The flushes' times from the start of sampling: STAT duration_ns, one
# STAT chunk per flush, the last one the final flush's (at the SIGINT).
# Of the flushes before it: N, EARLY of them before (their index)
# intervals from the start, FAST gaps between two under 0.5 s (twice the
# interval; the default 1 s would need a flush late by half a second for
# one).  Of the CNTS chunks (an interval without a row of cw1 has none):
# NC, and BAD of them, but for the last (the final flush's), not inside one
# interval of the grid (the first chunk's start, iv apart; a flush splits
# the one it comes in), or starting before the one before ended.
"$DUMP" "$tmp/fl.stk" | awk -F'\t' -v iv=250000000 '
	$1 == "STAT" && $2 == "duration_ns" { d[++m] = $3 }
	$1 == "CHUNK" && $3 == "CNTS" { c0[++nc] = $4; c1[nc] = $5 }
	END {
		for (k = 1; k < m; k++) {
			g = d[k] - d[k - 1]
			if (g < 500000000) fast++
			if (d[k] < k * iv) early++
		}
		for (i = 1; i <= nc; i++) {
			if (i > 1 && c0[i] < c1[i - 1]) bad++
			else if (i < nc && c1[i] > c0[i] &&
				 int((c0[i] - c0[1]) / iv) != int((c1[i] - 1 - c0[1]) / iv)) bad++
		}
		printf "%d %d %d %d %d\n", m - 1, early, fast, nc, bad
	}' > "$tmp/fl.sum"
read -r n early fast nc bad < "$tmp/fl.sum"
check "--flush-interval 0.25: $n flushes (at least 8), none before its interval ($early early), some under 0.5 s apart ($fast)" \
	[ "$n" -ge 8 -a "$early" -eq 0 -a "$fast" -gt 0 ]
check "--flush-interval 0.25: each of the $nc CNTS chunks inside one interval ($bad not), none ended without a flush" \
	[ "$nc" -gt 0 -a "$bad" -eq 0 -a "$(stat_of "$tmp/fl.stk" quiet_intervals)" -eq 0 ]
check "--flush-interval: META flush_interval_ns" [ "$(meta_of "$tmp/fl.stk" flush_interval_ns)" = 250000000 ]

# ---- status line -------------------------------------------------------------
if command -v script > /dev/null; then
	check "status line on a TTY: updated in place with samples, stacks, losses" \
		grep -q "$(printf '\r')stkrec: [0-9]*s  [0-9]* samples  [0-9]* stacks  [0-9]* lost" "$tmp/tty.txt"
	check "status line: none with -q" [ "$(grep -c 'samples' "$tmp/ttyq.txt")" -eq 0 ]
else
	skip "status line on a TTY" "script(1) (bsdutils) is needed to give stkrec a TTY"
fi
# A recording of more than 100 expected events may end with a warning of
# a low delivered rate (record_rate.sh): a line of its own, not a status.
others=$(grep -Evc '^stkrec: (wrote|warning:) ' "$tmp/notty.err")
check "status line: none when stderr is not a TTY, one summary line (no CR: $(grep -c "$(printf '\r')" "$tmp/notty.err"), other lines: $others)" \
	[ "$(grep -c '^stkrec: wrote ' "$tmp/notty.err")" -eq 1 -a "$others" -eq 0 -a "$(grep -c "$(printf '\r')" "$tmp/notty.err")" -eq 0 ]
check "summary line names the file, samples, stacks and size" \
	grep -Eq "^stkrec: wrote $tmp/notty.stk: [0-9]+ samples, [0-9]+ stacks, [0-9.]+ (B|KiB|MiB)\$" "$tmp/notty.err"

finish
