#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# offcpu_golden: stkreport on off-CPU captures made by mkcapture from
# tests/golden/offcpu_*.spec, compared byte for byte with
# tests/golden/offcpu_*.out:
#  - offcputime's layouts: thread id in text, [Missed User Stack] /
#    [Missed Kernel Stack] markers (none for "no stack in this context"),
#    values in microseconds, -d;
#  - the tracepoint and BPF frames leading off-CPU kernel stacks are
#    dropped (target from __schedule, waker from try_to_wake_up), unless
#    -S N says how many to skip.
# STK_GOLDEN_UPDATE=1 rewrites the expected files (review the diff!).
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie"

# case NAME SPEC ARGS...: stkreport ARGS on SPEC's capture exits 0 and
# prints exactly tests/golden/NAME.out.
case_() {
	name=$1 spec=$2
	shift 2
	[ -f "$tmp/$spec.stk" ] || "$MK" -C "$FX/root" "$GOLD/$spec.spec" "$tmp/$spec.stk" || {
		fail "mkcapture $spec"
		finish
	}
	(cd "$tmp" && "$REP" "$@" "$spec.stk") > "$tmp/$name.out" 2> "$tmp/$name.err"
	rc=$?
	[ "${STK_GOLDEN_UPDATE:-0}" = 1 ] && cp "$tmp/$name.out" "$GOLD/$name.out"
	if [ "$rc" -ne 0 ]; then
		fail "$name" "exit $rc: $(cat "$tmp/$name.err")"
	elif ! cmp -s "$tmp/$name.out" "$GOLD/$name.out"; then
		fail "$name" "stdout differs:"
		diff -u "$GOLD/$name.out" "$tmp/$name.out" | head -40
	else
		pass "$name"
	fi
}

R="--sysroot $FX/root"
case_ offcpu_offcpu_text offcpu_offcpu $R
case_ offcpu_offcpu_folded offcpu_offcpu -f folded $R
case_ offcpu_offcpu_d_text offcpu_offcpu -d $R
case_ offcpu_offcpu_d_folded offcpu_offcpu -f folded -d $R
case_ offcpu_offcpu_S1_folded offcpu_offcpu -f folded -K -S 1 $R
case_ offcpu_offwake_text offcpu_offwake $R
case_ offcpu_offwake_folded offcpu_offwake -f folded $R

finish
