#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The README's examples work as written: every indented code block of
# README.md runs here, in a directory where the captures it names
# (trace.stk, main.stk, branch.stk...) are copies of samples/*.stk and
# stkreport is build/'s, and must exit 0.  A block that cannot run here
# (it needs root and BPF, a browser, a server, minutes) is marked by the
# line
#     <!-- docs-test: skip: WHY -->
# before it (blank lines between allowed); a mark without a reason fails.
# No BPF needed; a few seconds.

. "$(dirname "$0")/lib/harness.sh"
need_files "$REP" "$top/samples/profile.stk" "$top/samples/offwake.stk"
cd "$top" || exit 1

# Split README.md into $tmp/blocks/N (N = the block's first line number),
# each a block's lines with the 4 spaces of indent removed; a block marked
# skip gets "#docs-test-skip WHY" as its first line.
mkdir "$tmp/blocks" "$tmp/work"
awk -v dir="$tmp/blocks" '
	/^<!-- docs-test: skip/ {
		why = $0; sub(/^<!-- docs-test: skip:? */, "", why); sub(/ *-->.*$/, "", why)
		mark = "#docs-test-skip " why; next
	}
	/^    / && (prev == "" || inblock) {
		if (!inblock) { f = dir "/" NR; inblock = 1; if (mark != "") print mark > f; mark = "" }
		line = $0; sub(/^    /, "", line); print line > f; prev = $0; next
	}
	{ if (inblock) close(f); inblock = 0; if ($0 != "" && $0 !~ /^<!--/) mark = ""; prev = $0 }
' README.md

for c in trace out prod main branch; do
	cp samples/profile.stk "$tmp/work/$c.stk"
done
cp samples/offwake.stk "$tmp/work/app.stk"

ran=0
marked=0
for b in $(ls "$tmp/blocks" | sort -n); do
	f=$tmp/blocks/$b
	first=$(head -1 "$f")
	case $first in
	'#docs-test-skip '?*)
		marked=$((marked + 1))
		continue ;;
	'#docs-test-skip'*)
		fail "README.md line $b: a docs-test skip mark without a reason"
		continue ;;
	esac
	if (cd "$tmp/work" && PATH="$O:$PATH" sh -e "$f") > "$tmp/out" 2> "$tmp/err"; then
		ran=$((ran + 1))
		pass "README.md line $b: $(head -1 "$f" | cut -c1-60)... exits 0"
	else
		fail "README.md line $b: $(head -1 "$f")" "$(tail -3 "$tmp/err")"
	fi
done
if [ "$ran" -ge 4 ]; then
	pass "README.md: $ran blocks run, $marked marked as not runnable here"
else
	fail "README.md: only $ran blocks run ($marked skipped): parsing broke?"
fi

finish
