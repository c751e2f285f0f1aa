# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by tests/e2e/offcpu_*.sh after lib/harness.sh and lib/record.sh: the offwork sample
# and helpers over OFFC rows (stkdump) and folded reports.

# Without the harness there is no $tmp: a test would write into the
# current directory or /.  Refuse instead.
[ -n "${tmp:-}" ] && [ -d "$tmp" ] || { echo "$0: source tests/e2e/lib/harness.sh first"; exit 1; }

need_files "$OW"

# start_offwork [-l]: run offwork [-l] in the background until the test
# stops it (stop_offwork, or the harness on exit), never for a fixed time
# a recorder's start-up on a busy machine could outlast (seen: "-p P: no
# such process" after a 6 s offwork); wait for its "pid P waiter T writer
# T" line and set ow_pid, ow_waiter, ow_writer.  A recorder attached with
# -p/-t then finds it alive however long its start-up takes.
start_offwork() {
	_f=$tmp/offwork.$(date +%s%N)
	# A day: offwork's SECONDS, longer than any test waits for anything.
	bg "$OW" "$@" 86400 > "$_f"
	wait_until test -s "$_f"
	set -- $(cat "$_f")
	ow_pid=${2:-} ow_waiter=${4:-} ow_writer=${6:-}
	if [ -z "$ow_pid" ] || [ "$ow_pid" != "$bg_pid" ]; then
		fail "offwork did not start"
		finish
	fi
}

# stop_offwork: stop the offwork start_offwork started last.
stop_offwork() {
	stop "$ow_pid"
}

# offc FILE: the OFFC lines of FILE (fields as stkdump documents them).
offc() {
	"$DUMP" "$1" | awk -F'\t' '$1 == "OFFC"'
}

# blocked_ns FILE FIELD VALUE: total blocked ns of OFFC rows whose field
# FIELD (2 target tgid, 3 target tid, 4 target comm) is VALUE.
blocked_ns() {
	offc "$1" | awk -F'\t' -v f="$2" -v v="$3" '$f == v { n += $13 } END { printf "%.0f\n", n + 0 }'
}

# rows_of FILE FIELD VALUE: number of OFFC rows whose FIELD is VALUE.
rows_of() {
	offc "$1" | awk -F'\t' -v f="$2" -v v="$3" '$f == v { n++ } END { print n + 0 }'
}

# is_kthread PID: 0 if PID is a live kernel thread (PF_KTHREAD in
# /proc/PID/stat flags), 1 if a live user task, 2 if gone.
is_kthread() {
	_fl=$(awk '{ sub(/.*\) /, ""); print $7 }' "/proc/$1/stat" 2>/dev/null)
	[ -z "$_fl" ] && return 2
	[ $((_fl & 0x200000)) -ne 0 ]
}

# thread_kinds FILE: "K U" = target tgids of FILE that are live kernel
# threads (K) and live user processes (U).
thread_kinds() {
	_k=0 _u=0
	for _p in $(offc "$1" | awk -F'\t' '{ print $2 }' | sort -u); do
		is_kthread "$_p"
		case $? in
		0) _k=$((_k + 1)) ;;
		1) _u=$((_u + 1)) ;;
		esac
	done
	echo "$_k $_u"
}

# duration_ns FILE: the recorded duration in ns.
duration_ns() {
	meta_of "$1" duration_ns
}

# sampled_us FILE: the time episodes were counted in, us: from the first
# OFFC chunk's start to the last one's end (the detach).  META duration_ns
# runs to the final flush, which a loaded machine's end (the last tables)
# makes longer, and a main loop late on such a machine detaches after
# DURATION.
sampled_us() {
	"$DUMP" "$1" | awk -F'\t' '$1 == "CHUNK" && $3 == "OFFC" {
		if (lo == "" || $4 < lo) lo = $4
		if ($5 > hi) hi = $5 }
		END { printf "%.0f\n", (hi - lo) / 1000 }'
}
