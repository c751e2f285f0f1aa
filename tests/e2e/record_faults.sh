#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_faults: what the recorder leaves when it is stopped by force, all
# at once (the recordings run side by side to keep the test short), all of
# one cpuwork that runs until the test ends:
#  - kill -9 at 10 random moments, 1 to 18 s after each recording started
#    sampling: every file reads (stkreport info says "not closed cleanly",
#    the report runs), and none lost more than sixteen flush intervals of
#    samples (a quiet profile flushes at the end of up to every sixteenth)
#    against an uninterrupted recording of the same process at
#    the same time, u1, sampling before the first of them started and
#    until the last was killed (counts: what u1 counted from the killed
#    one's start to the kill, less the killed one's count, at most sixteen of
#    u1's flush intervals' counts plus a quarter of one, plus 4.5 standard
#    deviations of the difference of two samplings of the same process:
#    each tick lands on it or not, with the chance u1's rate says);
#  - two uninterrupted recordings of the same process at once, both
#    sampling before the kills and stopped together after them: both files
#    closed cleanly, and over the time both sampled (interpolated inside
#    the first and last intervals) each has half of their counts
#    (share_ok: 4.5 binomial standard deviations);
#  - SIGINT, SIGTERM and SIGHUP once a recording has flushed twice and
#    counted the process: each ends it with exit 0 and a file closed
#    cleanly, end_reason signal, its counts kept.
# Nothing waits for a time: a recording's file appearing is its "sampling"
# signal (wait_sampling), flushes and counts are read from the file.
# (record_crash.sh has the full disk, record_hostile.sh the FIFO attack as
# user nobody, record_signals.sh the signals that land during the start.)
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

bg "$CW" 600 1
cw=$bg_pid
# -p follows the process from its exec on: wait for it.
wait_until is_comm "$cw" cpuwork || fail "cpuwork never started"
# Small maps: sixteen recorders start at once.
HZ=99
R="$REC -q -p $cw -F $HZ --stack-storage-size 1024"

# flushed FILE N: its STAT says N flushes, and it counted cpuwork.
flushed() {
	[ "$(stat_of "$1" flushes 2>/dev/null)" -ge "$2" ] &&
		[ "$(samples "$1" "$cw" 2>/dev/null)" -gt 0 ]
}

# ---- start everything -----------------------------------------------------
# u1 and u2 run until stopped and sample before any other starts: u1 is
# the reference over every killed recording's whole life.
bg $R -o "$tmp/u1.stk"
u1=$bg_pid
bg $R -o "$tmp/u2.stk"
u2=$bg_pid
wait_sampling "$tmp/u1.stk" "$u1" && wait_sampling "$tmp/u2.stk" "$u2" ||
	fail "u1 or u2 never started sampling"
