#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# pylines_live: the Python line table decoder (report/python/pylines.c)
# against the CPythons of this machine, not only those that made the
# committed fixtures: every CPython 3.8-3.13 under $PYENV_ROOT (default
# ~/.pyenv), /usr/bin/python3 and the python3 on PATH run
# tests/python/gen_linetables.py (3.11+ also with -X no_debug_ranges), and
# check_pylines decodes what each wrote, every offset against the
# interpreter's own line (its "truth" case only: the damage done to the
# committed tables is not repeated on these).  Skipped (77) when there is
# no CPython 3.8-3.13 here.

. "$(dirname "$0")/lib/harness.sh"
CHK=$O/tests/check_pylines
GEN=$top/tests/python/gen_linetables.py
need_files "$CHK" "$GEN"

# The interpreters, 3.8 to 3.13, each once (a pyenv shim on PATH is one of
# the others): "VERSION EXECUTABLE" lines, the executable as Python sees it.
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3.[0-9] \
	  "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3.[0-9][0-9] \
	  /usr/bin/python3 "$(command -v python3)"; do
	[ -x "$py" ] || continue
	"$py" -c 'import os, sys; print("%d.%d %s" % (sys.version_info[0], sys.version_info[1],
		  os.path.realpath(sys.executable)))' 2>/dev/null
done | awk '$1 ~ /^3\.([89]|1[0-3])$/ && !seen[$2]++' > "$tmp/pys"
[ -s "$tmp/pys" ] || skip_test "no CPython 3.8-3.13 here"

n=0
while read -r v py; do
	n=$((n + 1))
	dir=$tmp/fx$n
	mkdir -p "$dir"
	if ! "$py" "$GEN" > "$dir/lines.txt" 2> "$tmp/gen.err"; then
		fail "$py ($v) writes its line tables" "$(head -n 3 "$tmp/gen.err")"
		continue
	fi
	case $v in
	3.8|3.9|3.10) ;;
	*) "$py" -X no_debug_ranges "$GEN" > "$dir/nocolumns.txt" 2> "$tmp/gen.err" ||
		fail "$py -X no_debug_ranges ($v) writes its line tables" "$(head -n 3 "$tmp/gen.err")" ;;
	esac
	if CK_RUN_CASE=truth STK_PYLINES_FIXTURES=$dir "$CHK" > "$tmp/chk.out" 2>&1; then
		pass "$py ($v): every offset's line is CPython's"
	else
		fail "$py ($v): pylines disagrees with CPython" "$(grep -v '^Running' "$tmp/chk.out" | head -n 12)"
	fi
done < "$tmp/pys"
finish
