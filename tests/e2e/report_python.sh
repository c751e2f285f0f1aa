#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Python frames in reports (issue #24; SPEC.md, STCK "Python words" and
# ESYM kind 4), on captures mkcapture writes from tests/golden/report_python.spec
# with libfxpy.so (tests/fixtures/fx_py.c) standing in for libpython:
#  - where the frames go: each activation's frames, up to its entry frame,
#    in place of its _PyEval_EvalFrameDefault (or .cold) frame; frames left
#    at the root end; the stop marker after the last Python frame; unknown
#    code (no record, another fingerprint); C between activations in place;
#  - lines from the code objects' line tables (3.11 and 3.8: pylines);
#  - --python=no: the native frames, no Python word; a bad value refused;
#  - every output: text, folded (';' in a name escaped as other names are),
#    svg (Python frames green), top, pprof (go tool pprof -traces, -lines,
#    -list with the source, <module> kept whole), diff, merge (ESYM kind 4
#    carried through), a --since slice, info's count;
#  - max_stack_depth counts native frames: svg's [truncated] marker.
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/pprof.sh"
need_files "$MK" "$REP" "$FX/root/fx/libfxpy.so"

R="--sysroot $FX/root"
"$MK" -C "$FX/root" "$GOLD/report_python.spec" "$tmp/p.stk" || { fail "mkcapture"; finish; }

# same DESC EXPECTED_FILE GOT_FILE
same() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "differs (- expected, + got):"
		diff -u "$2" "$3" | sed 1,2d | head -30 | sed 's/^/    /'
	fi
}

# ---- where the frames go, and their names (folded) -----------------------

