#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Golden tests of stkreport: captures written by mkcapture from
# tests/golden/*.spec (addresses taken from the ELF fixtures built by
# mk/report.mk), reported with various options, compared byte for byte
# with tests/golden/report_*.out (stdout) and, where present, *.err (stderr,
# with build-ids replaced by "X": they depend on the build directory).
#
# STK_GOLDEN_UPDATE=1 rewrites the expected files instead (review the diff!).
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie"

capture() {
	[ -f "$tmp/$1.stk" ] && return 0
	"$MK" -C "$FX/root" "$GOLD/$1.spec" "$tmp/$1.stk" || { fail "mkcapture $1"; finish; }
}

# case NAME SPEC EXPECTED_EXIT ARGS...: compare stdout (and stderr if a
# .err file exists) with the golden files.
case_() {
	name=$1 spec=$2 want_rc=$3
	shift 3
	capture "$spec"
	(cd "$tmp" && "$REP" "$@" "$spec.stk") >"$tmp/$name.out" 2>"$tmp/$name.err.raw"
	rc=$?
	sed -e 's/build-id [0-9a-f][0-9a-f]*/build-id X/g' -e "s|$tmp/||g" -e "s|$FX/|FX/|g" "$tmp/$name.err.raw" >"$tmp/$name.err"
	if [ "${STK_GOLDEN_UPDATE:-0}" = 1 ]; then
		cp "$tmp/$name.out" "$GOLD/$name.out"
		[ -s "$tmp/$name.err" ] && cp "$tmp/$name.err" "$GOLD/$name.err"
	fi
	if [ "$rc" != "$want_rc" ]; then
		fail "$name" "exit $rc, expected $want_rc: $(cat "$tmp/$name.err")"
		return
	fi
	if ! cmp -s "$tmp/$name.out" "$GOLD/$name.out"; then
		fail "$name" "stdout differs:"
		diff -u "$GOLD/$name.out" "$tmp/$name.out" | head -40
		return
	fi
	if [ -f "$GOLD/$name.err" ] && ! cmp -s "$tmp/$name.err" "$GOLD/$name.err"; then
		fail "$name" "stderr differs:"
		diff -u "$GOLD/$name.err" "$tmp/$name.err" | head -20
		return
	fi
	pass "$name"
}

R="--sysroot $FX/root"
D="--debug-dir $FX/debug"

case_ report_basic_text report_basic 0 $R $D
case_ report_basic_folded report_basic 0 -f folded $R $D
case_ report_basic_da_text report_basic 0 -d -a $R $D
case_ report_basic_da_folded report_basic 0 -f folded -d -a $R $D
case_ report_basic_addresses_text report_basic 0 --addresses $R
case_ report_basic_addresses_folded report_basic 0 -f folded --addresses $R
case_ report_basic_lines_folded report_basic 0 -f folded --lines $R $D
case_ report_basic_noinline_folded report_basic 0 -f folded --no-inline $R $D
case_ report_basic_nodemangle_folded report_basic 0 -f folded --no-demangle --comm fx_cpp $R
case_ report_basic_shortnames_folded report_basic 0 -f folded --short-names --comm fx_cpp $R
case_ report_basic_U_folded report_basic 0 -f folded -U $R $D
case_ report_basic_K_folded report_basic 0 -f folded -K $R $D
case_ report_basic_pid_folded report_basic 0 -f folded --pid 200,300 $R $D
case_ report_basic_tid_folded report_basic 0 -f folded --tid 101 $R $D
case_ report_basic_S1_folded report_basic 0 -f folded -K -S 1 $R $D
case_ report_rebuilt_folded report_rebuilt 0 -f folded $R
case_ report_rebuilt_debugdir_folded report_rebuilt 0 -f folded $R --debug-dir "$FX/bid"
case_ report_nothing_found_folded report_rebuilt 0 -f folded
case_ report_offwake_text report_offwake 0 $R
case_ report_offwake_folded report_offwake 0 -f folded $R
case_ report_offwake_d_folded report_offwake 0 -f folded -d $R
case_ report_offwake_d_text report_offwake 0 -d $R
# Six modules without symbols: the closing line names the three with the
# most samples and counts the rest.
case_ report_manymods_folded report_manymods 0 -f folded
# A filter that keeps nothing: exit 1, one line naming what the capture holds.
case_ report_nomatch_pid_folded report_basic 1 -f folded --pid 999 $R
case_ report_nomatch_comm_text report_basic 1 --comm nosuch --tid 5 $R
case_ report_nomatch_tid_offwake report_offwake 1 --tid 5 $R
case_ report_nomatch_many_folded report_manypids 1 -f folded --comm nosuch

