#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# python_frames: Python functions in the stacks (issue #24).  For Debian's
# python3 and pyenv's 3.8, 3.10, 3.11, 3.12 and 3.13 (one not installed is
# said and passed over; Debian's must be there), stkrec -F 499 -- PY
# tests/python/pywork.py all, a workload whose Python call tree is known
# and which carries an oracle: a thread sampling sys._current_frames() for
# the work thread, whose counts of Python paths pywork writes at SIGTERM.
# The work thread's samples (stkreport -f folded --tid), their Python
# frames only (native and kernel frames dropped, " (FILE:LINE)" cut):
#  (a) >= 97% carry the whole Python path, from the thread's root
#      (threading's _bootstrap) to main and below; and (share_min) 97% are
#      paths the oracle saw too;
#  (b) under main;middle, leaf_hot has 75% and leaf_cold 25% (the same
#      unit() 3 times and once a round: by construction), within 4.5
#      binomial standard deviations of the sample count (share_ok), and the
#      oracle's split agrees;
#  (c) recursion, a generator, an asyncio task and a sorted() key (C ->
#      Python): the samples under each are on the oracle's path for it
#      (recurse D+1 frames deep, consume;gen_units, the event loop's frames
#      down to async_job, sort_round;sort_key), each part's share agrees
#      with the oracle's, and the key's samples have native frames (sorted)
#      between sort_round and sort_key;
#  (d) no _PyEval_EvalFrameDefault is left where Python frames replaced it;
#      and with --python=no, the same capture shows _PyEval_EvalFrameDefault
#      and no Python frame at all;
#  (e) line numbers (QUALNAME (FILE:LINE)): unit's samples are at lines of
#      its body, and middle's at the line of its call to leaf_hot or
#      leaf_cold, whichever is below it.
# Each recording lasts until the work thread has used 300 ticks (3 s) of
# CPU (~1500 samples at 499 Hz, however long a busy machine takes to give
# them) and the oracle has 500 samples; then pywork gets SIGTERM, and
# stkrec ends with it.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone: beside other tests the work thread would take far longer to
# get its 3 s of CPU.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/python.sh"

[ -x /usr/bin/python3 ] || fail "Debian's /usr/bin/python3 is there"

# frames_of LABEL: the numbers of the capture's work-thread samples, as
# "KEY VALUE" lines (see below), into $tmp/LABEL.num.
frames_of() {
	awk -v root="$pw_root" -v depth="$pw_depth" -v udef="$(def_line unit)" -v mdef="$(def_line middle)" "$PY_AWK"'
	function has(p, name,    k, e, i, n) {
		k = split(p, e, ";")
		for (i = 1; i <= k; i++) if (e[i] == name) n++
		return n + 0
	}
	function under(p, pre) {
		return p == pre || index(p, pre ";") == 1
	}
	BEGIN { nm = split("recurse gen_units async_job sort_key", mk, " ") }
	# The oracle: its paths, the split, and per part its most frequent
	# path (the one each sample of that part should have).
	FNR == NR {
		n = $NF; p = $0; sub(/ [0-9]+$/, "", p)
		seen[p] = 1; ot += n
		if (under(p, root ";middle;leaf_hot")) oh += n
		if (under(p, root ";middle;leaf_cold")) oc += n
		for (j = 1; j <= nm; j++) if (has(p, mk[j])) {
			om[j] += n
			if (n > obn[j]) { obn[j] = n; ob[j] = p }
		}
		next
	}
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		p = ""; ev = 0; sr = 0; sk = 0; nat = 0; last = ""; mline = -1; mnext = ""
		for (i = 2; i <= k; i++) {
			if (f[i] == "_PyEval_EvalFrameDefault" || index(f[i], "_PyEval_EvalFrameDefault.") == 1) ev = 1
			q = pyframe(f[i])
			if (q == "") { if (sr && !sk) nat = 1; continue }
			if (q == "sort_round") sr = i
			if (q == "sort_key" && sr) sk = i
			if (last == "middle") mnext = q
			if (q == "middle") mline = pyline(f[i])
			if (q == "unit") uline = pyline(f[i])
			last = q
			p = p (p == "" ? "" : ";") q
		}
		# Lines: unit runs its loop, lines udef+1..udef+4; middle calls
		# leaf_hot from line mdef+1, leaf_cold from mdef+2.
		if (last == "unit") { un += n; if (uline > udef && uline <= udef + 4) uok += n }
		if (mnext == "leaf_hot") { mh += n; if (mline == mdef + 1) mhok += n }
		if (mnext == "leaf_cold") { mc += n; if (mline == mdef + 2) mcok += n }
		t += n
		if (under(p, root)) whole += n
		if (p in seen) known += n
		if (has(p, "[python")) marked += n
		if (ev) eval += n
		if (under(p, root ";middle;leaf_hot")) h += n
		if (under(p, root ";middle;leaf_cold")) c += n
		for (j = 1; j <= nm; j++) if (has(p, mk[j])) {
			sm[j] += n
			if (p == ob[j]) { sx[j] += n; if (j == 4 && nat) between += n }
		}
	}
	END {
		want = root
		for (i = 0; i <= depth; i++) want = want ";recurse"
		want = want ";unit"
		printf "total %d\nwhole %d\nknown %d\nmarked %d\neval %d\nhot %d\ncold %d\n", t, whole, known, marked, eval, h, c
		printf "o_total %d\no_hot %d\no_cold %d\no_rec_depth_ok %d\nbetween %d\n", ot, oh, oc, ob[1] == want, between
		printf "unit %d\nunit_ok %d\nmid_hot %d\nmid_hot_ok %d\nmid_cold %d\nmid_cold_ok %d\n", un, uok, mh, mhok, mc, mcok
		for (j = 1; j <= nm; j++)
			printf "n_%s %d\nx_%s %d\no_%s %d\n", mk[j], sm[j], mk[j], sx[j], mk[j], om[j]
	}' "$tmp/$1.oracle" "$tmp/$1.folded" > "$tmp/$1.num"
}

