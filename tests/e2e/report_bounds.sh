#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_bounds: stkreport stays within SPEC.md §7.3's memory bound,
# 256 MiB + 128 x the capture's size, on inputs made to cost far more
# (tests/tools/mkbounds.c), run under that bound as a hard address-space
# limit (prlimit --as):
#  - a fixture with a zlib SHF_COMPRESSED .debug_ranges declaring (and
#    inflating to) 1 GiB, found on disk at its recorded path, and embedded
#    in the capture as an image; and with three such sections: one
#    warning line, exit status 1, the samples still named from .symtab;
#  - the symbol table's strings a 1 GiB SHF_COMPRESSED section, in the
#    binary and in a separate debuginfo file found by build-id; and a
#    .gnu_debugdata (xz) inflating to 1 GiB in a binary without .symtab:
#    libdwfl would inflate them as it loads the module, so the symbol table
#    is not read: frames unknown, one warning line, exit status 1;
#  - 100 rows sharing one 1024-frame kernel stack whose name is 4096
#    control bytes: folded, text, svg and diff folded are written whole,
#    names cut and marked, exit status 0; and -f top, --callers/--callees
#    and diff -f top, whose names are cut the same way.
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
MB=$O/tests/tools/mkbounds
need_files "$MB" "$REP" "$FX/root/fx/fx_pie" "$FX/root/fx/fx_stripped" "$FX/syms/fx_stripped"
need_cmds prlimit

# bound FILE...: 256 MiB + 128 x the files' sizes, in bytes.
bound() {
	echo $(( (256 << 20) + 128 * $(cat "$@" | wc -c) ))
}

# run NAME BOUND RC OUT ARGS...: stkreport ARGS under BOUND, exit RC.
run() {
	n=$1 b=$2 want=$3 out=$4
	shift 4
	prlimit --as="$b" -- "$REP" "$@" >"$out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$n: exit $want under --as=$b"; else
		fail "$n: exit $rc, expected $want under --as=$b: $(head -c 600 "$tmp/err")"; fi
}

"$MB" zelf "$FX/root/fx/fx_pie" "$tmp/z1" 1 && "$MB" zelf "$FX/root/fx/fx_pie" "$tmp/z3" 3 &&
	"$MB" capture "$tmp/disk.stk" "$tmp/z1" "$tmp/z1" &&
	"$MB" capture "$tmp/disk3.stk" "$tmp/z3" "$tmp/z3" &&
	"$MB" capture "$tmp/emb.stk" "$tmp/z3" /gone/z3 embed &&
	"$MB" kstack "$tmp/k.stk" 100 || { fail "mkbounds"; finish; }

for c in disk disk3 emb; do
	run "$c" "$(bound "$tmp/$c.stk")" 1 "$tmp/$c.out" -f folded "$tmp/$c.stk"
	w=$(grep -c 'compressed sections declare .* over the limit' "$tmp/err")
	check "$c: one warning line" test "$w" -eq 1
	check "$c: main named from the symbol table" grep -q '^zbomb;main;main 10$' "$tmp/$c.out"
	# --lines would load the line table: still refused, still named.
	run "$c --lines" "$(bound "$tmp/$c.stk")" 1 "$tmp/$c.l.out" --lines "$tmp/$c.stk"
	check "$c --lines: main named" grep -q '^    main$' "$tmp/$c.l.out"
done

# The symbol table itself: zs in the binary, dbg in its debuginfo (by
# build-id under --debug-dir), xz in MiniDebugInfo.
dbg=$(find "$FX/debug/.build-id" -name '*.debug' | head -1)
id=${dbg#"$FX/debug/"}
mkdir -p "$tmp/dbg/${id%/*}"
"$MB" zsym "$FX/root/fx/fx_pie" "$tmp/zs" && "$MB" capture "$tmp/zs.stk" "$FX/root/fx/fx_pie" "$tmp/zs" &&
	"$MB" zsym "$dbg" "$tmp/dbg/$id" &&
	"$MB" capture "$tmp/dbg.stk" "$FX/syms/fx_stripped" "$FX/root/fx/fx_stripped" &&
	"$MB" xzelf "$FX/root/fx/fx_stripped" "$tmp/xz" &&
	"$MB" capture "$tmp/xz.stk" "$FX/syms/fx_stripped" "$tmp/xz" || { fail "mkbounds symtab"; finish; }
for c in zs dbg xz; do
	run "$c" "$(bound "$tmp/$c.stk")" 1 "$tmp/$c.out" -f folded --debug-dir "$tmp/dbg" "$tmp/$c.stk"
	w=$(grep -c 'compressed sections declare .* over the limit .*: its symbol table not read' "$tmp/err")
	check "$c: one warning line" test "$w" -eq 1
	check "$c: frames unknown" grep -q '^zbomb;\[unknown\];\[unknown\] 10$' "$tmp/$c.out"
done

b=$(bound "$tmp/k.stk")
for f in folded text svg; do
	run "k $f" "$b" 0 /dev/null -f "$f" -o "$tmp/k.$f" "$tmp/k.stk"
done
check "k folded: 100 lines" test "$(wc -l <"$tmp/k.folded")" -eq 100
check "k folded: names cut and marked" grep -qF '[...];' "$tmp/k.folded"
check "k text: 100 stacks" test "$(grep -c '^    -  *w[0-9]* (' "$tmp/k.text")" -eq 100
check "k svg: written" grep -q '</svg>' "$tmp/k.svg"
run "k diff" "$(( b + 128 * $(wc -c <"$tmp/k.stk") ))" 0 "$tmp/k.diff" diff -f folded "$tmp/k.stk" "$tmp/k.stk"
check "k diff: 100 rows" test "$(wc -l <"$tmp/k.diff")" -eq 100

# -f top, the callers/callees trees and diff -f top cut names as the other
# outputs do (4096 bytes, ending in [...]), between escapes, never inside
# one; a tree line adds its indent (2 a level, 1024 levels) to that.
name=$(awk 'BEGIN { for (i = 0; i < 4096; i++) printf "%c", 1 + i % 31 }')
run "k top" "$b" 0 "$tmp/k.top" -f top "$tmp/k.stk"
run "k callers" "$b" 0 "$tmp/k.callers" --callers "$name" "$tmp/k.stk"
run "k callees" "$b" 0 "$tmp/k.callees" --callees "$name" "$tmp/k.stk"
run "k diff top" "$(( b + 128 * $(wc -c <"$tmp/k.stk") ))" 0 "$tmp/k.dtop" diff -f top "$tmp/k.stk" "$tmp/k.stk"
# longest FILE: its longest line's length.
longest() {
	awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$1"
}
# cut_whole FILE: names cut and marked, no escape cut in two ("\x1[...]").
cut_whole() {
	grep -qF '[...]' "$1" && ! grep -qE '\\x[0-9a-f]?\[\.\.\.\]' "$1"
}
for v in top:4300 callers:6400 callees:6400 dtop:4300; do
	f=${v%:*} max=${v#*:}
	n=$(longest "$tmp/k.$f")
	check "k $f: lines of at most $max bytes ($n)" test "$n" -le "$max"
	check "k $f: names cut and marked between escapes" cut_whole "$tmp/k.$f"
done

finish
