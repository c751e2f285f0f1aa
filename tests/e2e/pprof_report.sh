#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport -f pprof on fixture captures (no BPF): mkcapture writes them
# from tests/golden/pprof_report*.spec with addresses of the ELF fixtures;
# the profiles are read back by protoc (golden decoded text) and go tool
# pprof (golden -raw view, -top shares equal to the folded report's,
# -traces for offwake's "--" frame), and checked for what issue 6 asks:
# sample and period types, times, one mapping per (process, file) with
# build-ids and truthful has_* flags, inline lines, labels.
#
# STK_GOLDEN_UPDATE=1 rewrites tests/golden/pprof_report_* from this run
# instead of comparing (review the diff before committing it).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/pprof.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie" "$FX/debug"
need_pprof_tools

SYMS="--sysroot $FX/root --debug-dir $FX/debug"
for spec in pprof_report pprof_report_offwake; do
	if ! "$MK" -C "$FX/root" "$GOLD/$spec.spec" "$tmp/$spec.stk"; then
		fail "mkcapture $spec"
		finish
	fi
done
# offcpu: the offwake capture read as plain off-CPU (the mode says so).
sed 's/^meta mode offwake/meta mode offcpu/' "$GOLD/pprof_report_offwake.spec" >"$tmp/offcpu.spec"
"$MK" -C "$FX/root" "$tmp/offcpu.spec" "$tmp/offcpu.stk" || { fail "mkcapture offcpu"; finish; }

# report FORMAT CAPTURE OUT [ARGS]: stkreport with the fixture symbols.
report() {
	fmt=$1 cap=$2 out=$3
	shift 3
	# shellcheck disable=SC2086
	"$REP" -f "$fmt" $SYMS "$@" -o "$out" "$tmp/$cap.stk" 2>"$tmp/rep.err"
}

# ---- the profile capture ---------------------------------------------------
P=$tmp/p.pb.gz
if report pprof pprof_report "$P" >"$tmp/stdout" && [ ! -s "$tmp/stdout" ] && gzip -t "$P"; then
	pass "o_file_gets_a_gzip_stream_and_stdout_nothing"
else
	fail "o_file_gets_a_gzip_stream_and_stdout_nothing" "$(cat "$tmp/rep.err")"
	finish
fi

# To a pipe (or file) without -o: the same bytes, so the output is
# deterministic too (ids in first-use order, gzip without a time stamp).
# shellcheck disable=SC2086
if "$REP" -f pprof $SYMS "$tmp/pprof_report.stk" 2>/dev/null | cat >"$tmp/piped.pb.gz" &&
   cmp -s "$P" "$tmp/piped.pb.gz"; then
	pass "stdout_pipe_gets_the_same_bytes"
else
	fail "stdout_pipe_gets_the_same_bytes"
fi

# A terminal gets no binary data: usage error, one line with the hint.
if command -v script >/dev/null; then
	script -qec "$REP -f pprof $tmp/pprof_report.stk" /dev/null >"$tmp/tty.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && [ "$(grep -c . "$tmp/tty.out")" = 1 ] &&
	   grep -q '^stkreport: .*terminal.*-o FILE' "$tmp/tty.out"; then
		pass "terminal_without_o_is_refused_with_a_hint"
	else
		fail "terminal_without_o_is_refused_with_a_hint" "exit $rc: $(cat "$tmp/tty.out")"
	fi
else
	skip "terminal_without_o_is_refused_with_a_hint" "script(1) missing (bsdutils)"
fi

# A full disk: one line with the reason, exit 1.
if [ -w /dev/full ]; then
	# shellcheck disable=SC2086
	"$REP" -f pprof $SYMS -o /dev/full "$tmp/pprof_report.stk" >/dev/null 2>"$tmp/full.err"
	rc=$?
	if [ $rc = 1 ] && [ "$(cat "$tmp/full.err")" = "stkreport: writing /dev/full: No space left on device" ]; then
		pass "write_error_is_one_line_with_its_reason_and_exit_1"
	else
		fail "write_error_is_one_line_with_its_reason_and_exit_1" "exit $rc: $(cat "$tmp/full.err")"
	fi