# def_line FUNCTION: the line of pywork.py's "def FUNCTION(".
def_line() {
	grep -n "^def $1(" "$PYWORK" | cut -d: -f1
}

# num LABEL KEY
num() {
	awk -v k="$2" '$1 == k { print $2 }' "$tmp/$1.num"
}

# native_of LABEL: "TOTAL EVAL PY" of the --python=no report: samples,
# those with a _PyEval_EvalFrameDefault frame, those with any Python frame
# or name of pywork's functions.
native_of() {
	awk "$PY_AWK"'BEGIN {
		split("leaf_hot leaf_cold middle recurse gen_units consume async_job sort_key sort_round", a, " ")
		for (i in a) ours[a[i]] = 1
	}
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		ev = 0; py = 0
		for (i = 2; i <= k; i++) {
			if (f[i] == "_PyEval_EvalFrameDefault" || index(f[i], "_PyEval_EvalFrameDefault.") == 1) ev = 1
			if (pyframe(f[i]) != "" || (f[i] in ours)) py = 1
		}
		t += n; e += ev * n; q += py * n
	}
	END { printf "%d %d %d\n", t, e, q }' "$tmp/$1.native"
}

run_version() {
	l=$1 py=$2
	pywork_start "$l" "$py" all -q -F 499 || return
	pywork_until 300 500
	pywork_stop
	check "$l: stkrec -F 499 -- $py pywork.py all ends with pywork, exit 0 (got $pw_rc: $(cat "$tmp/$l.rec.out"))" \
		[ "$pw_rc" -eq 0 ]
	if [ ! -s "$tmp/$l.oracle" ]; then
		fail "$l: pywork wrote its oracle's counts"
		return
	fi
	"$REP" -f folded --tid "$pw_work" "$tmp/$l.stk" > "$tmp/$l.folded" 2> "$tmp/$l.rep.err"
	rc=$?
	check "$l: stkreport -f folded --tid (the work thread) exit 0 (got $rc: $(head -c 300 "$tmp/$l.rep.err"))" [ "$rc" -eq 0 ]
	"$REP" -f folded --python=no --tid "$pw_work" "$tmp/$l.stk" > "$tmp/$l.native" 2> "$tmp/$l.nat.err"
	rc=$?
	check "$l: stkreport -f folded --python=no exit 0 (got $rc: $(head -c 300 "$tmp/$l.nat.err"))" [ "$rc" -eq 0 ]
	frames_of "$l"
	echo "     $l: $("$REP" info "$tmp/$l.stk" 2>/dev/null | awk '$1 == "stat" && $2 ~ /^python_/ { printf "%s %s ", $2, $3 }')"
	t=$(num "$l" total) ot=$(num "$l" o_total)
	echo "     $l: $t samples of the work thread, $ot of the oracle; root $pw_root"
	echo "     $l: most frequent Python paths:"
	py_paths "$tmp/$l.folded" | awk '{ c[$1] += $2 } END { for (p in c) print c[p], p }' | sort -rn | head -n 4 |
		sed 's/^/         /'
	# 300 ticks at 499 Hz: ~1500; at least half.
	check "$l: the work thread has >= 750 samples ($t)" [ "$t" -ge 750 ]

	# (a) whole paths
	w=$(num "$l" whole)
	check "$l: >= 97% of the work thread's samples carry the whole Python path $pw_root;... ($w of $t; $(num "$l" marked) with a [python ...] marker)" \
		[ "$t" -gt 0 -a $((w * 100)) -ge $((t * 97)) ]
	share_min "$l: samples on a Python path the oracle saw too" "$(num "$l" known)" "$t" 97

	# (b) the 75/25 split, and the oracle's
	h=$(num "$l" hot) c=$(num "$l" cold) oh=$(num "$l" o_hot) oc=$(num "$l" o_cold)
	share_ok "$l: leaf_hot's share under main;middle" "$h" $((h + c)) 75
	share_ok "$l: the oracle's leaf_hot share under main;middle" "$oh" $((oh + oc)) 75
	agree_oracle "$l: leaf_hot's share under main;middle" "$h" $((h + c)) "$oh" $((oh + oc))

	# (c) recursion, generator, async task, sorted()'s key
	check "$l: the oracle sees recurse $((pw_depth + 1)) frames deep above unit" [ "$(num "$l" o_rec_depth_ok)" -eq 1 ]
	for m in recurse gen_units async_job sort_key; do
		n=$(num "$l" "n_$m") x=$(num "$l" "x_$m") o=$(num "$l" "o_$m")
		check "$l: $m: samples in both ($n stk, $o oracle)" [ "$n" -gt 0 -a "$o" -gt 0 ]
		share_min "$l: $m: samples on the oracle's path for it" "$x" "$n" 97
		agree_oracle "$l: $m: share of the work thread" "$n" "$t" "$o" "$ot"
	done
	share_min "$l: sort_key: samples with native frames (sorted) between sort_round and sort_key" \
		"$(num "$l" between)" "$(num "$l" x_sort_key)" 97

	# (e) line numbers: the leaf's instruction, the callers' call sites
	share_min "$l: unit's samples at a line of its body ($(($(def_line unit) + 1))-$(($(def_line unit) + 4)))" \
		"$(num "$l" unit_ok)" "$(num "$l" unit)" 97
	share_min "$l: middle calls leaf_hot from line $(($(def_line middle) + 1))" \
		"$(num "$l" mid_hot_ok)" "$(num "$l" mid_hot)" 97
	share_min "$l: middle calls leaf_cold from line $(($(def_line middle) + 2))" \
		"$(num "$l" mid_cold_ok)" "$(num "$l" mid_cold)" 97

	# (d) _PyEval_EvalFrameDefault replaced; --python=no
	e=$(num "$l" eval)
	share_min "$l: samples with no _PyEval_EvalFrameDefault left (replaced by Python frames)" $((t - e)) "$t" 97
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(native_of "$l")
	share_min "$l: --python=no: samples through _PyEval_EvalFrameDefault" "$2" "$1" 97
	check "$l: --python=no: no Python frame ($3 samples with one, of $1)" [ "$1" -gt 0 -a "$3" -eq 0 ]
}

for l in $(py_versions | awk '{ print $1 }'); do
	py=$(py_versions | awk -v l="$l" '$1 == l { print $2 }')
	if [ "$py" = - ]; then
		echo "     $l: no pyenv python$l installed: not tested"
		continue
	fi
	run_version "$l" "$py"
done
finish
