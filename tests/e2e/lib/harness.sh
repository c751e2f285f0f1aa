# SPDX-License-Identifier: BSD-2-Clause
#
# The e2e harness, sourced first by every tests/e2e/*.sh (as elfutils'
# tests/test-subr.sh is by its tests): the paths of the tools, a temporary
# directory removed on exit together with every background process the
# test started, pass/fail/skip counting, and the exit status
# tests/run-tests.sh reads: 0 passed, 1 failed, 77 skipped (could not run).
#
#   NAME=suite; . "$(dirname "$0")/lib/harness.sh"    (NAME defaults to the
#                                    script's name)
#   need_files PATH...    built files the test uses: a missing one is a
#                         failure (run make), never a skip
#   need_cmds CMD...      tools from make deps: without one the test cannot
#                         run and is skipped (exit 77)
#   need_bpf              root, BTF, and a BPF recording that loads: else
#                         skipped (exit 77); a recorder that fails for any
#                         other reason is a failure
#   skip_test REASON      the whole test cannot run: exit 77
#   bg CMD...             run CMD in the background; $bg_pid is its pid
#   stop PID              SIGTERM and reap one background process (returns
#                         its exit status)
#   at_exit=CODE          shell code run on exit, before $tmp goes (append
#                         to it, do not overwrite what is there)
#   pass DESC, fail DESC [DETAIL], check DESC CMD...
#   skip DESC REASON      one check that cannot run here: the test then ends
#                         as skipped (77) if nothing failed, never as passed
#   finish                print the counts and exit with the status
#   within N LO HI        LO <= N <= HI
#   golden NAME FILE      FILE is tests/golden/NAME byte for byte
#   share_ok DESC PART TOTAL PCT [FLOOR]
#                         a share within a tolerance from the sample count
#   share_min DESC PART TOTAL PCT [FLOOR]
#                         a share at least PCT, less that tolerance
#   wait_sampling FILE PID  until stkrec PID is sampling (its -o appears)
#   wait_until CMD...     until CMD succeeds (a bound against hangs only)
#
# On exit (finish, exit, INT, TERM) every process started with bg is
# killed (a stkrec among them releases its BPF links and perf events as
# it dies) and reaped, $at_exit runs (e.g. a umount), and $tmp is removed.

NAME=${NAME:-$(basename "$0" .sh)}
top=$(cd "$(dirname "$0")/../.." && pwd)
O=$(cd "$top" && cd "${O:-build}" && pwd) || {
	echo "$NAME: build directory ${O:-build} missing; run make"
	exit 1
}
REC=$O/stkrec
REP=$O/stkreport
DUMP=$O/tests/tools/stkdump
CW=$O/samples/cpuwork
OW=$O/samples/offwork
FX=$O/tests/fixtures
MK=$O/tests/tools/mkcapture
GOLD=$top/tests/golden

passed=0
failed=0
skipped=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stk-$NAME.XXXXXX") || exit 1
# stkreport's symbol cache (--symbol-cache) starts empty in every test and
# goes with it: a test's output never depends on what ran before.
XDG_CACHE_HOME=$tmp/xdg-cache
export XDG_CACHE_HOME
bg_pids=
at_exit=	# shell code a test wants run on exit, before $tmp goes
harness_cleanup() {
	for _p in $bg_pids; do
		kill -KILL "$_p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "$at_exit" ] && eval "$at_exit"
	rm -rf "$tmp"
}
trap harness_cleanup EXIT
trap 'exit 1' INT TERM

pass() {
	echo "ok   $1"
	passed=$((passed + 1))
}
fail() {
	echo "FAIL $1${2:+: $2}"
	failed=$((failed + 1))
}
skip() {
	echo "SKIP $1: $2"
	skipped=$((skipped + 1))
}
# check DESCRIPTION COMMAND...: pass if COMMAND succeeds.
check() {
	_d=$1
	shift
	if "$@"; then pass "$_d"; else fail "$_d"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -gt 0 ] && exit 1
	if [ "$skipped" -gt 0 ]; then
		echo "$NAME: $skipped checks could not run here: skipped, not passed"
		exit 77
	fi
	exit 0
}

skip_test() {
	echo "$NAME: $1; skipped"
	exit 77
}
need_files() {
	for _f in "$@"; do
		if [ ! -e "$_f" ]; then
			echo "$NAME: $_f missing; run make"
			echo "0 passed, 1 failed"
			exit 1
		fi
	done
}
need_cmds() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || skip_test "needs $_c (make deps)"
	done
}
# BPF needs root (CAP_BPF + CAP_PERFMON), a kernel with BTF (CO-RE), and a
# kernel that lets this process load and attach programs (not so in some
# containers): a recording of "true" tries exactly that.  The runner's
# STK_REQUIRE_BPF=1 turns the skip into a failure.
need_bpf() {
	need_files "$REC"
	[ "$(id -u)" = 0 ] || skip_test "needs root for BPF"
	[ -e /sys/kernel/btf/vmlinux ] || skip_test "kernel without BTF"
	if ! "$REC" -q -o "$tmp/bpf-probe.stk" -- true 2>"$tmp/bpf-probe.err"; then
		case $(cat "$tmp/bpf-probe.err") in
		*"Operation not permitted"* | *"missing CAP_"* | *"Function not implemented"*)
			skip_test "BPF not usable here ($(cat "$tmp/bpf-probe.err"))" ;;
		esac
		echo "$NAME: stkrec -- true failed: $(cat "$tmp/bpf-probe.err")"
		echo "0 passed, 1 failed"
		exit 1
	fi
	rm -f "$tmp/bpf-probe.stk" "$tmp/bpf-probe.err"
}

