#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench, stkrec trace's part (issue 27): the cost per event of
# "stkrec trace EVENT" against "perf record -e EVENT -g" on the same
# workload, tests/tools/eventwork doing a fixed number of events:
#  - write: TRACE_WRITES (default 1000000) write(2)s, event
#    syscalls:sys_enter_write;
#  - fault: TRACE_FAULTS (default 50000) page faults (fresh anonymous
#    pages), event page-faults (perf: -c 1, every one);
#  - uprobe: TRACE_CALLS (default 200000) calls of libeventwork.so's
#    evlib_tick, u:LIB:evlib_tick (stkrec only: perf needs "perf probe",
#    which adds a probe to the system through tracefs).
# Each REPS times (default 3, medians): alone, under stkrec trace
# (--rate-cap 0: every event counted) and under perf record -g, the
# recorder starting the workload (-- CMD).  Printed: the workload's CPU
# time (user+sys, time(1) inside the recording: the in-kernel cost of
# both recorders is charged to the task that raised the event), its
# extra CPU per event in ns, the recorder's own CPU (its user+sys, less
# the workload's), the file size, and stkrec/perf ratios.  Needs root.
# Environment: O, PERF, REPS, TRACE_WRITES, TRACE_FAULTS, TRACE_CALLS.

O=${O:-build}
REC=$O/stkrec
EW=$O/tests/tools/eventwork
EWLIB=$(cd "$(dirname "$EW")" && pwd)/libeventwork.so
PERF=${PERF:-perf}
REPS=${REPS:-3}
WRITES=${TRACE_WRITES:-1000000}
FAULTS=${TRACE_FAULTS:-50000}
CALLS=${TRACE_CALLS:-200000}

if [ "$(id -u)" -ne 0 ]; then
	echo "bench_trace: needs root (BPF, perf -a); skipped"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stk-bench-trace.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# ms FILE: user+sys ms of time(1)'s last line.
ms() {
	tail -1 "$1" | awk '{ printf "%d\n", ($1 + $2) * 1000 }'
}

# run WHO ARGS EVENT_STKREC EVENT_PERF: one run (sh has no locals: r_*); appends the workload's ms,
# the recorder's ms and the file's bytes to $tmp/WHO.{wl,rec,size}.
run() {
	r_who=$1 r_args=$2 r_ev_s=$3 r_ev_p=$4
	wl="/usr/bin/time -f %U\ %S -o $tmp/wl.time $EW $r_args"
	case $r_who in
	alone)
		sh -c "$wl" ;;
	stkrec)
		rm -f "$tmp/s.stk"
		/usr/bin/time -f '%U %S' -o "$tmp/rec.time" \
			sh -c "exec $REC trace -q --rate-cap 0 $r_ev_s -o $tmp/s.stk -- $wl" > /dev/null 2>&1
		stat -c %s "$tmp/s.stk" >> "$tmp/$r_who.size" ;;
	perf)
		rm -f "$tmp/p.data"
		/usr/bin/time -f '%U %S' -o "$tmp/rec.time" \
			sh -c "exec $PERF record -q -e $r_ev_p -g -o $tmp/p.data -- $wl" > /dev/null 2>&1
		stat -c %s "$tmp/p.data" >> "$tmp/$r_who.size" ;;
	esac
	w=$(ms "$tmp/wl.time")
	echo "$w" >> "$tmp/$r_who.wl"
	[ "$r_who" = alone ] || echo $(( $(ms "$tmp/rec.time") - w )) >> "$tmp/$r_who.rec"
}

# bench NAME EVENTS ARGS EVENT_STKREC EVENT_PERF (empty: stkrec only)
bench() {
	name=$1 n=$2 args=$3 ev_s=$4 ev_p=$5
	rm -f "$tmp"/*.wl "$tmp"/*.rec "$tmp"/*.size
	r=0
	while [ $r -lt "$REPS" ]; do
		run alone "$args"
		run stkrec "$args" "$ev_s"
		[ -n "$ev_p" ] && run perf "$args" "$ev_s" "$ev_p"
		r=$((r + 1))
	done
	a=$(median < "$tmp/alone.wl")
	s=$(median < "$tmp/stkrec.wl")
	sr=$(median < "$tmp/stkrec.rec")
	ss=$(median < "$tmp/stkrec.size")
	printf '%s: %d events (%s), workload CPU alone %d ms\n' "$name" "$n" "$ev_s" "$a"
	printf '  stkrec trace:  workload %6d ms, +%7.0f ns/event; recorder %5d ms; file %9d bytes\n' \
		"$s" "$(echo "$s $a $n" | awk '{ print ($1 - $2) * 1e6 / $3 }')" "$sr" "$ss"
	if [ -n "$ev_p" ]; then
		p=$(median < "$tmp/perf.wl")
		pr=$(median < "$tmp/perf.rec")
		ps=$(median < "$tmp/perf.size")
		printf '  perf record -g: workload %6d ms, +%7.0f ns/event; recorder %5d ms; file %9d bytes\n' \
			"$p" "$(echo "$p $a $n" | awk '{ print ($1 - $2) * 1e6 / $3 }')" "$pr" "$ps"
		echo "$s $p $a $sr $pr $ss $ps" | awk '{
			so = $1 - $3; po = $2 - $3
			ov = "n/a"; rc = "n/a"
			if (po > 0) ov = sprintf("%.2f", so / po)
			if ($5 > 0) rc = sprintf("%.2f", $4 / $5)
			printf "  stkrec/perf: overhead per event %s, recorder CPU %s, file %.3f\n", ov, rc, $6 / $7 }'
	fi
}

echo "bench_trace: stkrec trace against perf record -e EVENT -g, $REPS runs each, medians"
bench write "$WRITES" "$WRITES 0 0 0" t:syscalls:sys_enter_write syscalls:sys_enter_write
bench fault "$FAULTS" "0 0 $FAULTS 0" page-faults "page-faults -c 1"
bench uprobe "$CALLS" "0 0 0 $CALLS" "u:$EWLIB:evlib_tick" ""
