#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Run test programs (Check suites, fuzz corpus replays, e2e shell scripts)
# and end with one line "N passed, N failed".
#
#   tests/run-tests.sh [-j N] [-m PATTERN] [--repeat N] TEST...
#
# Exit status of a test: 0 pass, 77 skip (e.g. no BPF), anything else fail.
# With STK_REQUIRE_BPF=1 (CI) a skip counts as a failure.
#
# -j N runs up to N tests at once (default $STK_TEST_JOBS, else twice the
# CPUs: most e2e time is fixed-length recordings, not CPU).  Each test's
# output is kept and printed whole once it and every test before it have
# finished, so the log reads in the order given whatever the timing, its
# header with how long it took (what make check's time is made of).  An
# e2e script with the line "# harness: exclusive" runs with no other test
# (one whose assertions a concurrent recording would disturb); these run
# first, one by one, then the rest.  -j 1 prints each test's output as it
# runs.
#
# -m PATTERN (make check T=PATTERN) runs only the tests whose name (no
# directory, no .sh) matches the extended regular expression PATTERN,
# e.g. 'unwind_nofp' or 'record_|^check_format$'.
#
# --repeat N runs the selection N times over and ends with each test's
# failure count ("NAME: K of N failed", failing ones first): the flake
# finder.  Every run's log is kept whole in $STK_REPEAT_LOG (default
# $O/repeat.log); the terminal gets one line per run.

jobs=${STK_TEST_JOBS:-$(($(nproc 2>/dev/null || echo 1) * 2))}
repeat=
match=
usage() {
	echo "usage: $0 [-j N] [-m PATTERN] [--repeat N] TEST..." >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	-j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	-m) [ $# -ge 2 ] || usage; match=$2; shift 2 ;;
	--repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
	--repeat=*) repeat=${1#--repeat=}; shift ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
case $jobs in
'' | *[!0-9]* | 0) echo "$0: -j $jobs: expected a number of jobs, at least 1" >&2; exit 2 ;;
esac

# The selection: the tests whose name matches -m.
if [ -n "$match" ]; then
	printf '' | grep -Eq -- "$match" 2>/dev/null
	[ $? -eq 2 ] && { echo "$0: -m '$match': not an extended regular expression" >&2; exit 2; }
	sel=
	for t in "$@"; do
		_n=${t##*/}
		printf '%s\n' "${_n%.sh}" | grep -Eq -- "$match" && sel="$sel $t"
	done
	if [ -z "$sel" ]; then
		echo "$0: no test matches '$match' (names are e.g. check_format, record_stackmap)" >&2
		exit 2
	fi
	# shellcheck disable=SC2086
	set -- $sel
fi

# --repeat N: the same selection N times, then each test's failure count.
if [ -n "$repeat" ]; then
	case $repeat in
	*[!0-9]* | 0) echo "$0: --repeat $repeat: expected a number of runs, at least 1" >&2; exit 2 ;;
	esac
	log=${STK_REPEAT_LOG:-${O:-build}/repeat.log}
	: > "$log" || exit 1
	counts=$(mktemp "${TMPDIR:-/tmp}/stk-repeat.XXXXXX") || exit 1
	runlog=$(mktemp "${TMPDIR:-/tmp}/stk-repeat-run.XXXXXX") || exit 1
	trap 'rm -f "$counts" "$runlog"' EXIT
	trap 'exit 130' INT TERM
	r=0
	while [ $r -lt "$repeat" ]; do
		r=$((r + 1))
		echo "### run $r of $repeat" >> "$log"
		sh "$0" -j "$jobs" "$@" > "$runlog" 2>&1
		cat "$runlog" >> "$log"
		# The summary's "failed: A B" line, not a test's own output.
		tail -n 3 "$runlog" | sed -n 's/^failed://p' | tr ' ' '\n' | sed '/^$/d' >> "$counts"
		echo "run $r of $repeat: $(tail -n 1 "$runlog")"
	done
	echo "failures per test over $repeat runs (logs: $log):"
	for t in "$@"; do
		_n=${t##*/}
		echo "$(grep -cxF -- "$_n" "$counts") $_n"
	done | sort -k1,1nr -k2 | awk -v n="$repeat" '{ printf "  %s: %d of %d failed\n", $2, $1, n }'
	[ ! -s "$counts" ]
	exit
fi

# Check's default limit of 4 s a unit test is for an idle machine: CI's may
# be busy, and a limit only catches a hang.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-10}

passed=0
failed=0
skipped=0
failed_names=""

# account NAME RC: count one finished test (its output is already out).
account() {
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
	elif [ "$2" -eq 77 ] && [ "${STK_REQUIRE_BPF:-0}" != 1 ]; then
		echo "--- $1: SKIPPED"
		skipped=$((skipped + 1))
	else
		[ "$2" -eq 77 ] && echo "--- $1: skipped, but STK_REQUIRE_BPF=1 makes that a failure"
		echo "--- $1: FAILED (exit $2)"
		failed=$((failed + 1))
		failed_names="$failed_names $1"
	fi
}

run() {
	case "$1" in
	*.sh) sh "$1" ;;
	*) "$1" ;;
	esac
}