# bg CMD ARGS: run in the background; bg_pid is its pid, killed on exit.
bg() {
	"$@" &
	bg_pid=$!
	bg_pids="$bg_pids $bg_pid"
}
# stop PID: SIGTERM a background process and reap it.
stop() {
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# within N LO HI: LO <= N <= HI (integers).
within() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# golden NAME FILE: FILE is tests/golden/NAME byte for byte (else the diff
# is printed); STK_GOLDEN_UPDATE=1 rewrites tests/golden/NAME from FILE
# instead (review the diff before committing it).
golden() {
	if [ "${STK_GOLDEN_UPDATE:-0}" = 1 ]; then
		cp "$2" "$GOLD/$1" && echo "updated $GOLD/$1"
		return 0
	fi
	diff -u "$GOLD/$1" "$2" > "$tmp/golden.diff" && return 0
	head -n 40 "$tmp/golden.diff"
	return 1
}

# ---- truths that stay put (issue: no test depends on luck) -------------------
#
# share_ok DESC PART TOTAL WANT_PCT [FLOOR_PTS]: one check that PART of
# TOTAL samples is WANT_PCT percent, within a tolerance derived from the
# sample count: 4.5 binomial standard deviations (a correct profiler fails
# less than once in 100,000 runs), and never under FLOOR_PTS points
# (default 2: what no sample count removes, the few samples a process's
# start-up, a timer's phase or a function's first instructions move).  The
# check's line says the count, the share, the expected share and the
# tolerance it used, so a failure in a CI log explains itself.
share_ok() {
	_d=$1 _p=$2 _t=$3 _w=$4 _f=${5:-2}
	_r=$(awk -v p="$_p" -v t="$_t" -v w="$_w" -v f="$_f" 'BEGIN {
		if (t <= 0) { printf "0 0 1"; exit }
		q = w / 100; tol = 100 * 4.5 * sqrt(q * (1 - q) / t)
		if (tol < f) tol = f
		x = 100 * p / t; d = x - w; if (d < 0) d = -d
		printf "%.1f %.1f %d", x, tol, (d > tol) }')
	set -- $_r
	if [ "$3" -eq 0 ]; then
		pass "$_d: $1% ($_p of $_t), expected $_w% +- $2"
	else
		fail "$_d: $1% ($_p of $_t), expected $_w% +- $2"
	fi
}

# share_min DESC PART TOTAL MIN_PCT [FLOOR_PTS]: one check that PART of
# TOTAL samples is at least MIN_PCT percent, less share_ok's tolerance for
# MIN_PCT (4.5 binomial standard deviations, at least FLOOR_PTS points):
# the one-sided form, for a share that a correct profiler may exceed
# (share_ok would fail 99% against 95% +- 2).
share_min() {
	_d=$1 _p=$2 _t=$3 _w=$4 _f=${5:-2}
	_r=$(awk -v p="$_p" -v t="$_t" -v w="$_w" -v f="$_f" 'BEGIN {
		if (t <= 0) { printf "0 0 1"; exit }
		q = w / 100; tol = 100 * 4.5 * sqrt(q * (1 - q) / t)
		if (tol < f) tol = f
		x = 100 * p / t
		printf "%.1f %.1f %d", x, tol, (x < w - tol) }')
	set -- $_r
	if [ "$3" -eq 0 ]; then
		pass "$_d: $1% ($_p of $_t), expected >= $_w% - $2"
	else
		fail "$_d: $1% ($_p of $_t), expected >= $_w% - $2"
	fi
}

# wait_sampling FILE PID: wait until the recorder PID is sampling.  stkrec
# writes to a temporary file beside -o and puts it in -o's place once
# everything is attached (stk_writer__commit), so FILE appearing is its
# "sampling" signal (FILE must not exist before: a path stkrec replaces
# is there all along); a recorder that exits first is a failure (its
# file never comes).  Returns 0 once sampling, 1 if PID ended first.  The 120 s
# bound only keeps a broken recorder from hanging the suite.
wait_sampling() {
	wait_until sampling_or_gone "$1" "$2"
	[ -e "$1" ]
}
sampling_or_gone() {
	[ -e "$1" ] || ! kill -0 "$2" 2>/dev/null
}

# wait_until CMD...: poll CMD every 0.1 s until it succeeds; 1 after 120 s
# (a bound against hanging, never a timing assertion: what the test waits
# for comes from what it did, not from how fast the machine is).
wait_until() {
	_i=0
	until "$@"; do
		[ $_i -ge 1200 ] && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 0
}
