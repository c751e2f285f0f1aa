#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_escape: no string from a capture reaches a terminal unescaped.
# mkcapture writes captures whose comms, kernel symbol and module names,
# mapping path, META and STAT hold ESC sequences, a C1 control, newlines
# and a backslash; every text output of stkreport (text, folded, with
# --addresses, offwake, info, info --chunks, info --symbols) and its
# stderr must hold only printable ASCII and newlines, and show the bytes
# as stk_escape.h says (\x1b, \x0a, \x9b, \\).  No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie"

# clean NAME FILE: FILE holds only printable ASCII and newlines.
clean() {
	bad=$(LC_ALL=C tr -d '\n -~' <"$2" | wc -c)
	if [ "$bad" -eq 0 ]; then pass "$1: no control or non-ASCII byte"; else
		fail "$1: $bad raw control or non-ASCII bytes: $(od -c "$2" | head -5)"; fi
}
# has NAME FILE TEXT: FILE contains TEXT (fixed string).
has() {
	if grep -qF -- "$3" "$2"; then pass "$1: shows $3"; else
		fail "$1: no '$3' in: $(od -c "$2" | head -8)"; fi
}
# lines NAME FILE N: FILE has N lines.
lines() {
	n=$(wc -l <"$2")
	if [ "$n" -eq "$3" ]; then pass "$1: $3 line(s)"; else fail "$1: $n lines, expected $3: $(cat "$2")"; fi
}

cat >"$tmp/profile.spec" <<'SPEC'
meta mode profile
meta cmdline evil\x1b[2J\x0aline2
meta k\x1b]0;t\x07 v
stat lost\x1b[2J 5
kobj [kernel.kallsyms] 0xffffffff81000000 0x1000000
kobj mod\x1b[31m 0xffffffffc0000000 0x10000
ksym 0xffffffff81003000 0x100 T k\x1b[2Jsym
ksym 0xffffffff81004000 0x100 T back\\slash
ksym 0xffffffffc0001000 0x100 t modfn\x9b mod\x1b[31m
map 100 evil\x1b[2J fx/fx_pie 0x555555554000 as=/no/such\x0a\x1bdir/fx\x0a\x1bpie
stack 1 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf
stack 100 0xffffffffc0001010 0xffffffffc0008000 0xffffffff81003010 0xffffffff81004010
count 100 100 evil\x1b[2J 1 100 0 0 7
SPEC
cat >"$tmp/offwake.spec" <<'SPEC'
meta mode offwake
kobj [kernel.kallsyms] 0xffffffff81000000 0x1000000
ksym 0xffffffff81006000 0x100 T sch\x1bedule
map 700 tgt\x1b[2J fx/fx_pie 0x555555554000
stack 1 fx/fx_pie:fx_leaf+1
stack 100 0xffffffff81006010
offc 700 700 tgt\x1b[2J 1 100 701 702 wk\x1b[2J 1 100 3 2500000
SPEC
for s in profile offwake; do
	"$MK" -C "$FX/root" "$tmp/$s.spec" "$tmp/$s.stk" || { fail "mkcapture $s"; finish; }
done

run() {
	name=$1
	shift
	"$REP" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	[ $rc -le 1 ] || fail "$name: exit $rc: $(cat "$tmp/$name.err")"
	clean "$name stdout" "$tmp/$name.out"
	clean "$name stderr" "$tmp/$name.err"
}

run text "$tmp/profile.stk"
has text "$tmp/text.out" '    -                evil\x1b[2J (100)'
has text "$tmp/text.out" '    k\x1b[2Jsym'
has text "$tmp/text.out" '    back\\slash'
has text "$tmp/text.out" '    modfn\x9b'
# The summary names the mapping path: one line, newline and ESC escaped
# (in frame names a newline is a space, as it always was).
has text "$tmp/text.err" 'no symbols for: /no/such\x0a\x1bdir/fx\x0a\x1bpie (build-id'
lines text_summary "$tmp/text.err" 1

run folded -f folded "$tmp/profile.stk"
has folded "$tmp/folded.out" 'evil\x1b[2J;[unknown];[unknown];back\\slash;k\x1b[2Jsym;[unknown];modfn\x9b [mod\x1b[31m] 7'
lines folded "$tmp/folded.out" 1

run addresses --addresses "$tmp/profile.stk"
has addresses "$tmp/addresses.out" 'ffffffffc0008000 [mod\x1b[31m+0x8000]'
has addresses "$tmp/addresses.out" '[fx \x1bpie+0x'
run addresses_folded -f folded --addresses "$tmp/profile.stk"
has addresses_folded "$tmp/addresses_folded.out" '[mod\x1b[31m+0x8000]'

run offwake_text "$tmp/offwake.stk"
has offwake_text "$tmp/offwake_text.out" 'waker:           wk\x1b[2J 702'
has offwake_text "$tmp/offwake_text.out" 'target:          tgt\x1b[2J 700'
has offwake_text "$tmp/offwake_text.out" '    sch\x1bedule'
run offwake_folded -f folded "$tmp/offwake.stk"
has offwake_folded "$tmp/offwake_folded.out" 'tgt\x1b[2J;'
has offwake_folded "$tmp/offwake_folded.out" ';wk\x1b[2J 2500'

run info info --chunks --symbols "$tmp/profile.stk"
has info "$tmp/info.out" 'meta cmdline: evil\x1b[2J\x0aline2'
has info "$tmp/info.out" 'meta k\x1b]0;t\x07: v'
has info "$tmp/info.out" 'stat lost\x1b[2J: 5'
has info "$tmp/info.out" 'module: /no/such\x0a\x1bdir/fx\x0a\x1bpie'

# A reader message that quotes the file (a damaged capture) is escaped too.
cp "$tmp/profile.stk" "$tmp/damaged.stk"
printf '\033' | dd of="$tmp/damaged.stk" bs=1 seek=100 conv=notrunc 2>/dev/null
run damaged_info info "$tmp/damaged.stk"
run damaged_report "$tmp/damaged.stk"

finish
