#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench, Python frames (issue #24): what walking the interpreter's
# frames costs.  tests/python/pywork.py all (main -> middle -> leaf_*,
# recursion 13 deep, a generator, an asyncio task, a sorted() key; ~10
# Python frames a sample, 20 at most) is recorded by stkrec -F PY_HZ
# (default 999) -- PY for PY_SECONDS (default 4) after it is ready, REPS
# times (default 3, medians), for Debian's python3 and each of pyenv's
# 3.8-3.13 installed, two ways:
#  - with Python frames (the default);
#  - without: "stkrec --python=no" when the recorder has that switch; if
#    not, the same workload under pyenv's python3.7, which stkrec does not
#    walk (the native stack of 3.7 is as deep as 3.8's, deeper than
#    3.11+'s: that baseline flatters 3.11+).
# Printed per interpreter: the per-sample cost of stkrec's on_cpu_sample
# BPF program (run_time_ns and run_cnt from the kernel's BPF statistics,
# kernel.bpf_stats_enabled set for the run and restored; the program runs
# on every CPU's timer, and the runs on other tasks' ticks, whose number
# moves with the machine's load, are taken out at the cost such a run has
# alone, measured first with stkrec -- sleep) and its ratio (goal <= 2); the .stk size per 1000
# samples with and without Python frames; ratios are medians of the pairs'
# (each pair run one after the other); and the recorder's python_* STATs
# as totals and per second of recording (code objects read, and what else
# SPEC.md lists under python_).
# Needs root, bpftool and jq.  Environment: O, REPS, PY_SECONDS, PY_HZ.

O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
REC=$O/stkrec
REP=$O/stkreport
PYWORK=$top/tests/python/pywork.py
REPS=${REPS:-3}
PY_S=${PY_SECONDS:-4}
PY_HZ=${PY_HZ:-999}

if [ "$(id -u)" != 0 ]; then
	echo "bench_python: needs root (BPF)" >&2
	exit 1
fi
[ -x "$REC" ] && [ -x "$REP" ] || { echo "bench_python: $REC or $REP missing; run make" >&2; exit 1; }
command -v bpftool > /dev/null && command -v jq > /dev/null ||
	{ echo "bench_python: bpftool or jq not found (apt-get install bpftool jq)" >&2; exit 1; }

tmp=$(mktemp -d)
rec_pid=
py_pid=
stats_was=
trap '[ -n "$py_pid" ] && kill -KILL $py_pid 2>/dev/null; [ -n "$rec_pid" ] && kill -KILL $rec_pid 2>/dev/null; [ -n "$stats_was" ] && sysctl -q kernel.bpf_stats_enabled="$stats_was"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

pyenv_root=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
# pyenv_python V: the newest installed pyenv pythonV, or nothing.
pyenv_python() {
	_p=
	for _c in "$pyenv_root"/versions/"$1".*/bin/python"$1"; do
		[ -x "$_c" ] && _p=$_c
	done
	echo "$_p"
}

if "$REC" --help 2>&1 | grep -q -- '--python'; then
	switch=yes
	base_desc="stkrec --python=no"
else
	switch=no
	py37=$(pyenv_python 3.7)
	if [ -z "$py37" ]; then
		echo "bench_python: stkrec has no --python switch and pyenv's python3.7 is missing: no baseline" >&2
		exit 1
	fi
	base_desc="pywork under python3.7 (not walked: stkrec has no --python switch)"
fi

# bpf_cost PID: "run_time_ns run_cnt" of the on_cpu_sample program that
# PID holds (its fds' fdinfo name the programs: other recorders may be
# running), or nothing before it is loaded.  As in bench.sh.
bpf_cost() {
	for id in $(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ { print $2 }' | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null | jq -r 'select(.name == "on_cpu_sample") |
			"\(.run_time_ns // 0) \(.run_cnt // 0)"' 2>/dev/null
	done | head -1
}

# median: of the numbers on stdin, "-" lines left out (0 if none).
median() {
	grep -v '^-' | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'
}

# py_run OUT PY STKREC_ARGS...: one recording of pywork all under PY for
# PY_S seconds once it is ready; "NS_PER_RUN SIZE SAMPLES" to OUT, the
# capture in $tmp/run.stk.
py_run() {
	_out=$1 _py=$2
	shift 2
	rm -f "$tmp/ready" "$tmp/run.stk"
	"$REC" -q -F "$PY_HZ" "$@" -o "$tmp/run.stk" -- "$_py" "$PYWORK" all "$tmp/oracle" "$tmp/ready" \
		> "$tmp/rec.out" 2>&1 &
	rec_pid=$!
	_w=0
	while [ ! -s "$tmp/ready" ] && kill -0 "$rec_pid" 2>/dev/null && [ $_w -lt 600 ]; do
		sleep 0.1
		_w=$((_w + 1))
	done
	if [ ! -s "$tmp/ready" ]; then
		echo "bench_python: $_py pywork.py did not start: $(cat "$tmp/rec.out")" >&2
		exit 1
	fi
	py_pid=$(awk '$1 == "pid" { print $2 }' "$tmp/ready")
	_last=
	_end=$(($(date +%s) + PY_S))
	while [ "$(date +%s)" -lt $_end ]; do
		_v=$(bpf_cost "$rec_pid")
		[ -n "$_v" ] && _last=$_v
		sleep 0.5
	done
	_v=$(bpf_cost "$rec_pid")
	[ -n "$_v" ] && _last=$_v
	kill -TERM "$py_pid"
	wait "$rec_pid"
	rec_pid= py_pid=
	"$REP" info "$tmp/run.stk" 2>/dev/null | awk '$1 == "stat" && $2 == "samples:" { n = $3 }
		$1 == "stat" && $2 == "sample_events:" { e = $3 } END { print n + 0, e + 0 }' > "$tmp/n"
	read -r _n _e < "$tmp/n"
	# The program runs on every CPU's timer tick; a share f = STAT
	# samples / STAT sample_events of its runs are pywork's samples, the
	# rest other tasks' ticks, each costing about c0 (the filter: measured
	# alone, -- sleep).  Their number moves with the machine's load, so
	# they are taken out: per sample (T - (1 - f) E c0) / (f E), T and E
	# the program's run time and runs.
	# No reading (bpftool failed all along): "-", left out of the medians.
	echo "${_last:-0 0}" | awk -v s="$(stat -c %s "$tmp/run.stk")" -v n="$_n" -v e="$_e" -v c0="$C0" '{
		f = e ? n / e : 0
		if (f && $2) printf "%.0f %d %d\n", ($1 - (1 - f) * $2 * c0) / (f * $2), s, n
		else printf "- %d %d\n", s, n }' >> "$_out"
}