else
	skip "write_error_is_one_line_with_its_reason_and_exit_1" "no writable /dev/full"
fi

if decode "$P" >"$tmp/p.txt" 2>"$tmp/err" && no_bids <"$tmp/p.txt" >"$tmp/p.nobid.txt" &&
   golden pprof_report_profile.txt "$tmp/p.nobid.txt"; then
	pass "protoc_decodes_profile_as_golden_text"
else
	fail "protoc_decodes_profile_as_golden_text" "$(head -n 3 "$tmp/err")"
fi

if [ "$(grep -m 1 '^string_table:' "$tmp/p.txt")" = 'string_table: ""' ]; then
	pass "string_table_0_is_empty"
else
	fail "string_table_0_is_empty"
fi

if gopprof -raw "$P" >"$tmp/p.raw" 2>"$tmp/err" && no_bids <"$tmp/p.raw" >"$tmp/p.nobid.raw" &&
   golden pprof_report_profile.raw "$tmp/p.nobid.raw"; then
	pass "go_pprof_raw_reads_profile_as_golden"
else
	fail "go_pprof_raw_reads_profile_as_golden" "$(head -n 3 "$tmp/err")"
fi

# Types, period (1e9 / 49 Hz) and times from the capture's META.
if grep -q '^PeriodType: cpu nanoseconds$' "$tmp/p.raw" && grep -q '^Period: 20408163$' "$tmp/p.raw" &&
   grep -q '^samples/count cpu/nanoseconds\[dflt\]$' "$tmp/p.raw" &&
   grep -q '^time_nanos: 1700000000123456789$' "$tmp/p.txt" &&
   grep -q '^duration_nanos: 2000000000$' "$tmp/p.txt"; then
	pass "profile_types_period_and_times_from_the_capture"
else
	fail "profile_types_period_and_times_from_the_capture"
fi

# No duration recorded: it comes from the rows' intervals (all written as 2 to 3
# by the spec).  A second segment without rows (concatenated) must not pull the
# start to 0.
grep -v '^meta duration_ns' "$GOLD/pprof_report.spec" >"$tmp/nodur.spec"
if "$MK" -C "$FX/root" "$tmp/nodur.spec" "$tmp/nodur.stk" &&
   "$O/tests/tools/stkwrite-sample" --empty "$tmp/empty.stk" &&
   cat "$tmp/nodur.stk" "$tmp/empty.stk" >"$tmp/two.stk" &&
   "$REP" -f pprof -o "$tmp/two.pb.gz" $SYMS "$tmp/two.stk" 2>"$tmp/err" &&
   decode "$tmp/two.pb.gz" >"$tmp/two.txt" 2>>"$tmp/err" &&
   grep -q '^duration_nanos: 1$' "$tmp/two.txt"; then
	pass "duration_from_row_intervals_ignores_a_segment_without_rows"
else
	fail "duration_from_row_intervals_ignores_a_segment_without_rows" \
		"$(grep duration_nanos "$tmp/two.txt" 2>/dev/null) $(head -n 3 "$tmp/err")"
fi

# The period as delivered: a capture whose STAT says the kernel delivered
# less than 90% of -F (sample_events over sampled_cpu_time_ns) weighs each
# sample by the delivered rate; at 90% or more, or without those counts,
# 1e9 / -F.  (49 Hz over 10 CPU-seconds is 490 events.)
period_of() {
	{ cat "$GOLD/pprof_report.spec"; printf 'stat sample_events %s\nstat sampled_cpu_time_ns 10000000000\n' "$1"
	  [ -n "$2" ] && printf 'stat sample_events_busiest_cpu %s\nstat sampled_cpus %s\n' "$2" "$3"; } \
		>"$tmp/rate.spec"
	"$MK" -C "$FX/root" "$tmp/rate.spec" "$tmp/rate.stk" &&
		"$REP" -f pprof -o "$tmp/rate.pb.gz" $SYMS "$tmp/rate.stk" 2>/dev/null &&
		decode "$tmp/rate.pb.gz" | sed -n 's/^period: //p'
}
got=$(period_of 49)
check "delivered 10% of -F: the period is 1e9 * 10 / 49 ($got)" [ "$got" = 204081632 ]
got=$(period_of 245)
check "delivered 50% of -F: the period doubles ($got)" [ "$got" = 40816326 ]
got=$(period_of 450)
check "delivered 92% of -F: the period stays 1e9 / 49 ($got)" [ "$got" = 20408163 ]
# Judged on the busiest CPU: of 2 CPUs over 5 s each, one busy (all its
# 245 periods) and one idle whose late timers missed most of them, is
# sampled at -F; every CPU at half the rate is throttled.
got=$(period_of 300 245 2)
check "the busiest of 2 CPUs got every period, the total 61%: the period stays 1e9 / 49 ($got)" \
	[ "$got" = 20408163 ]
