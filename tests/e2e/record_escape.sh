#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_escape: a traced process chooses its comm and the paths it maps;
# neither may reach a terminal raw.  cpuwork is copied to a file named
# "evil<ESC>[2J" in a directory whose name holds a newline and an ESC,
# and recorded: stkrec's stderr and every text output of stkreport (text,
# folded, info, info --symbols, the stderr summary naming the then missing
# file) hold only printable ASCII and newlines, show the bytes as \x1b and
# \x0a, and the summary stays one line; also when the path comes from
# /proc/PID/maps (--no-mmap-events), where the kernel writes the newline
# as \012.  The copy does a fixed amount of
# work (-n 500, about half a CPU second), recorded as CMD from its first
# instruction: its samples do not depend on the machine's load.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

esc=$(printf '\033')
nl='
'
dir="$tmp/d${nl}ir${esc}[2J"
bin="$dir/evil${esc}[2J"
shown_dir="$tmp/d\\x0air\\x1b[2J"
mkdir -p "$dir" && cp "$CW" "$bin" || { fail "copy cpuwork to $bin"; finish; }

# clean NAME FILE: FILE holds only printable ASCII and newlines.
clean() {
	bad=$(LC_ALL=C tr -d '\n -~' <"$2" | wc -c)
	check "$1: no raw control or non-ASCII byte ($bad)" [ "$bad" -eq 0 ]
}
# has NAME FILE TEXT: FILE contains TEXT (fixed string).
has() {
	if grep -qF -- "$3" "$2"; then
		pass "$1: shows $3"
	else
		fail "$1: shows $3" "got: $(head -c 400 "$2" | LC_ALL=C tr -c '\n -~' '?')"
	fi
}

# --embed-symbols=none: the summary below must name the path of a binary
# gone at report time, which embedded symbols would otherwise still name.
"$REC" -F 199 --embed-symbols=none -o "$tmp/e${esc}[2J.stk" -- "$bin" -n 500 2>"$tmp/rec.err"
rc=$?
check "stkrec -- $shown_dir/evil\\x1b[2J -n 500: exit 0 ($rc)" [ "$rc" -eq 0 ]
mv "$tmp/e${esc}[2J.stk" "$tmp/e.stk"
clean "stkrec stderr" "$tmp/rec.err"
has "stkrec summary" "$tmp/rec.err" "stkrec: wrote $tmp/e\\x1b[2J.stk: "
check "stkrec summary: one line" [ "$(wc -l <"$tmp/rec.err")" -eq 1 ]
"$REC" -q -o "$tmp/nf.stk" -- "$dir/no${nl}such${esc}[2J" 2>"$tmp/nf.err"
clean "stkrec command not found" "$tmp/nf.err"
has "stkrec command not found" "$tmp/nf.err" "stkrec: $shown_dir/no\\x0asuch\\x1b[2J: command not found"

"$REP" "$tmp/e.stk" >"$tmp/text.out" 2>"$tmp/text.err"
clean "text" "$tmp/text.out"
clean "text stderr" "$tmp/text.err"
has "text comm" "$tmp/text.out" '    -                evil\x1b[2J ('
has "text frames symbolized from the odd path" "$tmp/text.out" '    leaf_a'

"$REP" -f folded "$tmp/e.stk" >"$tmp/folded.out" 2>"$tmp/folded.err"
clean "folded" "$tmp/folded.out"
clean "folded stderr" "$tmp/folded.err"
has "folded comm" "$tmp/folded.out" 'evil\x1b[2J;'

"$REP" info --symbols "$tmp/e.stk" >"$tmp/info.out" 2>"$tmp/info.err"
clean "info" "$tmp/info.out"
clean "info stderr" "$tmp/info.err"
has "info --symbols module" "$tmp/info.out" "module: $shown_dir/evil\\x1b[2J"
has "info META command line" "$tmp/info.out" "$shown_dir/evil\\x1b[2J -n 500"

# The same from /proc/PID/maps (--no-mmap-events; also stkrec's fallback
# when the side-band loses records on a busy machine): the kernel writes
# the newline there as \012, and the path must still be the file's own.
"$REC" -q -F 199 --no-mmap-events --embed-symbols=none -o "$tmp/nm.stk" -- "$bin" -n 500 \
	2>"$tmp/nm.err"
rc=$?
check "--no-mmap-events: exit 0 ($rc: $(LC_ALL=C tr -c '\n -~' '?' <"$tmp/nm.err"))" [ "$rc" -eq 0 ]
"$REP" info --symbols "$tmp/nm.stk" >"$tmp/nm.info" 2>&1
has "--no-mmap-events: info --symbols module" "$tmp/nm.info" "module: $shown_dir/evil\\x1b[2J"
"$REP" "$tmp/nm.stk" >"$tmp/nm.text" 2>&1
has "--no-mmap-events: frames symbolized from the path /proc/PID/maps gave" "$tmp/nm.text" '    leaf_a'

# The binary gone: the summary names the path, still on one line.
rm -f "$bin"
"$REP" "$tmp/e.stk" >"$tmp/gone.out" 2>"$tmp/gone.err"
clean "missing file: text" "$tmp/gone.out"
clean "missing file: stderr" "$tmp/gone.err"
# Other modules may come first in the list (ld.so's unnamed addresses when
# the loader was sampled), so the path is looked for anywhere in it.
has "missing file: summary lists modules" "$tmp/gone.err" "; no symbols for: "
has "missing file: summary names it" "$tmp/gone.err" "$shown_dir/evil\\x1b[2J (build-id"
check "missing file: summary is one line" [ "$(wc -l <"$tmp/gone.err")" -eq 1 ]
finish