# filter_cost STKREC_ARGS...: median ns per run of on_cpu_sample while it
# samples other tasks only (stkrec -- sleep): what a tick costs that is
# not the target's.
filter_cost() {
	: > "$tmp/c0"
	_r=0
	while [ $_r -lt "$REPS" ]; do
		rm -f "$tmp/c0.stk"
		"$REC" -q -F "$PY_HZ" "$@" -o "$tmp/c0.stk" -- sleep 3 > /dev/null 2>&1 &
		rec_pid=$!
		sleep 2.5
		bpf_cost "$rec_pid" | awk '{ printf "%.0f\n", $2 ? $1 / $2 : 0 }' >> "$tmp/c0"
		wait "$rec_pid"
		rec_pid=
		_r=$((_r + 1))
	done
	median < "$tmp/c0"
}

# py_stats FILE: the python_* STATs of a capture, "NAME VALUE PER_SECOND".
py_stats() {
	"$REP" info "$1" 2>/dev/null | awk '
		$1 == "stat" && $2 == "duration_ns:" { d = $3 }
		$1 == "stat" && $2 ~ /^python_/ { n++; k[n] = $2; v[n] = $3 }
		END {
			for (i = 1; i <= n; i++) {
				sub(/:$/, "", k[i])
				printf "%s %.0f %.1f\n", k[i], v[i], d ? v[i] / (d / 1e9) : 0
			}
		}'
}

stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
c0_with=$(filter_cost)
if [ $switch = yes ]; then c0_without=$(filter_cost --python=no); else c0_without=$c0_with; fi
echo
echo "Python frames (issue #24): pywork.py all, $PY_S s at $PY_HZ Hz, $REPS runs each, medians; baseline: $base_desc"
echo "  (a tick of another task costs on_cpu_sample $c0_with ns, $c0_without ns without Python frames; taken out)"
printf '  %-8s %12s %12s %7s   %14s %14s %7s\n' python "BPF ns/sample" baseline ratio "KiB/1k samples" baseline ratio
for v in debian 3.8 3.10 3.11 3.12 3.13; do
	if [ $v = debian ]; then py=/usr/bin/python3; else py=$(pyenv_python $v); fi
	[ -x "$py" ] || { echo "  $v: not installed"; continue; }
	: > "$tmp/with"; : > "$tmp/without"
	r=0
	while [ $r -lt "$REPS" ]; do
		C0=$c0_with py_run "$tmp/with" "$py"
		cp "$tmp/run.stk" "$tmp/with.stk"
		if [ $switch = yes ]; then
			C0=$c0_without py_run "$tmp/without" "$py" --python=no
		else
			C0=$c0_without py_run "$tmp/without" "$py37"
		fi
		r=$((r + 1))
	done
	# Medians of each, and of the ratios of the pairs (a run with and
	# one without, one after the other: the machine's load drifts less
	# within a pair than across the reps).  Size per 1000 samples: the
	# runs' sample counts differ.
	paste "$tmp/with" "$tmp/without" > "$tmp/pairs"
	awk '{ print $1 }' "$tmp/with" | median > "$tmp/a"
	awk '{ print $1 }' "$tmp/without" | median > "$tmp/b"
	awk '{ print ($1 != "-" && $4 != "-" && $4 > 0) ? $1 / $4 : "-" }' "$tmp/pairs" | median > "$tmp/ab"
	awk '{ print $3 ? 1000 * $2 / $3 : 0 }' "$tmp/with" | median > "$tmp/c"
	awk '{ print $3 ? 1000 * $2 / $3 : 0 }' "$tmp/without" | median > "$tmp/d"
	awk '{ print ($3 && $5 && $6) ? ($2 / $3) / ($5 / $6) : 0 }' "$tmp/pairs" | median > "$tmp/cd"
	awk -v v="$v" -v a="$(cat "$tmp/a")" -v b="$(cat "$tmp/b")" -v ab="$(cat "$tmp/ab")" \
		-v c="$(cat "$tmp/c")" -v d="$(cat "$tmp/d")" -v cd="$(cat "$tmp/cd")" 'BEGIN {
		printf "  %-8s %12d %12d %7.2f   %14.1f %14.1f %7.2f\n", v, a, b, ab, c / 1024, d / 1024, cd }'
	py_stats "$tmp/with.stk" | awk -v v="$v" '{ printf "  %-8s   %s: %s (%s/s)\n", "", $1, $2, $3 }'
done
echo "  (goal: BPF cost with Python frames <= 2x the native walk's)"
sysctl -q kernel.bpf_stats_enabled="$stats_was"
stats_was=
