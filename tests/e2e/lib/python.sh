# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by tests/e2e/python_*.sh after lib/harness.sh and lib/record.sh:
# the interpreters to test, tests/python/pywork.py (a workload whose Python
# call tree is known, with an in-process oracle of where its threads are)
# recorded by stkrec -- PY pywork.py, and helpers over folded reports with
# Python frames (a Python frame is "QUALNAME (FILE:LINE)", docs: issue #24's
# design, section 4).
#
#   py_versions             "LABEL PATH" per interpreter: Debian's python3,
#                           then pyenv's 3.8, 3.10, 3.11, 3.12, 3.13 (PATH
#                           "-" when that one is not installed)
#   pywork_start LABEL PY MODE STKREC_ARGS...
#                           stkrec STKREC_ARGS -o $tmp/LABEL.stk -- PY
#                           pywork.py MODE $tmp/LABEL.oracle $tmp/LABEL.ready
#                           in the background, until pywork is ready: sets
#                           pw_rec, pw_pid, pw_work, pw_sleep, pw_depth,
#                           pw_root; 1 (after a fail) if it never was
#   pywork_until TICKS N    wait until the work thread has used TICKS clock
#                           ticks of CPU (none without one) and the oracle
#                           has taken N samples
#   pywork_stop             SIGTERM to pywork, which writes the oracle's
#                           file and exits, and so does stkrec: pw_rc is
#                           stkrec's exit status
#   py_paths FOLDED         the Python path of each line: "PATH COUNT"
#   agree_oracle DESC P1 T1 P2 T2
#                           P1 of T1 samples (stk) and P2 of T2 (the oracle)
#                           are the same share, within 4.5 standard
#                           deviations of their difference

[ -n "${tmp:-}" ] && [ -d "$tmp" ] || { echo "$0: source tests/e2e/lib/harness.sh first"; exit 1; }

PYWORK=$top/tests/python/pywork.py
need_files "$PYWORK"

py_versions() {
	echo "debian /usr/bin/python3"
	_root=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
	for _v in 3.8 3.10 3.11 3.12 3.13; do
		_p=-
		for _c in "$_root"/versions/"$_v".*/bin/python"$_v"; do
			[ -x "$_c" ] && _p=$_c
		done
		echo "$_v $_p"
	done
}

ready_or_gone() {
	[ -s "$1" ] || ! kill -0 "$2" 2>/dev/null
}

pywork_start() {
	_l=$1 _py=$2 _m=$3
	shift 3
	rm -f "$tmp/$_l.stk" "$tmp/$_l.oracle" "$tmp/$_l.oracle.count" "$tmp/$_l.ready"
	bg "$REC" "$@" -o "$tmp/$_l.stk" -- "$_py" "$PYWORK" "$_m" "$tmp/$_l.oracle" "$tmp/$_l.ready" \
		>"$tmp/$_l.rec.out" 2>&1
	pw_rec=$bg_pid
	wait_until ready_or_gone "$tmp/$_l.ready" "$pw_rec"
	if [ ! -s "$tmp/$_l.ready" ]; then
		fail "$_l: stkrec $* -- $_py pywork.py $_m starts" "$(cat "$tmp/$_l.rec.out")"
		return 1
	fi
	pw_pid=$(awk '$1 == "pid" { print $2 }' "$tmp/$_l.ready")
	pw_work=$(awk '$1 == "work" { print $2 }' "$tmp/$_l.ready")
	pw_sleep=$(awk '$1 == "sleep" { print $2 }' "$tmp/$_l.ready")
	pw_depth=$(awk '$1 == "depth" { print $2 }' "$tmp/$_l.ready")
	pw_root=$(awk '$1 == "root" { print $2 }' "$tmp/$_l.ready")
	pw_label=$_l
	return 0
}

# pw_enough TICKS N: the work thread (if any) has used TICKS ticks and the
# oracle has N samples (or pywork is gone: the caller finds out).
pw_enough() {
	kill -0 "$pw_pid" 2>/dev/null || return 0
	if [ "$pw_work" != 0 ]; then
		[ "$(cpu_ticks "$pw_pid/task/$pw_work" 2>/dev/null || echo 0)" -ge "$1" ] || return 1
	fi
	[ "$(cat "$tmp/$pw_label.oracle.count" 2>/dev/null || echo 0)" -ge "$2" ]
}

pywork_until() {
	wait_until pw_enough "$1" "$2"
}

pywork_stop() {
	kill -TERM "$pw_pid" 2>/dev/null
	wait "$pw_rec"
	pw_rc=$?
}

# A Python frame in a folded report is "QUALNAME (FILE:LINE)"; markers of
# the Python walk ("[python stopped: ...]", "[python: unknown code]") are
# kept as they are; every other frame (native, kernel) is dropped.
PY_AWK='
function pyframe(s) {
	if (s ~ / \([^()]*:[0-9]+\)$/) { sub(/ \([^()]*:[0-9]+\)$/, "", s); return s }
	if (s ~ /^\[python/) return s
	return ""
}
function pyline(s) {
	if (s !~ / \([^()]*:[0-9]+\)$/) return -1
	sub(/\)$/, "", s); sub(/.*:/, "", s)
	return s + 0
}'

py_paths() {
	awk "$PY_AWK"'{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		p = ""
		for (i = 2; i <= k; i++) {
			q = pyframe(f[i])
			if (q != "") p = p (p == "" ? "" : ";") q
		}
		print (p == "" ? "-" : p), n
	}' "$1"
}

agree_oracle() {
	_r=$(awk -v p1="$2" -v t1="$3" -v p2="$4" -v t2="$5" 'BEGIN {
		if (t1 <= 0 || t2 <= 0) { printf "0 0 0 1"; exit }
		q = (p1 + p2) / (t1 + t2)
		tol = 100 * 4.5 * sqrt(q * (1 - q) * (1 / t1 + 1 / t2))
		if (tol < 2) tol = 2
		x1 = 100 * p1 / t1; x2 = 100 * p2 / t2; d = x1 - x2; if (d < 0) d = -d
		printf "%.1f %.1f %.1f %d", x1, x2, tol, (d > tol) }')
	set -- "$1" $_r "$2" "$3" "$4" "$5"
	if [ "$5" -eq 0 ]; then
		pass "$1: stk $2% ($6 of $7) vs oracle $3% ($8 of $9), within +- $4"
	else
		fail "$1: stk $2% ($6 of $7) vs oracle $3% ($8 of $9), more than +- $4 apart"
	fi
}
