#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport --vmlinux: kernel frames of the kernel image from a vmlinux
# whose build-id is the recorded one (names, inline frames, file:line),
# at addresses slid by KASLR.  The stand-in vmlinux and another build of
# it come from mk/kvmlinux.mk; the capture from tests/golden/
# report_kernel.spec (mkcapture), and variants of it made here with sed.
# Golden files: tests/golden/report_kernel*.out and *.err (stderr with
# build-ids as "X" and the fixture directory as "FX/").
#
# STK_GOLDEN_UPDATE=1 rewrites the expected files instead (review the diff!).
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
VM=$FX/kernel/vmlinux
need_files "$MK" "$REP" "$FX/root/fx/fx_pie" "$VM" "$VM.other"

# The capture and its variants (options added to its "kernel" line).
cp "$GOLD/report_kernel.spec" "$tmp/base.spec"
sed 's/^kernel .*/& nobase/' "$GOLD/report_kernel.spec" >"$tmp/nobase.spec"
sed 's/^kernel .*/& nobase noksyms/' "$GOLD/report_kernel.spec" >"$tmp/noslide.spec"
sed 's/^kernel .*/& bid=0x/' "$GOLD/report_kernel.spec" >"$tmp/nobid.spec"
for v in base nobase noslide nobid; do
	if [ $v != base ] && cmp -s "$tmp/$v.spec" "$tmp/base.spec"; then
		fail "no \"kernel\" line in report_kernel.spec to make $v from"
		finish
	fi
	if ! "$MK" -C "$FX/root" "$tmp/$v.spec" "$tmp/$v.stk"; then
		fail "mkcapture $v"
		finish
	fi
done

# run NAME CAPTURE ARGS...: stdout in $tmp/NAME.out, stderr (build-ids and
# directories made neutral) in $tmp/NAME.err, exit status in $rc.
run() {
	name=$1 stk=$2
	shift 2
	(cd "$tmp" && "$REP" "$@" "$stk.stk") >"$tmp/$name.out" 2>"$tmp/$name.err.raw"
	rc=$?
	sed -e 's/build-id [0-9a-f][0-9a-f]*/build-id X/g' -e "s|$tmp/||g" -e "s|$FX/|FX/|g" \
		"$tmp/$name.err.raw" >"$tmp/$name.err"
}

# case_ NAME CAPTURE ARGS...: exit 0, stdout and stderr as the golden files.
case_() {
	name=$1
	run "$@"
	if [ "${STK_GOLDEN_UPDATE:-0}" = 1 ]; then
		cp "$tmp/$name.out" "$GOLD/$name.out"
		cp "$tmp/$name.err" "$GOLD/$name.err"
	fi
	if [ "$rc" != 0 ]; then
		fail "$name" "exit $rc: $(cat "$tmp/$name.err")"
	elif ! cmp -s "$tmp/$name.out" "$GOLD/$name.out"; then
		fail "$name" "stdout differs:"
		diff -u "$GOLD/$name.out" "$tmp/$name.out" | head -40
	elif ! cmp -s "$tmp/$name.err" "$GOLD/$name.err"; then
		fail "$name" "stderr differs:"
		diff -u "$GOLD/$name.err" "$tmp/$name.err" | head -20
	else
		pass "$name"
	fi
}


# Kernel names from the capture (KSYM): no inline frames, no lines.
case_ report_kernel_text base --sysroot "$FX/root"
case_ report_kernel_folded base -f folded --sysroot "$FX/root"
case_ report_kernel_lines_folded base -f folded --lines --sysroot "$FX/root"
# From the vmlinux: rw_verify_area inlined into vfs_read, file:line, and
# make_task_dead named at its return address's pc-1; the module frame and
# the address outside the image keep the capture's answer.
case_ report_kernel_vmlinux_text base --vmlinux "$VM" --sysroot "$FX/root"
case_ report_kernel_vmlinux_folded base -f folded --vmlinux "$VM" --sysroot "$FX/root"
case_ report_kernel_vmlinux_lines_folded base -f folded --lines --vmlinux "$VM" --sysroot "$FX/root"
case_ report_kernel_vmlinux_da_folded base -f folded -d -a --vmlinux "$VM" --sysroot "$FX/root"
case_ report_kernel_vmlinux_noinline_folded base -f folded --no-inline --vmlinux "$VM" --sysroot "$FX/root"
# Another build of the kernel: one line naming both build-ids, KSYM used.
case_ report_kernel_mismatch_folded base -f folded --vmlinux "$VM.other" --sysroot "$FX/root"
# Nothing tells the slide (no KBID base, no KSYM): said, not used.
case_ report_kernel_noslide_folded noslide -f folded --vmlinux "$VM" --sysroot "$FX/root"
# No recorded kernel build-id: nothing to check the file against.
case_ report_kernel_nobid_folded nobid -f folded --vmlinux "$VM" --sysroot "$FX/root"

