# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by the trace tests (tests/e2e/trace_*.sh) after lib/harness.sh and
# lib/record.sh: the workload whose events are known exactly
# (tests/tools/eventwork.c), and sums over stkreport's folded output.

EW=$O/tests/tools/eventwork
EWLIB=$O/tests/tools/libeventwork.so
need_files "$EW" "$EWLIB"

# folded_sum FILE PATTERN [EVENT]: the summed counts of the folded lines
# of FILE (of its event EVENT) that contain PATTERN (an awk regex).
folded_sum() {
	if [ -n "${3:-}" ]; then
		"$REP" -f folded --event "$3" "$1" 2> /dev/null
	else
		"$REP" -f folded "$1" 2> /dev/null
	fi | awk -v p="$2" '$0 ~ p { n += $NF } END { print n + 0 }'
}

# trce_sum FILE EVENT: the summed counts of FILE's TRCE rows of event index EVENT.
trce_sum() {
	"$DUMP" "$1" | awk -F'\t' -v e="$2" '$1 == "TRCE" && $2 == e { n += $8 } END { printf "%.0f\n", n + 0 }'
}

# tables_ready FILE: the capture's last STAT says every unwind table queued
# is loaded (eventwork, its library, libc, ld.so, the vDSO: 4 at least).
tables_ready() {
	"$DUMP" "$1" 2> /dev/null | awk -F'\t' '
		$1 == "STAT" && $2 == "unwind_tables" { t = $3 }
		$1 == "STAT" && $2 == "unwind_tables_queued" { q = $3 }
		END { exit !(q >= 4 && t >= q) }'
}

# in_pause PID: the process is blocked in pause(2) (x86-64 syscall 34).
in_pause() {
	read _n _rest < "/proc/$1/syscall" 2> /dev/null && [ "$_n" = 34 ]
}

# trace_run OUT "N M K L" STKREC_ARGS...: stkrec trace STKREC_ARGS -o OUT
# -- eventwork N M K L, the workload started once its unwind tables are
# loaded: a burst of events before would have its user stacks copied for
# later unwinding, and a burst bigger than the copy ring takes the
# frame-pointer stacks of the rest (STAT unwind_defer_lost), which are not
# the whole stacks the exact counts are checked on.  eventwork waits for
# SIGUSR1, works, holds in pause(2); then it is ended, and stkrec with it.
# Returns stkrec's exit status (143: CMD ended by SIGTERM).
trace_run() {
	_out=$1 _work=$2
	shift 2
	bg "$REC" trace -q --flush-interval 0.05 "$@" -o "$_out" -- "$EW" $_work wait
	_rec=$bg_pid
	wait_sampling "$_out" $_rec || return 1
	_ew=$(cat /proc/$_rec/task/*/children 2> /dev/null | tr ' ' '\n' | grep -m1 .)
	[ -n "$_ew" ] || return 1
	wait_until tables_ready "$_out"
	kill -USR1 "$_ew"
	wait_until in_pause "$_ew"
	kill "$_ew"
	wait $_rec
}
