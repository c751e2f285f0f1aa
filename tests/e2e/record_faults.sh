#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_faults: what the recorder leaves when it is stopped by force, all
# at once (the recordings run side by side to keep the test short):
#  - kill -9 at 10 random moments of a 6 s recording: every file reads
#    (stkreport info says "not closed cleanly", the report runs), and none
#    lost more than one flush interval of samples against an uninterrupted
#    recording of the same process at the same time (counts: what the
#    uninterrupted one counted from the killed one's start to the kill,
#    against at most one of its flush intervals' counts, plus a quarter);
#  - two uninterrupted recordings of the same process at once: both files
#    closed cleanly, with counts within a quarter of each other;
#  - SIGINT, SIGTERM and SIGHUP in the middle of a recording: each ends it
#    with exit 0 and a file closed cleanly, end_reason signal.
# (record_crash.sh has the full disk, record_hostile.sh the FIFO attack as
# user nobody, record_signals.sh the signals that land during the start.)
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

bg "$CW" 60 1
cw=$bg_pid
sleep 0.2
# Small maps: sixteen recorders start at once.
R="$REC -q -p $cw -F 99 --stack-storage-size 1024"

# wait_file FILE: until it exists (the recording started), at most 30 s.
wait_file() {
	_i=0
	while [ ! -s "$1" ] && [ $_i -lt 300 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}
# wait_flushes FILE N: until its STAT says N flushes, at most 30 s.
wait_flushes() {
	_i=0
	while [ "$(stat_of "$1" flushes 2>/dev/null)" -lt "$2" ] && [ $_i -lt 300 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# ---- start everything -----------------------------------------------------
bg $R -o "$tmp/u1.stk" 6
u1=$bg_pid
bg $R -o "$tmp/u2.stk" 6
u2=$bg_pid
# Ten moments from 1.0 to 6.0 s after the recording started.
awk 'BEGIN { srand(); for (i = 0; i < 10; i++) printf "%.2f\n", 1 + 5 * rand() }' > "$tmp/moments"
i=0
while read -r d; do
	(
		$R -o "$tmp/k$i.stk" 30 &
		p=$!
		wait_file "$tmp/k$i.stk"
		sleep "$d"
		date +%s%N > "$tmp/k$i.when"
		kill -KILL "$p"
		wait "$p" 2> /dev/null
	) &
	bg_pids="$bg_pids $!"
	echo $! >> "$tmp/killers"
	i=$((i + 1))
done < "$tmp/moments"
for sig in INT TERM HUP; do
	bg $R -o "$tmp/s$sig.stk" 30 2> "$tmp/s$sig.err"
	eval "spid_$sig=\$bg_pid"
done
for sig in INT TERM HUP; do
	wait_flushes "$tmp/s$sig.stk" 2
	eval "kill -$sig \$spid_$sig"
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
wait "$u1"
rc1=$?
wait "$u2"
rc2=$?
n1=$(samples "$tmp/u1.stk" "$cw")
n2=$(samples "$tmp/u2.stk" "$cw")
check "two recorders at once: both exit 0 ($rc1, $rc2)" [ "$rc1" -eq 0 -a "$rc2" -eq 0 ]
"$REP" info "$tmp/u1.stk" > "$tmp/u1.info" 2>&1
"$REP" info "$tmp/u2.stk" > "$tmp/u2.info" 2>&1
check "two recorders at once: both files closed cleanly" \
	sh -c "grep -q '^verdict: OK' '$tmp/u1.info' && grep -q '^verdict: OK' '$tmp/u2.info'"
check "two recorders at once: counts within a quarter of each other ($n1, $n2)" \
	[ "$n1" -gt 0 -a $((n1 * 4)) -ge $((n2 * 3)) -a $((n2 * 4)) -ge $((n1 * 3)) ]

# ---- kill -9 ---------------------------------------------------------------------
for p in $(cat "$tmp/killers"); do
	wait "$p"
done
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
	"$DUMP" "$tmp/u1.stk" | awk -F'\t' -v cw="$cw" -v k="$(cat "$tmp/k$i.when")" -v kf="$tmp/k$i.dump" '
		function at(t,    j, v) {
			v = 0
			for (j = 1; j <= nc; j++) {
				if (e[j] <= t) v += c[j]
				else if (b[j] < t) v += c[j] * (t - b[j]) / (e[j] - b[j])
			}
			return v
		}
		$1 == "CHUNK" && $3 == "CNTS" { nc++; b[nc] = $4; e[nc] = $5 }
		$1 == "CNTS" && $2 == cw { c[nc] += $9 }
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
		}' > "$tmp/k$i.want"
	read -r expect one ran_ms < "$tmp/k$i.want"
	lost=$((expect - n))
	[ $lost -gt $worst ] && worst=$lost
	# One flush interval (1 s) of samples, a quarter of one more for
	# the kill and the clocks read around it.
	bound=$((one * 5 / 4 + 3))
	check "kill -9 #$i after $(sed -n "$((i + 1))p" "$tmp/moments") s: the file reads (stkdump $rc), info says not closed cleanly, the report runs ($rc_rep)" \
		[ "$rc" -eq 0 -a "$ok_info" -eq 0 -a "$rc_rep" -eq 0 ]
	check "kill -9 #$i: $n samples of about $expect in ${ran_ms} ms: lost $lost <= $bound (one flush interval)" \
		[ "$lost" -le "$bound" ]
	i=$((i + 1))
done
echo "kill -9: worst loss $worst samples (one flush interval holds up to $one)"

finish
