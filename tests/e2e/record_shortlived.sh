#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_shortlived: processes that live well under a flush interval (a CI
# job's compilers and test binaries) keep their user frames, because the
# recorder learns every executable mapping, with its build-id, from perf's
# mmap/exec/fork/exit records as it happens instead of reading
# /proc/PID/maps (too late: gone, or still in ld.so before libc is
# mapped).  Twenty runs of cpuwork -n 50 (~75 ms each), by -- CMD and
# system-wide:
#  - every cpuwork process was sampled and has MAPS with cpuwork's and
#    libc's build-ids (as readelf -n prints them); every process with user
#    stacks has MAPS; no snapshot failed (maps_err_gone 0); nothing lost;
#  - stkreport -f folded: every cpuwork stack through main starts
#    __libc_start_call_main;main;run and has not one [unknown] frame (the
#    root frame in libc is the one a /proc snapshot taken while ld.so runs
#    misses).
# STK_SHORTLIVED_OPTS adds options to stkrec: with --no-mmap-events (the
# /proc-only path) this test fails, which is what shows the path matters.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone: its system-wide part asserts on the share of samples that
# reach main, which the other tests' processes dilute.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# shellcheck disable=SC2086 # word splitting of the options is wanted
rec() {
	"$REC" -q -F 499 $STK_SHORTLIVED_OPTS "$@"
}

bid_of() {
	readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'
}
libc=$(ldd "$CW" | awk '/libc\.so/ { print $3 }')
libc=$(readlink -f "$libc")
want_cw=$(bid_of "$CW")
want_libc=$(bid_of "$libc")
runs=20

# verify FILE LABEL [PIDFILE]: the checks above on a capture of the twenty
# runs; with PIDFILE (system-wide: other processes may run cpuwork too),
# on the processes it lists only.
verify() {
	f=$1 label=$2 pidfile=${3:-}
	"$DUMP" "$f" > "$tmp/$label.dump"
	if [ -n "$pidfile" ]; then
		tgids=$(sort -n "$pidfile")
	else
		tgids=$(awk -F'\t' '$1 == "CNTS" && $4 == "cpuwork" { t[$2] = 1 }
			END { for (k in t) print k }' "$tmp/$label.dump" | sort -n)
	fi
	echo "$tgids" > "$tmp/$label.tgids"
	n=$(awk -F'\t' 'FNR == NR { want[$1] = 1; next }
		$1 == "CNTS" && $4 == "cpuwork" && ($2 in want) { t[$2] = 1 }
		END { for (k in t) n++; print n + 0 }' "$tmp/$label.tgids" "$tmp/$label.dump")
	check "$label: all $runs cpuwork processes sampled ($n)" [ "$n" -eq "$runs" ]
	bad=0
	for t in $tgids; do
		awk -F'\t' -v t="$t" -v cw="$CW" -v bcw="$want_cw" -v lc="$libc" -v blc="$want_libc" '
			$1 == "MAP" && $2 == t && $10 == cw && $9 == bcw { a = 1 }
			$1 == "MAP" && $2 == t && $10 == lc && $9 == blc { b = 1 }
			END { exit !(a && b) }' "$tmp/$label.dump" || bad=$((bad + 1))
	done
	check "$label: every cpuwork process has MAPS with cpuwork's and libc's build-ids ($bad not)" \
		[ "$n" -gt 0 -a "$bad" -eq 0 ]
	if [ -z "$pidfile" ]; then
		nomaps=$(awk -F'\t' '$1 == "MAPS" { m[$2] = 1 }
			$1 == "CNTS" && $5 >= 0 { u[$2] = $4 }
			END { for (t in u) if (!(t in m)) printf "%s(%s) ", u[t], t }' "$tmp/$label.dump")
		check "$label: every process with user stacks has MAPS (${nomaps:-all})" [ -z "$nomaps" ]
		gone=$(stat_of "$f" maps_err_gone)
		lost=$(stat_of "$f" mmap_events_lost)
		check "$label: no maps snapshot failed (maps_err_gone $gone), no mmap record lost ($lost)" \
			[ "$gone" -eq 0 -a "$lost" -eq 0 ]
	fi

	# Folded lines do not say the process; a per-process report does.
	for t in $tgids; do
		"$REP" -f folded --pid "$t" "$f" 2> /dev/null
	done > "$tmp/$label.folded"
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(awk '
		/^cpuwork;/ {
			v = $NF; total += v
			if ($0 !~ /;main;run;/) next
			chain += v
			# A sample on the first instruction of a function (before its
			# frame is set up) loses the caller: a frame-pointer
			# artefact, so the chain below run is not compared.
			# With .eh_frame unwinding (--unwind=auto) the stack goes on
			# through libc to cpuwork'"'"'s _start, where frame pointers stop
			# at __libc_start_call_main; both are the libc root.  A
			# process sampled before its libc mapping reached the
			# unwinder says so above that root (SPEC.md, STCK marker).
			if ($0 ~ /\[unknown\]/ || $0 !~ /^cpuwork;(_start;__libc_start_main[^;]*;|\[unwind stopped: [a-z ]*\];)?__libc_start_call_main;main;run;(work|leaf)_/)
				bad += v
		}
		END { print total + 0, chain + 0, bad + 0 }' "$tmp/$label.folded")
	check "$label: $2 of $1 cpuwork samples run through main: most of them" [ "$2" -gt $(($1 / 2)) ]
	check "$label: each has the libc root and no [unknown] frame ($3 not)" \
		[ "$2" -gt 0 -a "$3" -eq 0 ]
}

rec -o "$tmp/cmd.stk" -- sh -c "for i in \$(seq $runs); do $CW -n 50; done" > "$tmp/cmd.out" 2>&1
rc=$?
check "-- CMD: exit 0 (got $rc: $(cat "$tmp/cmd.out"))" [ "$rc" -eq 0 ]
echo "     META mmap_events: $(meta_of "$tmp/cmd.stk" mmap_events)"
verify "$tmp/cmd.stk" cmd

# System-wide, the runs started by another process once the recorder
# samples (its output exists only then), and the recorder stopped once they
# are done: no DURATION that a slow machine could outrun.
# stkrec itself in the background, not rec(): the shell would fork for the
# function, and the SIGINT below would reach that shell instead of stkrec.
# shellcheck disable=SC2086 # word splitting of the options is wanted
bg "$REC" -q -F 499 $STK_SHORTLIVED_OPTS -o "$tmp/all.stk" > "$tmp/all.out" 2>&1
rpid=$bg_pid
wait_sampling "$tmp/all.stk" "$rpid" || fail "system-wide: stkrec starts sampling ($(cat "$tmp/all.out"))"
sh -c "for i in \$(seq $runs); do $CW -n 50 & echo \$! >> $tmp/all.pids; wait; done"
kill -INT "$rpid"
wait "$rpid"
rc=$?
check "system-wide: exit 0 (got $rc: $(cat "$tmp/all.out"))" [ "$rc" -eq 0 ]
verify "$tmp/all.stk" all "$tmp/all.pids"

finish