# A mismatched vmlinux changes nothing: the report is the KSYM one.
if cmp -s "$GOLD/report_kernel_mismatch_folded.out" "$GOLD/report_kernel_folded.out"; then
	pass mismatch_report_is_the_ksym_report
else
	fail mismatch_report_is_the_ksym_report "the outputs differ"
fi

# The mismatch line names the real build-ids: the file's, then the recorded.
want_file=$(readelf -n "$VM.other" | awk '/Build ID:/ { print $3 }')
want_rec=$(readelf -n "$VM" | awk '/Build ID:/ { print $3 }')
if [ -n "$want_file" ] && [ -n "$want_rec" ] &&
   grep -q "build-id $want_file, the recorded kernel's is build-id $want_rec;" \
	"$tmp/report_kernel_mismatch_folded.err.raw"; then
	pass mismatch_line_names_both_build_ids
else
	fail mismatch_line_names_both_build_ids "$(cat "$tmp/report_kernel_mismatch_folded.err.raw")"
fi

# Without a KBID base the slide comes from the KSYM symbols alone: the same
# report as with both.
run nobase nobase -f folded --lines --vmlinux "$VM" --sysroot "$FX/root"
if [ "$rc" = 0 ] && cmp -s "$tmp/nobase.out" "$GOLD/report_kernel_vmlinux_lines_folded.out" &&
   cmp -s "$tmp/nobase.err" "$GOLD/report_kernel_vmlinux_lines_folded.err"; then
	pass slide_from_ksym_alone_gives_the_same_report
else
	fail slide_from_ksym_alone_gives_the_same_report "exit $rc: $(cat "$tmp/nobase.err")"
fi

# A file that cannot be read: one line, exit 1, no report.
for bad in "$tmp/nonexistent" "$GOLD/report_kernel.spec"; do
	run bad base -f folded --vmlinux "$bad" --sysroot "$FX/root"
	if [ "$rc" = 1 ] && [ ! -s "$tmp/bad.out" ] && [ "$(wc -l <"$tmp/bad.err")" = 1 ] &&
	   grep -q '^stkreport: --vmlinux ' "$tmp/bad.err"; then
		pass "unreadable_vmlinux_${bad##*/}_fails_in_one_line"
	else
		fail "unreadable_vmlinux_${bad##*/}_fails_in_one_line" "exit $rc: $(cat "$tmp/bad.err")"
	fi
done

# pprof: the kernel image's location holds the inline frame and the
# function it was inlined into, and its mapping says inline frames are known.
. "$top/tests/e2e/lib/pprof.sh"
if pprof_tools; then
	run pp base -f pprof -o "$tmp/k.pb.gz" --vmlinux "$VM" --sysroot "$FX/root"
	gopprof -raw "$tmp/k.pb.gz" >"$tmp/k.raw" 2>"$tmp/pp.err"
	if [ "$rc" = 0 ] && awk '
		/ rw_verify_area .*fx_vmlinux\.c:27 / { getline; if ($1 == "vfs_read" && $2 ~ /fx_vmlinux\.c:32$/) inl = 1 }
		/ \[kernel\.kallsyms\] [0-9a-f]+ \[FN\]\[FL\]\[LN\]\[IN\]$/ { in_flag = 1 }
		END { exit !(inl && in_flag) }' "$tmp/k.raw"; then
		pass pprof_kernel_locations_have_inline_lines
	else
		fail pprof_kernel_locations_have_inline_lines "$(cat "$tmp/pp.err" "$tmp/k.raw")"
	fi
else
	skip pprof_kernel_locations_have_inline_lines "needs $PPROF_TOOLS"
fi

finish