"$REP" -f folded $R "$tmp/p.stk" > "$tmp/folded" 2> "$tmp/folded.err"
cat > "$tmp/want" <<'EOF'
python3.8;Py_RunMain;work (worker.py:5);fxpy_cext 60
python3;<module> (main.py:1);f.<locals>:g\x1b[31m (<string>:3);[unknown];fxpy_cext 50
python3;Py_RunMain;_PyEval_EvalFrameDefault;PyObject_Call;[python stopped: fault];work (worker.py:2);fxpy_cext 40
python3;Py_RunMain;<module> (main.py:1);[python: unknown code];[python: unknown code] 30
python3;[python stopped: depth];<module> (main.py:1);main (main.py:7);Py_RunMain;work (worker.py:2) 20
python3;Py_RunMain;<module> (main.py:1);main (main.py:7);PyObject_Call;Worker.run (worker.py:20);work (worker.py:5);fxpy_cext 10
EOF
sort "$tmp/want" > "$tmp/want.s"
sort "$tmp/folded" > "$tmp/folded.s"
same "folded: each activation's frames in place of its loop frame, leftovers at the root end, stops, unknown code, lines" \
	"$tmp/want.s" "$tmp/folded.s"
check "closing line: unknown Python code and Python stops accounted" \
	grep -q "\[python\] (14.3% of samples have a frame of code the capture does not describe); 28.6% of samples' Python stacks stopped early (depth 9.5%, fault 19.0%)" "$tmp/folded.err"

# text: leaf first, a Python frame's line; the same names.
"$REP" $R "$tmp/p.stk" > "$tmp/text" 2>/dev/null
awk '/^$/ { if (s ~ /python3 \(300\)/ && s ~ /Worker.run/) print s; s = ""; next }
	{ sub(/^ +/, ""); s = s (s == "" ? "" : "|") $0 }' "$tmp/text" > "$tmp/text1"
check "text: leaf first, C between activations in place" grep -qx \
	'fxpy_cext|work (worker.py:5)|Worker.run (worker.py:20)|PyObject_Call|main (main.py:7)|<module> (main.py:1)|Py_RunMain|- *python3 (300)|10' \
	"$tmp/text1"
check "text: a ';' kept, the escape escaped" grep -qF 'f.<locals>;g\x1b[31m (<string>:3)' "$tmp/text"

# --python=no: the native frames; the words gone, not shown as addresses.
"$REP" -f folded --python=no $R "$tmp/p.stk" > "$tmp/native" 2>/dev/null
check "--python=no: the native stack of stack 1" grep -qx \
	'python3;Py_RunMain;_PyEval_EvalFrameDefault;PyObject_Call;_PyEval_EvalFrameDefault;fxpy_cext 50' "$tmp/native"
check "--python=no: no Python frame, marker or word left" sh -c \
	'! grep -qE "\.py:|\[python|<string>|\[unknown\];\[unknown\]" "$1"' - "$tmp/native"
"$REP" --python=yes -f folded $R "$tmp/p.stk" > "$tmp/yes" 2>/dev/null
check "--python=yes is the default" cmp -s "$tmp/yes" "$tmp/folded"
if "$REP" --python=maybe "$tmp/p.stk" > "$tmp/out" 2> "$tmp/err"; then
	fail "--python=maybe is refused"
else
	rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q "^stkreport: --python needs yes or no" "$tmp/err"; then
		pass "--python=maybe: one line, exit 2"
	else
		fail "--python=maybe: exit $rc" "$(cat "$tmp/err")"
	fi
fi

# ---- top, svg, diff, merge, slices, info ----------------------------------

"$REP" -f top $R "$tmp/p.stk" > "$tmp/top" 2>/dev/null
check "top: Python functions by file" grep -qE '^ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+%  Worker\.run \(worker\.py\)$' "$tmp/top"
check "top: markers are rows of their own" grep -q '\[python: unknown code\] (\[python\])' "$tmp/top"

"$REP" -f svg $R "$tmp/p.stk" > "$tmp/p.svg" 2>/dev/null
# fill NAME: the fill colours of the frames named NAME, one per line.
fill() { grep -F "<g n=\"$1\"" "$tmp/p.svg" | sed -n 's/.*fill="#\([0-9a-f]*\)".*/\1/p' | sort -u; }
green() {
	for c in $(fill "$1"); do
		r=$(printf %d "0x$(echo "$c" | cut -c1-2)")
		g=$(printf %d "0x$(echo "$c" | cut -c3-4)")
		b=$(printf %d "0x$(echo "$c" | cut -c5-6)")
		[ "$g" -gt "$r" ] && [ "$g" -gt "$b" ] || return 1
	done
	[ -n "$(fill "$1")" ]
}
check "svg: Python frames are green" green "Worker.run (worker.py:20)"
check "svg: <module> too" green "&lt;module&gt; (main.py:1)"
if green fxpy_cext; then fail "svg: native frames are not green"; else pass "svg: native frames are not green"; fi
check "svg: markers gray" sh -c 'c=$1; [ "$(echo "$c" | cut -c1-2)" = "$(echo "$c" | cut -c3-4)" ]' - \
	"$(fill '[python stopped: fault]')"

"$REP" diff -f folded $R "$tmp/p.stk" "$tmp/p.stk" > "$tmp/diff" 2>/dev/null
check "diff: Python frames named as the report names them" grep -qF \
	'python3;Py_RunMain;<module> (main.py:1);main (main.py:7);PyObject_Call;Worker.run (worker.py:20);work (worker.py:5);fxpy_cext 10 10' "$tmp/diff"

if "$REP" merge -o "$tmp/m.stk" "$tmp/p.stk" "$tmp/p.stk" 2> "$tmp/merge.err"; then
	"$REP" -f folded $R "$tmp/m.stk" 2>/dev/null | sort > "$tmp/m.folded"
	awk '{ $NF = 2 * $NF; print }' "$tmp/folded.s" | sort > "$tmp/m.want"
	same "merge: ESYM kind 4 carried through, every Python line doubled" "$tmp/m.want" "$tmp/m.folded"
	check "merge: the code objects once (equal chunks de-duplicated)" sh -c \
		'"$1" info "$2" | grep -qx "embedded python code objects: 6"' - "$REP" "$tmp/m.stk"
else
	fail "merge" "$(cat "$tmp/merge.err")"
fi
check "info counts the code objects" sh -c \
	'"$1" info "$2" | grep -qx "embedded python code objects: 6"' - "$REP" "$tmp/p.stk"

# A slice (mkcapture's rows all sit at the capture's start): the rows of
# its intervals are read, the code objects whole.
"$REP" -f folded $R --until 1 "$tmp/p.stk" 2>/dev/null | sort > "$tmp/slice"
same "--until 1: a slice names the Python frames as the whole capture does" "$tmp/folded.s" "$tmp/slice"

# ---- max_stack_depth counts native frames --------------------------------

# deep N: a stack of N native frames (the loop's, then calls) then 129
# Python words (64 frames and a stop), as deep as stkrec records.
deep() {
	printf 'stack %s fx/libfxpy.so:_PyEval_EvalFrameDefault+4' "$1"
	i=1
	while [ $i -lt "$2" ]; do printf ' fx/libfxpy.so:PyObject_Call>_PyEval_EvalFrameDefault'; i=$((i + 1)); done
	i=0
	while [ $i -lt 64 ]; do printf ' py:0x2000:0x222222:-'; i=$((i + 1)); done
	printf ' pystop:1\n'
}
{ grep -E '^(meta|map|pycode) ' "$GOLD/report_python.spec"
  deep 1 127; deep 2 100
  echo 'count 300 300 python3 1 -EFAULT 0 0 1'; echo 'count 300 300 python3 2 -EFAULT 0 0 1'
} > "$tmp/deep.spec"
"$MK" -C "$FX/root" "$tmp/deep.spec" "$tmp/deep.stk" || fail "mkcapture deep"
"$REP" -f svg $R "$tmp/deep.stk" > "$tmp/deep.svg" 2>/dev/null
n=$(grep -c '<g n="\[truncated\]"' "$tmp/deep.svg")
if [ "$n" = 1 ]; then
	pass "svg: 127 native frames and 64 Python ones are [truncated]; 100 and 64 are not"
else
	fail "svg: [truncated] markers: $n, want 1"
fi
"$REP" -f folded $R "$tmp/deep.stk" 2>/dev/null | awk '{ print gsub(/Worker.run/, "") }' | sort -u > "$tmp/deep.n"
check "folded: all 64 Python frames of a deep stack" grep -qx 64 "$tmp/deep.n"

# A forked child (pid 302) runs its parent's code objects at the parent's
# addresses; the recorder read each once, from the process whose stack came
# first: named from pid 300's records.  A fingerprint that matches no
# process's stays unknown.
{ grep -E '^(meta|map|pycode) ' "$GOLD/report_python.spec"
  echo 'map 302 python3 fx/libfxpy.so 0x7f0000000000'
  echo 'stack 7 fx/libfxpy.so:_PyEval_EvalFrameDefault+4 fx/libfxpy.so:Py_RunMain>_PyEval_EvalFrameDefault py:0x3000:0x333333:- py:0x2000:0x222223:0'
  echo 'count 302 302 python3 7 -EFAULT 0 0 5'
} > "$tmp/fork.spec"
"$MK" -C "$FX/root" "$tmp/fork.spec" "$tmp/fork.stk" || fail "mkcapture fork"
"$REP" -f folded $R "$tmp/fork.stk" > "$tmp/fork.folded" 2>/dev/null
check "a forked child's frames named from its parent's code objects" \
	grep -qF 'main (main.py:7)' "$tmp/fork.folded"
check "... but not a fingerprint no process has" grep -qF '[python: unknown code]' "$tmp/fork.folded"

# ---- pprof ----------------------------------------------------------------

if pprof_tools; then
	"$REP" -f pprof -o "$tmp/p.pb.gz" $R "$tmp/p.stk" 2>/dev/null
	gopprof -traces "$tmp/p.pb.gz" > "$tmp/traces" 2>&1
	check "pprof -traces: stack 1 with its Python functions in place" sh -c \
		'tr -s " " < "$1" | grep -A7 "^ [0-9.]*ms fxpy_cext$" | tr "\n" "|" | grep -qF "ms fxpy_cext| work| Worker.run| PyObject_Call| main| <module>| Py_RunMain|"' \
		- "$tmp/traces"
	# Without -symbolize=none, pprof "simplifies" names it takes for mangled
	# ones: <module> must survive it.
	go tool pprof -traces "$tmp/p.pb.gz" 2>/dev/null | grep -c '<module>$' > "$tmp/mod.n"
	check "pprof (default demangling): <module> kept whole" sh -c '[ "$(cat "$1")" -ge 3 ]' - "$tmp/mod.n"
	gopprof -lines -top -nodecount=1000 "$tmp/p.pb.gz" > "$tmp/lines" 2>&1
	check "pprof -lines: work at worker.py:5" grep -qE ' work /srv/app/worker\.py:5$' "$tmp/lines"
	check "pprof -lines: the stop marker is a function" grep -qF '[python stopped: fault]' "$tmp/lines"
	# -list reads the source: worker.py as the capture names it.
	mkdir -p "$tmp/src"
	printf '\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n' > "$tmp/src/worker.py"
	gopprof -list '^work$' -trim_path=/srv/app -source_path="$tmp/src" "$tmp/p.pb.gz" > "$tmp/list" 2>&1
	check "pprof -list work: its samples on line 5, 'total += i * i'" grep -qE \
		'^ +([0-9.]+m?s|\.) +[0-9.]+m?s +5: +total \+= i \* i' "$tmp/list"
else
	skip "pprof views" "needs $PPROF_TOOLS"
fi

finish
