#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_slowcfi: libraries whose unwind tables are slow to build cannot
# stall a root stkrec: it starts sampling, answers SIGINT, ends at its
# DURATION and flushes every interval on time (issue 22).
#
# The attack (tests/tools/cfibomb.S, run as nobody): a 0.97 MB library of
# one function whose one FDE has 240k CFI rows.  It passes every bound
# record/unwind/cfi.c checks, but libdw re-runs the FDE's program for each
# row, so its table costs the 5 s budget of unwind_table.c, once per
# build-id.  An unprivileged process (tests/tools/cfiload.c) loads six
# copies, each under a build-id of its own (tests/tools/setbuildid.c;
# random, so no recorder has met them before), and runs in them.  Building
# those tables on the recorder's main loop cost 30 s there: in the setup of
# "stkrec -p" (sampling started after 30 s, and a SIGINT sent meanwhile was
# answered 30 s later), and in the middle of a recording of every CPU
# (DURATION 6 ended 30 s after sampling started, with counts in 1 or 2
# flush intervals).
#
#   -p: stkrec -p LOADER.  SIGINT once stkrec has the copies in hand (it
#       holds one open, building its table, or its capture has a sample
#       of the loader): it must end within 5 s, exit 0, with a closed
#       file; and sampling must have started within 10 s of its launch.
#   every CPU: stkrec 6, the loader running: it must end within 6 + 5 s of
#       the start of sampling (the load before does not count), exit 0,
#       with a closed file that maps the six copies under their six
#       build-ids and holds samples of the loader; and with counts in at
#       least 3 of its 6 one-second flush intervals (a stalled main loop
#       flushes once or twice).
#
# The bounds are far from both behaviours (the old one took 30 s, a main
# loop that never waits on a table takes well under 1 s) and only say
# whether the recorder waited on the tables; "timeout"-like 120 s bounds
# keep a hung recorder from hanging the suite.
# Exit 77 only when BPF cannot be used (not root, or no BTF) or setpriv is
# missing.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

BOMB=$O/tests/tools/libcfibomb.so
SETID=$O/tests/tools/setbuildid
need_files "$BOMB" "$SETID" "$O/tests/tools/cfiload"
need_cmds setpriv od
id nobody > /dev/null 2>&1 || skip_test "needs user nobody"
NOBODY="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
# What nobody runs and maps lives in the test's directory: the build
# directory may lie where nobody cannot enter.
chmod 711 "$tmp"
LOAD=$tmp/cfiload
cp "$O/tests/tools/cfiload" "$LOAD" && chmod 755 "$LOAD"
DUR=6

# now_ms: milliseconds since boot (/proc/uptime: monotonic, 10 ms steps).
now_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}
# secs MS: MS as seconds, for the checks' lines.
secs() {
	awk -v m="$1" 'BEGIN { printf "%.1f s", m / 1000 }'
}
gone() {
	! kill -0 "$1" 2>/dev/null
}

# bombs DIR: DIR/c1.so .. c6.so, copies of libcfibomb.so, each with a
# random build-id of its own.
bombs() {
	mkdir "$1"
	for _i in 1 2 3 4 5 6; do
		cp "$BOMB" "$1/c$_i.so"
		"$SETID" "$1/c$_i.so" "$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')" ||
			fail "$1/c$_i.so: its own build-id"
		chmod 755 "$1/c$_i.so"
	done
}

# load DIR: as nobody, cfiload DIR/c*.so in the background, until it has
# loaded them all; $loader is its pid.
load() {
	bg $NOBODY "$LOAD" "$1"/c1.so "$1"/c2.so "$1"/c3.so "$1"/c4.so "$1"/c5.so "$1"/c6.so \
		> "$1.ready" 2>&1
	loader=$bg_pid
	wait_until loaded "$1"
	check "cfiload runs in the six copies of $1 ($(cat "$1.ready"))" grep -q '^ready$' "$1.ready"
}
loaded() {
	grep -q '^ready$' "$1.ready" || gone "$loader"
}

# saw_start FILE: note in $started when the capture FILE first exists
# (the recorder is sampling: see wait_sampling).
saw_start() {
	[ -z "$started" ] && [ -e "$1" ] && started=$(now_ms)
	return 0
}

# wait_end PID FILE: until the recorder PID ends (killed after 120 s, a
# bound against a hang), still noting when FILE appears; sets rc (its
# exit status), killed (yes: it had to be) and ended (now_ms).
wait_end() {
	killed=no
	if ! wait_until ended "$1" "$2"; then
		killed=yes
		kill -KILL "$1"
	fi
	wait "$1"
	rc=$?
	ended=$(now_ms)
	[ -z "$started" ] && [ -e "$2" ] && started=$ended
}
ended() {
	saw_start "$2"
	gone "$1"
}