got=$(period_of 245 123 2)
check "the busiest of 2 CPUs got half its periods: the period doubles ($got)" [ "$got" = 40650406 ]

# Every sample: cpu nanoseconds = count * period.
if gopprof -raw "$P" 2>/dev/null | awk '
	/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	on && $2 ~ /^[0-9]+:$/ { n++; sub(":", "", $2); if ($2 != $1 * 20408163) bad++ }
	END { exit !(n > 0 && !bad) }'; then
	pass "cpu_nanoseconds_are_count_times_period"
else
	fail "cpu_nanoseconds_are_count_times_period"
fi

# One mapping per (process, file): fx_pie in pids 100 and 500 is two (go
# tool pprof itself merges them, so count in protoc's view); the main
# binary (mapping 1) is the program with the most samples.
fxpie=$(awk '/^string_table:/ { if ($2 == "\"/fx/fx_pie\"") idx = n; n++ }
	/^  filename:/ { fn[++m] = $2 } END { for (i = 1; i <= m; i++) c += fn[i] == idx; print c + 0 }' \
	"$tmp/p.txt")
if [ "$fxpie" = 2 ] && grep -q '^1: 0x555555555000/0x555555556000/0x1000 /fx/fx_pie X ' "$tmp/p.nobid.raw" &&
   [ "$(grep -c '^mapping {' "$tmp/p.txt")" = 9 ]; then
	pass "one_mapping_per_process_and_file_main_binary_first"
else
	fail "one_mapping_per_process_and_file_main_binary_first" "fx_pie mappings: $fxpie"
fi

# Build-ids are the ELF files' own (the goldens hide them: they depend on
# where the fixtures were built); the kernel's is the recorded one.
bid=$(readelf -n "$FX/root/fx/fx_pie" | awk '/Build ID:/ { print $3 }')
if [ -n "$bid" ] && grep -q "^1: 0x555555555000/0x555555556000/0x1000 /fx/fx_pie $bid " "$tmp/p.raw" &&
   grep -q ' \[kernel.kallsyms\] 00112233445566778899aabbccddeeff00112233 ' "$tmp/p.raw"; then
	pass "mapping_build_ids_are_the_files_and_the_kernels"
else
	fail "mapping_build_ids_are_the_files_and_the_kernels" "fx_pie $bid"
fi

# has_* flags: all four where DWARF was read; [FN] only for kallsyms;
# none for the vdso (no symbols) and kernel addresses outside every object.
flags() { F=" $1 " awk '/^[0-9]+: 0x[0-9a-f]+\// && index($0, ENVIRON["F"]) { sub(/.* /, ""); print }' "$tmp/p.nobid.raw"; }
if [ "$(flags /fx/libfx.so)" = "[FN][FL][LN][IN]" ] && [ "$(flags /fx/fx_stripped)" = "[FN][FL][LN][IN]" ] &&
   [ "$(flags '[kernel.kallsyms] X')" = "[FN]" ] && [ "$(flags '[fxmod]')" = "[FN]" ] &&
   grep -q ' \[vdso\]  $' "$tmp/p.nobid.raw" && grep -q ' \[unknown\]  $' "$tmp/p.nobid.raw"; then
	pass "has_flags_are_truthful_per_mapping"
else
	fail "has_flags_are_truthful_per_mapping" "$(sed -n '/^Mappings/,$p' "$tmp/p.nobid.raw")"
fi

# An inlined call: one location, lines leaf first (fx_inlined, then fx_outer).
if awk '/ fx_inlined tests\/fixtures\/fx_app.c:[0-9]+ / { getline n; if (n ~ /^ +fx_outer /) ok = 1 }
	END { exit !ok }' "$tmp/p.raw"; then
	pass "inline_frames_are_lines_of_one_location_leaf_first"
else
	fail "inline_frames_are_lines_of_one_location_leaf_first"
fi

# C++: name demangled, system_name as in the binary.
if grep -q 'fx::Worker<long>::run(long) tests/fixtures/fx_cpp.cpp:[0-9]* s=[0-9]*(_ZN2fx6WorkerIlE3runEl)' "$tmp/p.raw"; then
	pass "function_name_demangled_system_name_mangled"
else
	fail "function_name_demangled_system_name_mangled"
fi

# -top: every function's flat and cum share equals the folded report's.
report folded pprof_report "$tmp/p.folded"
top_shares samples "$P" >"$tmp/top.pp" 2>"$tmp/err"
folded_shares 0 "$tmp/p.folded" >"$tmp/top.fo"
if [ -s "$tmp/top.pp" ] && same_shares "$tmp/top.fo" "$tmp/top.pp"; then
	pass "go_pprof_top_shares_equal_folded_shares"
else
	fail "go_pprof_top_shares_equal_folded_shares" "$(head -n 3 "$tmp/err")"
fi
if gopprof -top "$P" 2>/dev/null | grep -q '^Type: cpu$' &&
   gopprof -top -sample_index=samples "$P" 2>/dev/null | grep -q 'of 175 total'; then
	pass "go_pprof_top_defaults_to_cpu_and_counts_every_sample"
else
	fail "go_pprof_top_defaults_to_cpu_and_counts_every_sample"
fi

# Filters and options reach the profile.
report pprof pprof_report "$tmp/u.pb.gz" -U && gopprof -raw "$tmp/u.pb.gz" >"$tmp/u.raw" 2>/dev/null
report pprof pprof_report "$tmp/k.pb.gz" -K && gopprof -raw "$tmp/k.pb.gz" >"$tmp/k.raw" 2>/dev/null
if ! grep -q 'kernel.kallsyms\|ksys_read' "$tmp/u.raw" && grep -q ' fx_leaf ' "$tmp/u.raw" &&
   grep -q 'ksys_read' "$tmp/k.raw" && ! grep -q '/fx/\| fx_leaf ' "$tmp/k.raw"; then
	pass "U_and_K_leave_out_kernel_or_user_frames_and_mappings"
else
	fail "U_and_K_leave_out_kernel_or_user_frames_and_mappings"
fi
report pprof pprof_report "$tmp/ni.pb.gz" --no-inline && gopprof -raw "$tmp/ni.pb.gz" >"$tmp/ni.raw" 2>/dev/null
if ! grep -q 'fx_inlined' "$tmp/ni.raw" && grep -q ' fx_outer ' "$tmp/ni.raw" &&
   awk '/ \/fx\/libfx.so / && !/\[IN\]$/ && /\[FN\]\[FL\]\[LN\]$/ { ok = 1 } END { exit !ok }' "$tmp/ni.raw"; then
	pass "no_inline_drops_inline_lines_and_the_IN_flag"
else
	fail "no_inline_drops_inline_lines_and_the_IN_flag"
fi
# A time slice with no rows is an error, as a --pid that matches nothing:
# one line saying what the capture holds, exit 1, and no profile of 0
# samples that reads as success.
report pprof pprof_report "$tmp/none.pb.gz" --since 100000
rc=$?
if [ "$rc" -eq 1 ] && [ ! -e "$tmp/none.pb.gz" ] && [ "$(grep -c . "$tmp/rep.err")" -eq 1 ] &&
   grep -q 'no samples match --since 100000; the capture holds' "$tmp/rep.err"; then
	pass "no_sample_left_is_one_line_and_exit_1_not_an_empty_profile"
else
	fail "no_sample_left_is_one_line_and_exit_1_not_an_empty_profile" "exit $rc: $(head -n 3 "$tmp/rep.err")"
fi

# ---- the offwake capture ----------------------------------------------------
W=$tmp/w.pb.gz
if report pprof pprof_report_offwake "$W" && decode "$W" >"$tmp/w.txt" 2>"$tmp/err" &&
   no_bids <"$tmp/w.txt" >"$tmp/w.nobid.txt" && golden pprof_report_offwake.txt "$tmp/w.nobid.txt"; then
	pass "protoc_decodes_offwake_as_golden_text"
else
	fail "protoc_decodes_offwake_as_golden_text" "$(head -n 3 "$tmp/err" "$tmp/rep.err")"
fi
if gopprof -raw "$W" >"$tmp/w.raw" 2>"$tmp/err" && no_bids <"$tmp/w.raw" >"$tmp/w.nobid.raw" &&
   golden pprof_report_offwake.raw "$tmp/w.nobid.raw"; then
	pass "go_pprof_raw_reads_offwake_as_golden"
else
	fail "go_pprof_raw_reads_offwake_as_golden" "$(head -n 3 "$tmp/err")"
fi

# Off-CPU types; the length from STAT duration_ns.
if grep -q '^samples/count off_cpu/nanoseconds\[dflt\]$' "$tmp/w.raw" &&
   grep -q '^duration_nanos: 3000000000$' "$tmp/w.txt" &&
   grep -q '^time_nanos: 1700000100000000000$' "$tmp/w.txt"; then
	pass "offwake_types_and_times"
else
	fail "offwake_types_and_times"
fi

# -traces prints each stack leaf first: the waker's frames (root first),
# "--", then the target's, as offwaketime's folded line read backwards.
gopprof -traces "$W" >"$tmp/w.traces" 2>/dev/null
want='fxlib_work fxlib_helper do_syscall_64 pipe_write try_to_wake_up -- schedule ksys_read do_syscall_64 fx_leaf fx_mid fx_root main'
got=$(awk '/waker_comm:  writer/ { on = 1; next } on && /^-+\+/ { exit }
	on { sub(/^ *[0-9.]+[mun]?s +/, ""); sub(/^ +/, ""); printf "%s%s", sep, $0; sep = " " }' "$tmp/w.traces")
if [ "$got" = "$want" ]; then
	pass "offwake_waker_frames_above_the_separator_frame"
else
	fail "offwake_waker_frames_above_the_separator_frame" "got '$got'"
fi
if grep -q '^ *waker_pid:  701$' "$tmp/w.traces" && grep -q '^ *waker_comm:  writer$' "$tmp/w.traces" &&
   grep -q '^ *waker_pid:  0$' "$tmp/w.traces" && grep -q '^ *waker_comm:  swapper/0$' "$tmp/w.traces" &&
   grep -q ' \[Missed User Stack\]$' "$tmp/w.traces" && grep -q ' \[Missed Kernel Stack\]$' "$tmp/w.traces"; then
	pass "offwake_waker_labels_idle_waker_and_missed_stack_frames"
else
	fail "offwake_waker_labels_idle_waker_and_missed_stack_frames"
fi

# With the comms added at both ends by pprof, every stack is a line of the
# folded report, frame for frame (the flame graphs are the same).
report folded pprof_report_offwake "$tmp/w.folded"
sed -E 's/ [0-9]+$//; s/(\[Missed [A-Za-z]+ Stack\]) -?[0-9]+/\1/g' "$tmp/w.folded" | sort >"$tmp/w.lines.fo"
gopprof -tagroot=comm -tagleaf=waker_comm -traces "$W" 2>/dev/null | awk '
	function flush(   i, s) {
		if (n) { s = fr[n]; for (i = n - 1; i >= 1; i--) s = s ";" fr[i]; print s }
		n = 0
	}
	/^-+\+-+$/ { flush(); on = 1; next }
	!on || /^ *[a-z_]+:  / { next }
	{ sub(/^ *[0-9.]+[mun]?s +/, ""); sub(/^ +/, ""); fr[++n] = $0 }
	END { flush() }' |
	# A row without a waker ends in the [no waker] pseudo-frame and has no
	# waker labels, so -tagleaf adds pprof's <unknown> after it.
	sed 's/;\[no waker\];<unknown>$/;[no waker]/' | sort >"$tmp/w.lines.pp"
if [ -s "$tmp/w.lines.pp" ] && diff -u "$tmp/w.lines.fo" "$tmp/w.lines.pp" >"$tmp/diff"; then
	pass "offwake_stacks_with_tag_root_and_leaf_are_the_folded_lines"
else
	fail "offwake_stacks_with_tag_root_and_leaf_are_the_folded_lines" "$(cat "$tmp/diff")"
fi

top_shares off_cpu "$W" >"$tmp/wtop.pp" 2>"$tmp/err"
folded_shares 1 "$tmp/w.folded" >"$tmp/wtop.fo"
if [ -s "$tmp/wtop.pp" ] && same_shares "$tmp/wtop.fo" "$tmp/wtop.pp"; then
	pass "offwake_top_shares_equal_folded_shares"
else
	fail "offwake_top_shares_equal_folded_shares" "$(head -n 3 "$tmp/err")"
fi

# ---- offcpu: no waker, no separator ------------------------------------------
O2=$tmp/o.pb.gz
if report pprof offcpu "$O2" && gopprof -raw "$O2" >"$tmp/o.raw" 2>/dev/null &&
   grep -q '^samples/count off_cpu/nanoseconds\[dflt\]$' "$tmp/o.raw" &&
   ! grep -q ' -- \|waker' "$tmp/o.raw" && grep -q ' schedule ' "$tmp/o.raw"; then
	pass "offcpu_profile_has_off_cpu_time_and_no_waker"
else
	fail "offcpu_profile_has_off_cpu_time_and_no_waker"
fi
report folded offcpu "$tmp/o.folded"
top_shares off_cpu "$O2" >"$tmp/otop.pp" 2>/dev/null
folded_shares 0 "$tmp/o.folded" >"$tmp/otop.fo"
if [ -s "$tmp/otop.pp" ] && same_shares "$tmp/otop.fo" "$tmp/otop.pp"; then
	pass "offcpu_top_shares_equal_folded_shares"
else
	fail "offcpu_top_shares_equal_folded_shares"
fi

# ---- property: random stacks over real binaries ------------------------------
# mkcapture --synthetic: thousands of unique stacks of 4..32 frames drawn
# from functions of real ELF files (recursion, shared call sites, DWARF
# inline scopes in ours); every function's flat and cum share must be the
# same in pprof and folded.  These captures record no frequency: the
# profile then has sample counts only (no time can be claimed).
L=/usr/lib/x86_64-linux-gnu
for seed in 1 7; do
	name="synthetic_seed_${seed}_shares_equal_folded_and_count_only"
	set -- "$REP" "$FX/root/fx/fx_cpp" "$FX/root/fx/libfx.so"
	[ "$seed" = 7 ] && set -- "$@" "$L/libc.so.6" "$L/libstdc++.so.6"
	if ! "$MK" --synthetic 3000 --seed $seed "$tmp/syn.stk" "$@" ||
	   ! "$REP" -f pprof -o "$tmp/syn.pb.gz" "$tmp/syn.stk" 2>/dev/null ||
	   ! "$REP" -f folded -o "$tmp/syn.folded" "$tmp/syn.stk" 2>/dev/null; then
		fail "$name" "mkcapture or stkreport failed"
		continue
	fi
	top_shares samples "$tmp/syn.pb.gz" >"$tmp/syn.pp" 2>/dev/null
	folded_shares 0 "$tmp/syn.folded" >"$tmp/syn.fo"
	if [ "$(grep -c . "$tmp/syn.pp")" -gt 100 ] && same_shares "$tmp/syn.fo" "$tmp/syn.pp" >"$tmp/diff" &&
	   gopprof -raw "$tmp/syn.pb.gz" 2>/dev/null | grep -qx 'samples/count'; then
		pass "$name"
	else
		fail "$name" "$(grep -c . "$tmp/syn.pp") functions; $(head -n 3 "$tmp/diff")"
	fi
done

finish