# Ten moments from 1.0 to 18.0 s after the recording started sampling
# (a quiet stretch of sixteen intervals may begin after the first: some
# kills land after its flush).
awk 'BEGIN { srand(); for (i = 0; i < 10; i++) printf "%.2f\n", 1 + 17 * rand() }' > "$tmp/moments"
# Each killer's stkrec is its child, not the test's: bg's list and its
# kill on exit do not reach it, and it has no DURATION.  Its pid sits in
# $tmp/k$i.rec while it lives (removed once the killer has reaped it, so
# no pid that may have been reused is ever killed), and the exit kills the
# ones left: a test that ends early leaves no recorder behind.
at_exit="$at_exit
for _r in \"\$tmp\"/k*.rec; do
	[ -f \"\$_r\" ] && kill -KILL \"\$(cat \"\$_r\")\" 2> /dev/null
done"
i=0
while read -r d; do
	(
		$R -o "$tmp/k$i.stk" &
		p=$!
		echo "$p" > "$tmp/k$i.rec"
		wait_sampling "$tmp/k$i.stk" "$p"
		sleep "$d"
		date +%s%N > "$tmp/k$i.when"
		kill -KILL "$p"
		wait "$p" 2> /dev/null
		rm -f "$tmp/k$i.rec"
	) &
	bg_pids="$bg_pids $!"
	echo $! >> "$tmp/killers"
	i=$((i + 1))
done < "$tmp/moments"
for sig in INT TERM HUP; do
	bg $R -o "$tmp/s$sig.stk" 2> "$tmp/s$sig.err"
	eval "spid_$sig=\$bg_pid"
done
# Each signal once its recording has flushed twice and counted cpuwork.
for sig in INT TERM HUP; do
	eval "p=\$spid_$sig"
	wait_until flushed "$tmp/s$sig.stk" 2 || fail "SIG$sig: no two flushes with counts in 120 s"
	kill -$sig "$p"
done

# ---- signals ------------------------------------------------------------------
for sig in INT TERM HUP; do
	eval "p=\$spid_$sig"
	wait "$p"
	rc=$?
	f=$tmp/s$sig.stk
	check "SIG$sig while recording: exit 0 ($rc $(cat "$tmp/s$sig.err"))" [ "$rc" -eq 0 ]
	"$REP" info "$f" > "$tmp/s$sig.info" 2>&1
	check "SIG$sig while recording: the file is closed cleanly" grep -q '^verdict: OK' "$tmp/s$sig.info"
	check "SIG$sig while recording: META end_reason signal, $(samples "$f") samples" \
		[ "$(meta_of "$f" end_reason)" = signal -a "$(samples "$f")" -gt 0 ]
done

# ---- two recorders at once ----------------------------------------------------
for p in $(cat "$tmp/killers"); do
	wait "$p"
done
# Stopped together (one kill), each counting until its own stop.
kill -TERM "$u1" "$u2"
wait "$u1"
rc1=$?
wait "$u2"
rc2=$?
check "two recorders at once: both exit 0 ($rc1, $rc2)" [ "$rc1" -eq 0 -a "$rc2" -eq 0 ]
"$REP" info "$tmp/u1.stk" > "$tmp/u1.info" 2>&1
"$REP" info "$tmp/u2.stk" > "$tmp/u2.info" 2>&1
check "two recorders at once: both files closed cleanly" \
	sh -c "grep -q '^verdict: OK' '$tmp/u1.info' && grep -q '^verdict: OK' '$tmp/u2.info'"
"$DUMP" "$tmp/u1.stk" > "$tmp/u1.dump"
"$DUMP" "$tmp/u2.stk" > "$tmp/u2.dump"

# A dump's CNTS intervals (b[], e[], monotonic ns) and its counts of
# cpuwork in each (c[]), nc of them; at(t): the count from the start to t,
# interpolated inside the interval holding t.
AWK_AT='
$1 == "CHUNK" && $3 == "CNTS" { nc++; b[nc] = $4; e[nc] = $5 }
$1 == "CNTS" && $2 == cw { c[nc] += $9 }
function at(t,    j, v) {
	v = 0
	for (j = 1; j <= nc; j++) {
		if (e[j] <= t) v += c[j]
		else if (b[j] < t) v += c[j] * (t - b[j]) / (e[j] - b[j])
	}
	return v
}'
# window DUMP A B: its count of cpuwork from A to B.
window() {
	awk -F'\t' -v cw="$cw" -v a="$2" -v z="$3" "$AWK_AT"'
	END { printf "%.0f\n", at(z) - at(a) }' "$1"
}
# span DUMP: its first CNTS interval's start, its last one's end.
span() {
	awk -F'\t' '$1 == "CHUNK" && $3 == "CNTS" { if (a == "") a = $4; z = $5 }
		END { printf "%.0f %.0f\n", a, z }' "$1"
}
span "$tmp/u1.dump" > "$tmp/span1"
span "$tmp/u2.dump" > "$tmp/span2"
read -r a z < "$tmp/span1"
read -r a2 z2 < "$tmp/span2"
[ "$a2" -gt "$a" ] && a=$a2
[ "$z2" -lt "$z" ] && z=$z2
n1=$(window "$tmp/u1.dump" "$a" "$z")
n2=$(window "$tmp/u2.dump" "$a" "$z")
share_ok "two recorders at once: u1's share of both counts over the $(((z - a) / 1000000)) ms both sampled" \
	"$n1" $((n1 + n2)) 50

# ---- kill -9 ---------------------------------------------------------------------
# u1's rate as a share of its ticks: the chance that a tick lands on
# cpuwork (one thread: at most 1).
q=$(awk -F'\t' -v cw="$cw" -v hz=$HZ '
	$1 == "CHUNK" && $3 == "CNTS" { if (a == "") a = $4; z = $5 }
	$1 == "CNTS" && $2 == cw { n += $9 }
	END { q = z > a ? n / (hz * (z - a) / 1e9) : 1; if (q > 1) q = 1; printf "%.3f\n", q }' "$tmp/u1.dump")
i=0
worst=0
while [ $i -lt 10 ]; do
	f=$tmp/k$i.stk
	"$DUMP" "$f" > "$tmp/k$i.dump"
	rc=$?
	"$REP" info "$f" > "$tmp/k$i.info" 2>&1
	grep -q '^verdict: NOT CLOSED CLEANLY' "$tmp/k$i.info" && ! grep -q 'damaged' "$tmp/k$i.info"
	ok_info=$?
	"$REP" -f folded "$f" > /dev/null 2> "$tmp/k$i.rep"
	rc_rep=$?
	n=$(samples "$f" "$cw")
	# What the uninterrupted u1 counted of the same process over the time
	# k$i sampled: from k$i's first interval's start to the kill (the
	# wall clock of the kill made monotonic through k$i's META start
	# pair), interpolated inside u1's intervals; and u1's largest count
	# of one flush interval.
	awk -F'\t' -v cw="$cw" -v k="$(cat "$tmp/k$i.when")" -v kf="$tmp/k$i.dump" "$AWK_AT"'
		END {
			FS = "\t"
			while ((getline line < kf) > 0) {
				split(line, f, "\t")
				if (f[1] == "META" && f[2] == "wall_start_ns") w = f[3]
				if (f[1] == "META" && f[2] == "mono_start_ns") m = f[3]
				if (f[1] == "CHUNK" && f[3] == "CNTS" && !t0) t0 = f[4]
			}
			if (!t0) t0 = m
			kill = k - w + m
			for (j = 1; j <= nc; j++) if (c[j] > one) one = c[j]
			printf "%.0f %.0f %.0f\n", at(kill) - at(t0), one, (kill - t0) / 1e6
		}' "$tmp/u1.dump" > "$tmp/k$i.want"
	read -r expect one ran_ms < "$tmp/k$i.want"
	lost=$((expect - n))
	[ $lost -gt $worst ] && worst=$lost
	# Sixteen flush intervals (1 s) of samples (a quiet recording flushes at
	# the end of up to every sixteenth: record/engine/recorder_loop.c
	# QUIET_INTERVALS_MAX), a quarter of one more for the kill and the
	# clocks read around it, and 4.5 standard deviations of
	# the difference of the two samplings (each of their expect + n
	# ticks lands on cpuwork with chance q, independently).
	bound=$(awk -v one="$one" -v t=$((expect + n)) -v q="$q" \
		'BEGIN { printf "%.0f\n", one * 65 / 4 + 3 + 4.5 * sqrt(t * q * (1 - q)) }')
	check "kill -9 #$i after $(sed -n "$((i + 1))p" "$tmp/moments") s: the file reads (stkdump $rc), info says not closed cleanly, the report runs ($rc_rep)" \
		[ "$rc" -eq 0 -a "$ok_info" -eq 0 -a "$rc_rep" -eq 0 ]
	check "kill -9 #$i: $n samples of about $expect in ${ran_ms} ms: lost $lost <= $bound (sixteen flush intervals of $one, +25% of one, +4.5 sd at rate $q)" \
		[ "$lost" -le "$bound" ]
	i=$((i + 1))
done
echo "kill -9: worst loss $worst samples (one flush interval holds up to $one)"

stop "$cw"
finish
