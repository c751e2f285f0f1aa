#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# python_offcpu: Python functions in off-CPU stacks (issue #24).  For
# Debian's python3 and pyenv's 3.8, 3.10, 3.11, 3.12 and 3.13 (one not
# installed is said and passed over), stkrec offcpu -- PY
# tests/python/pywork.py sleep: its thread "pw-sleep" loops sleeper -> nap
# -> time.sleep(0.05).  Of that thread's blocked time (stkreport -f folded
# --tid, microseconds):
#  - >= 97% is under the Python frames the oracle sees it in, root ->
#    sleeper;nap (pywork's oracle samples the thread's frames), directly
#    followed by native frames only, the interpreter's sleep (clock_nanosleep
#    from 3.11, select before) and the kernel's;
#  - with --python=no none of it names a Python frame.
# The thread blocks almost all the time: its GIL waits after each nap are
# under nap too (the thread is still in time.sleep()).  A recording lasts
# until the oracle has 200 samples (~1 s, ~20 naps); then pywork gets
# SIGTERM and stkrec ends with it.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/python.sh"

[ -x /usr/bin/python3 ] || fail "Debian's /usr/bin/python3 is there"

# blocked LABEL: "TOTAL NAP PY": the thread's blocked us, those under
# ROOT;sleeper;nap followed by native frames into the sleep, and those
# with any Python frame (for the --python=no report).
blocked() {
	awk -v want="$pw_root;nap" "$PY_AWK"'{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		p = ""; after = 0; slp = 0; bad = 0
		for (i = 2; i <= k; i++) {
			q = pyframe(f[i])
			if (q != "") {
				p = p (p == "" ? "" : ";") q
				if (after) bad = 1
				if (p == want) after = 1
				continue
			}
			if (after && f[i] ~ /nanosleep|select/) slp = 1
		}
		t += n
		if (p == want && slp && !bad) ok += n
		if (p != "") py += n
	}
	END { printf "%d %d %d\n", t, ok, py }' "$1"
}

run_version() {
	l=$1 py=$2
	pywork_start "$l" "$py" sleep offcpu -q || return
	pywork_until 0 200
	pywork_stop
	check "$l: stkrec offcpu -- $py pywork.py sleep ends with pywork, exit 0 (got $pw_rc: $(cat "$tmp/$l.rec.out"))" \
		[ "$pw_rc" -eq 0 ]
	o=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/$l.oracle" 2>/dev/null)
	oo=$(awk -v p="$pw_root;nap" '$1 == p { n += $NF } END { print n + 0 }' "$tmp/$l.oracle" 2>/dev/null)
	share_min "$l: the oracle sees the thread in $pw_root;nap" "$oo" "$o" 99
	"$REP" -f folded --tid "$pw_sleep" "$tmp/$l.stk" > "$tmp/$l.folded" 2> "$tmp/$l.rep.err"
	rc=$?
	check "$l: stkreport -f folded --tid (the sleeper) exit 0 (got $rc: $(head -c 300 "$tmp/$l.rep.err"))" [ "$rc" -eq 0 ]
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(blocked "$tmp/$l.folded")
	echo "     $l: the sleeper blocked $1 us, $2 us of it under $pw_root;nap and the sleep"
	py_paths "$tmp/$l.folded" | awk '{ c[$1] += $2 } END { for (p in c) print c[p], p }' | sort -rn | head -n 3 |
		sed 's/^/         /'
	check "$l: >= 97% of the sleeper's blocked time ($1 us) is under $pw_root;nap (Python) above the native sleep ($2 us)" \
		[ "$1" -gt 0 -a $(($2 * 100)) -ge $(($1 * 97)) ]
	"$REP" -f folded --python=no --tid "$pw_sleep" "$tmp/$l.stk" > "$tmp/$l.native" 2> "$tmp/$l.nat.err"
	rc=$?
	check "$l: stkreport --python=no exit 0 (got $rc: $(head -c 300 "$tmp/$l.nat.err"))" [ "$rc" -eq 0 ]
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(blocked "$tmp/$l.native")
	check "$l: --python=no: no Python frame ($3 us with one, of $1)" [ "$1" -gt 0 -a "$3" -eq 0 ]
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
