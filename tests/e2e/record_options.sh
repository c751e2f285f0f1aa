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
#    again) and the recorder stopped for 2.5 s (its 256 KiB ring fills):
#    samples still counted, the stacks the full ring lost counted in STAT,
#    and profile.py's hint printed;
#  --flush-interval: one CNTS chunk per interval;
#  the status line: on a TTY only, never with -q.
# The recordings run at once over the same two burners (each still as long
# as before), so "without -p" really is the same window as "-p".
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone: its -p and --flush-interval checks count samples and chunks
# of 1 s recordings, which other tests' load starves (seen: 3 chunks of 8).
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

ENOENT=-2

# Two CPU burners, so each filter has something to exclude.
bg "$CW" 30
cw1=$bg_pid
bg "$CW" 30 2
cw2=$bg_pid
sleep 0.3
cw2_tid=$(ls "/proc/$cw2/task" | grep -v "^$cw2\$" | head -1)

# rec NAME STKREC-ARGS...: stkrec in the background, stderr in NAME.err.
rec() {
	_n=$1
	shift
	bg "$REC" "$@" 2> "$tmp/$_n.err"
	eval "pid_$_n=\$bg_pid"
}
# rc_of NAME: its exit status, once all have ended.
rc_of() { eval "echo \$rc_$1"; }
rec u -q -U -F 99 -o "$tmp/u.stk" 2
rec k -q -K -F 99 -o "$tmp/k.stk" 2
rec p -q -p "$cw2" -F 99 -o "$tmp/p.stk" 2
rec all -q -F 99 -o "$tmp/all.stk" 2
rec t -q -t "$cw2_tid" -F 99 -o "$tmp/t.stk" 2
rec p2 -q -p "$cw1,$cw2" -F 99 -o "$tmp/p2.stk" 1
rec c -q -C 0 -F 99 -o "$tmp/c.stk" 1
rec full -q --kallsyms=full -F 99 -o "$tmp/full.stk" 1
rec small -F 4999 --stack-storage-size 2 -o "$tmp/small.stk" 2
# Stopped once it samples (its file exists once it has started): nothing
# takes its ring of new stacks meanwhile (thousands of records of ~80
# bytes a second against 256 KiB; at 999 Hz, with a dozen recorders
# running, 2.5 s of them once fitted).
(
	i=0
	while [ ! -e "$tmp/small.stk" ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -STOP "$pid_small"
	sleep 2.5
	kill -CONT "$pid_small"
) &
stopper=$!
rec fl -q -p "$cw1" --flush-interval 0.25 -F 99 -o "$tmp/fl.stk" 2
rec notty -p "$cw1" -o "$tmp/notty.stk" 2
tty=
if command -v script > /dev/null; then
	bg script -qec "$REC -p $cw1 -o $tmp/tty.stk 2" "$tmp/tty.txt" > /dev/null 2>&1
	tty=$bg_pid
	bg script -qec "$REC -q -p $cw1 -o $tmp/ttyq.stk 2" "$tmp/ttyq.txt" > /dev/null 2>&1
	tty="$tty $bg_pid"
fi
# All of them, not the burners.
for n in u k p all t p2 c full small fl notty; do
	eval "wait \$pid_$n"
	eval "rc_$n=$?"
done
for p in $tty $stopper; do
	wait "$p"
done

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
n=$("$DUMP" "$tmp/fl.stk" | grep -c '^CHUNK.[0-9]*.CNTS')
# The default interval would give 2 (one flush at 1 s, one at the end).
check "--flush-interval 0.25 for 2 s: about 8 CNTS chunks ($n)" within "$n" 5 9
check "--flush-interval: META flush_interval_ns" [ "$(meta_of "$tmp/fl.stk" flush_interval_ns)" = 250000000 ]

# ---- status line -------------------------------------------------------------
if command -v script > /dev/null; then
	check "status line on a TTY: updated in place with samples, stacks, losses" \
		grep -q "$(printf '\r')stkrec: 1s  [0-9]* samples  [0-9]* stacks  [0-9]* lost" "$tmp/tty.txt"
	check "status line: none with -q" [ "$(grep -c 'samples' "$tmp/ttyq.txt")" -eq 0 ]
else
	skip "status line on a TTY" "script(1) (bsdutils) is needed to give stkrec a TTY"
fi
check "status line: none when stderr is not a TTY, one summary line" \
	[ "$(grep -c . "$tmp/notty.err")" -eq 1 -a "$(grep -c "$(printf '\r')" "$tmp/notty.err")" -eq 0 ]
check "summary line names the file, samples, stacks and size" \
	grep -Eq "^stkrec: wrote $tmp/notty.stk: [0-9]+ samples, [0-9]+ stacks, [0-9.]+ (B|KiB|MiB)\$" "$tmp/notty.err"

finish