# copies FILE DIR: "copies build_ids" of the mappings of DIR/c*.so in the
# capture FILE.
copies() {
	"$DUMP" "$1" 2>/dev/null | awk -F'\t' -v d="$2/" '
		$1 == "MAP" && index($10, d) == 1 {
			if (!p[$10]++) np++
			if ($9 != "-" && !b[$9]++) nb++
		}
		END { printf "%d %d\n", np, nb }'
}

# flush_intervals FILE: how many flush intervals wrote counts (CNTS chunks
# with distinct starts).
flush_intervals() {
	"$DUMP" "$1" 2>/dev/null | awk -F'\t' '$1 == "CHUNK" && $3 == "CNTS" && !s[$4]++ { n++ }
		END { print n + 0 }'
}

# holds_copy PID DIR: process PID has one of DIR/c*.so open.
holds_copy() {
	for _f in /proc/"$1"/fd/*; do
		case $(readlink "$_f" 2>/dev/null) in
		"$2"/c[1-6].so) return 0 ;;
		esac
	done
	return 1
}

# closed WHAT FILE: the capture FILE is closed cleanly.
closed() {
	"$REP" info "$2" > "$tmp/info" 2>&1
	check "$1: the file is closed cleanly ($(grep '^verdict' "$tmp/info"))" \
		grep -q '^verdict: OK' "$tmp/info"
}

# ---- stkrec -p the loader; SIGINT once it has the copies in hand ------------
bombs "$tmp/p"
load "$tmp/p"
started=
t0=$(now_ms)
bg "$REC" -q -p "$loader" -o "$tmp/p.stk" 2> "$tmp/p.err"
rec=$bg_pid
# in_hand: stkrec holds a copy open (building its table, on whichever
# thread), or its capture holds a sample of the loader; or it ended.
in_hand() {
	saw_start "$tmp/p.stk"
	if holds_copy "$rec" "$tmp/p"; then
		why="holding a copy open"
		return 0
	fi
	if [ -n "$started" ] && [ "$(samples "$tmp/p.stk" "$loader" 2>/dev/null)" -gt 0 ]; then
		why="recording samples of the loader"
		return 0
	fi
	why="ended"
	gone "$rec"
}
wait_until in_hand || why="the 120 s bound"
t1=$(now_ms)
kill -INT "$rec"
wait_end "$rec" "$tmp/p.stk"
stop "$loader"
echo "note: -p: SIGINT after $(secs $((t1 - t0))), stkrec $why"
check "-p: SIGINT while stkrec was $why: it ended within 5 s (took $(secs $((ended - t1))))" \
	[ $killed = no -a $((ended - t1)) -le 5000 ]
if [ -n "$started" ]; then
	check "-p: sampling started within 10 s of the launch (took $(secs $((started - t0))))" \
		[ $((started - t0)) -le 10000 ]
else
	fail "-p: sampling started within 10 s of the launch" "it never started"
fi
check "-p: exit 0 (got $rc: $(cat "$tmp/p.err"))" [ "$rc" -eq 0 ]
closed -p "$tmp/p.stk"
check "-p: META end_reason signal" [ "$(meta_of "$tmp/p.stk" end_reason)" = signal ]

# ---- every CPU for DURATION seconds, the loader running ---------------------
bombs "$tmp/a"
load "$tmp/a"
started=
bg "$REC" -q --flush-interval 1 -o "$tmp/a.stk" $DUR 2> "$tmp/a.err"
rec=$bg_pid
wait_sampling "$tmp/a.stk" "$rec" || fail "every CPU: stkrec never started ($(cat "$tmp/a.err"))"
started=$(now_ms)
wait_end "$rec" "$tmp/a.stk"
stop "$loader"
check "every CPU: DURATION $DUR ended within $DUR + 5 s of the start of sampling (took $(secs $((ended - started))))" \
	[ $killed = no -a $((ended - started)) -le $(((DUR + 5) * 1000)) ]
check "every CPU: exit 0 (got $rc: $(cat "$tmp/a.err"))" [ "$rc" -eq 0 ]
closed "every CPU" "$tmp/a.stk"
check "every CPU: META end_reason duration" [ "$(meta_of "$tmp/a.stk" end_reason)" = duration ]
# shellcheck disable=SC2046
set -- $(copies "$tmp/a.stk" "$tmp/a")
check "every CPU: the capture maps the six copies under six build-ids (got $1 copies, $2 ids)" \
	[ "$1" -eq 6 -a "$2" -eq 6 ]
n=$(samples "$tmp/a.stk" "$loader")
check "every CPU: the loader was sampled ($n samples)" [ "$n" -gt 0 ]
n=$(flush_intervals "$tmp/a.stk")
check "every CPU: counts flushed in at least $((DUR / 2)) of $DUR intervals (got $n)" \
	[ "$n" -ge $((DUR / 2)) ]

finish