exclusive() {
	case "$1" in
	*.sh) grep -qx '# harness: exclusive' "$1" ;;
	*) return 1 ;;
	esac
}

if [ "$jobs" -eq 1 ]; then
	for t in "$@"; do
		echo "=== ${t##*/}"
		run "$t"
		account "${t##*/}" $?
	done
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/stk-run-tests.XXXXXX") || exit 1
	pids=
	trap 'for p in $pids; do kill -TERM "$p" 2>/dev/null; done; wait; rm -rf "$out"' EXIT
	trap 'exit 130' INT TERM

	# Test i's output goes to $out/i.log, its status to $out/i.rc when it
	# ends; $out/i.t is its path.
	i=0
	for t in "$@"; do
		i=$((i + 1))
		echo "$t" > "$out/$i.t"
		if exclusive "$t"; then
			echo "$i" >> "$out/exclusive"
		else
			echo "$i" >> "$out/shared"
		fi
	done
	total=$i

	started=0
	printed=0
	failed_before=
	# start I: run test I in the background.
	start() {
		(_t0=$(date +%s%N); run "$(cat "$out/$1.t")" > "$out/$1.log" 2>&1; _rc=$?
		 echo $((($(date +%s%N) - _t0) / 100000000)) > "$out/$1.ds"
		 echo $_rc > "$out/$1.rc.tmp"; mv "$out/$1.rc.tmp" "$out/$1.rc") &
		pids="$pids $!"
		started=$((started + 1))
	}
	# flush: print the finished tests that have no unfinished one before.
	flush() {
		while [ $printed -lt $total ] && [ -e "$out/$((printed + 1)).rc" ]; do
			printed=$((printed + 1))
			_t=$(cat "$out/$printed.t")
			_ds=$(cat "$out/$printed.ds" 2>/dev/null || echo 0)
			echo "=== ${_t##*/} ($((_ds / 10)).$((_ds % 10)) s)"
			cat "$out/$printed.log"
			account "${_t##*/}" "$(cat "$out/$printed.rc")"
			[ "$(cat "$out/$printed.rc")" -ne 0 ] && [ "$failed_names" != "$failed_before" ] &&
				echo "$printed" >> "$out/failed"
			failed_before=$failed_names
		done
	}
	# running: the number of started tests not finished yet.
	running() {
		_n=0
		for _r in "$out"/*.rc; do
			[ -e "$_r" ] && _n=$((_n + 1))
		done
		echo $((started - _n))
	}

	for e in $(cat "$out/exclusive" 2>/dev/null); do
		start "$e"
		while [ "$(running)" -gt 0 ]; do
			sleep 0.1
			flush
		done
	done
	for s in $(cat "$out/shared" 2>/dev/null); do
		while [ "$(running)" -ge "$jobs" ]; do
			sleep 0.1
			flush
		done
		start "$s"
	done
	while [ $printed -lt $total ]; do
		sleep 0.1
		flush
	done
	# A log is often read only from its end (CI keeps the tail): each
	# failed test's last lines again, just before the summary.
	for f in $(cat "$out/failed" 2>/dev/null); do
		_t=$(cat "$out/$f.t")
		echo "--- the last lines of ${_t##*/} (failed):"
		tail -n 15 "$out/$f.log"
	done
fi

[ -n "$failed_names" ] && echo "failed:$failed_names"
[ $skipped -gt 0 ] && echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