# -o writes the file, nothing on stdout.
capture report_basic
if (cd "$tmp" && "$REP" -f folded $R $D -o out.folded report_basic.stk) >"$tmp/o.out" 2>/dev/null &&
   [ ! -s "$tmp/o.out" ] && cmp -s "$tmp/out.folded" "$GOLD/report_basic_folded.out"; then
	pass output_file
else
	fail output_file "-o did not write the same report"
fi

# A recording killed before closing: reported, warned, exit 0.
sed 's/^meta mode profile/noclose\nmeta mode profile/' "$GOLD/report_rebuilt.spec" >"$tmp/killed.spec"
"$MK" -C "$FX/root" "$tmp/killed.spec" "$tmp/killed.stk" || { fail "mkcapture killed"; finish; }
if (cd "$tmp" && "$REP" -f folded $R --debug-dir "$FX/bid" killed.stk) >"$tmp/k.out" 2>"$tmp/k.err" &&
   grep -q "not closed cleanly" "$tmp/k.err" &&
   cmp -s "$tmp/k.out" "$GOLD/report_rebuilt_debugdir_folded.out"; then
	pass killed_recording
else
	fail killed_recording "expected the full report, a warning and exit 0: $(cat "$tmp/k.err")"
fi

# Damage in the middle (a flipped byte in the first chunk's payload): what
# can be recovered is reported, one warning, exit 1.
cp "$tmp/report_basic.stk" "$tmp/damaged.stk"
printf '\377' | dd of="$tmp/damaged.stk" bs=1 seek=200 conv=notrunc 2>/dev/null
(cd "$tmp" && "$REP" -f folded $R $D damaged.stk) >"$tmp/d.out" 2>"$tmp/d.err"
rc=$?
if [ $rc = 1 ] && grep -q "damaged" "$tmp/d.err" && [ "$(grep -c . "$tmp/d.err")" -le 3 ]; then
	pass damaged_capture
else
	fail damaged_capture "expected exit 1 with a 'damaged' line, got $rc: $(cat "$tmp/d.err")"
fi

# info --symbols: per module, where the symbols came from or why none.
"$REP" info --symbols $R "$tmp/report_basic.stk" >"$tmp/i1.out" 2>&1
"$REP" info --symbols $R $D "$tmp/report_basic.stk" >"$tmp/i2.out" 2>&1
if sed -n '/^module: \/fx\/fx_stripped/,/^module/p' "$tmp/i1.out" | grep -q 'symbols: stripped, no debuginfo' &&
   sed -n '/^module: \/fx\/fx_stripped/,/^module/p' "$tmp/i2.out" | grep -q "debuginfo: $FX/debug/.build-id/" &&
   sed -n '/^module: \/fx\/fx_pie$/,/^module/p' "$tmp/i1.out" | grep -q '  samples: 136' &&
   grep -q '^module: \[vdso\]' "$tmp/i1.out"; then
	pass info_symbols
else
	fail info_symbols "unexpected: $(cat "$tmp/i1.out" "$tmp/i2.out")"
fi

# Usage errors exit 2 with one line.
for args in "-f nosuch x.stk" "-U -K x.stk" "" "--pid abc x.stk" "-S -1 x.stk"; do
	# shellcheck disable=SC2086
	"$REP" $args >/dev/null 2>"$tmp/u.err"
	rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$tmp/u.err")" = 1 ] && grep -q '^stkreport: ' "$tmp/u.err"; then
		pass "usage '$args'"
	else
		fail "usage '$args'" "exit $rc: $(cat "$tmp/u.err")"
	fi
done

# A missing file: one line, exit 1.
"$REP" "$tmp/nonexistent.stk" >/dev/null 2>"$tmp/m.err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$tmp/m.err")" = 1 ]; then
	pass missing_file
else
	fail missing_file "exit $rc: $(cat "$tmp/m.err")"
fi

finish
