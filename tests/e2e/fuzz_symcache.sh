#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# fuzz_symcache: the reporter's fuzz targets (and their replays, which
# `make check` runs) report with no symbol cache: they neither read nor
# write $XDG_CACHE_HOME/stk/symbols, so one input's cache cannot change
# how the next is symbolized (a crash found must replay alone), and
# concurrent runs share no state with each other or with the user's own
# reports.  The input is a capture of this build's fixtures, so their
# DWARF is read and a cache would be written.
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$O/tests/fuzz_report_replay" "$O/tests/fuzz_diffmerge_replay" \
	"$FX/root/fx/libfxpy.so"

"$MK" -C "$FX/root" "$GOLD/report_python.spec" "$tmp/p.stk" || { fail "mkcapture"; finish; }
# fuzz_report: flags (1 fix the CRCs, 4 --lines), slice, the capture.
{ printf '\005\000'; cat "$tmp/p.stk"; } > "$tmp/report.in"
# fuzz_diffmerge: flags (1 fix the CRCs), the base's length (LE16), base, new.
s=$(wc -c < "$tmp/p.stk")
{ printf "\\001\\$(printf %03o $((s & 255)))\\$(printf %03o $(((s >> 8) & 255)))"
  cat "$tmp/p.stk" "$tmp/p.stk"; } > "$tmp/diffmerge.in"

for t in report diffmerge; do
	rm -rf "$XDG_CACHE_HOME"
	"$O/tests/fuzz_${t}_replay" "$tmp/$t.in" > "$tmp/$t.out" 2>&1 ||
		fail "fuzz_${t}_replay" "$(tail -5 "$tmp/$t.out")"
	check "fuzz_$t: no symbol cache written" test ! -e "$XDG_CACHE_HOME/stk"
done
finish
