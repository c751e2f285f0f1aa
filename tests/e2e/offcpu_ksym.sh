#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# offcpu_ksym: the off-CPU modes name kernel addresses as profile mode
# does, with the kernel's own %pS (the BPF symbolizer), not by reading
# /proc/kallsyms:
#  - an offwake capture of samples/offwork has STAT kaddrs_named_bpf > 0
#    (the in-kernel path ran), and an --kallsyms=full capture (which never
#    uses it) has none, so the counter tells the paths apart;
#  - every frame of every kernel stack of both sides (target and waker) is
#    covered by a KSYM symbol written before the row, and each symbol is
#    the one /proc/kallsyms has at that address (read while recording);
#    that includes the first frame of a stack taken on a tracepoint, our
#    BPF program itself (bpf_prog_TAG_on_sched_switch [bpf]: %pS names it
#    without a module).  Only an address outside the kernel's text may be
#    left unnamed, and then it is counted in STAT kaddr_unknown: a BPF
#    program of another recorder, unloaded before the flush could name it
#    (an interrupt that wakes a thread can land in any program);
#  - offcpu mode too.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone: under a loaded parallel make check no stack started in
# stkrec's own sched_switch program once (a count of 0).
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/offcpu.sh"

for mode in offwake offcpu; do
	start_offwork 4
	bg "$REC" $mode -q -p "$ow_pid" -o "$tmp/$mode.stk" 2 > "$tmp/$mode.out" 2>&1
	rpid=$bg_pid
	# After the first flush the programs are loaded, and stay until stkrec
	# exits: /proc/kallsyms then lists them.
	i=0
	while [ "$(stat_of "$tmp/$mode.stk" flushes 2>/dev/null)" -lt 1 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kallsyms_snapshot "$tmp/$mode.kallsyms"
	wait "$rpid"
	rc=$?
	check "$mode -p offwork: exit 0 (got $rc: $(cat "$tmp/$mode.out"))" [ "$rc" -eq 0 ]
	"$DUMP" "$tmp/$mode.stk" > "$tmp/$mode.dump"
	nb=$(stat_of "$tmp/$mode.stk" kaddrs_named_bpf)
	nksym=$(grep -c '^KSYM' "$tmp/$mode.dump")
	check "$mode: kernel addresses named in the kernel (kaddrs_named_bpf $nb, $nksym KSYM)" \
		[ "$nb" -gt 0 -a "$nksym" -gt 0 ]
	# shellcheck disable=SC2046 # three numbers, split on purpose
	set -- $(uncovered_kframes "$tmp/$mode.dump" "$tmp/$mode.kallsyms")
	unk=$(stat_of "$tmp/$mode.stk" kaddr_unknown)
	check "$mode: every kernel frame of $3 kernel stacks is covered by a KSYM symbol, but $2 outside the kernel's text counted in kaddr_unknown ($unk); $1 not covered" \
		[ "$3" -gt 0 -a "$1" -eq "$2" -a "$2" -le "$unk" ]
	# shellcheck disable=SC2046 # two numbers, split on purpose
	set -- $(foreign_ksyms "$tmp/$mode.dump" "$tmp/$mode.kallsyms")
	check "$mode: every KSYM symbol is /proc/kallsyms' symbol at that address ($1 not, $2 of them programs gone since)" \
		[ "$1" -eq "$2" ]
	# Our program on sched_switch: named, under [bpf], as kallsyms has it.
	own=$(awk -F'\t' '$1 == "KSYM" && $5 ~ /^bpf_prog_[0-9a-f]+_on_sched_switch$/ && $6 == "bpf" {
		sub(/^0x/, "", $2); print $2, $5, $6 }' "$tmp/$mode.dump" | sort -u | comm -12 - "$tmp/$mode.kallsyms" | wc -l)
	check "$mode: the stacks' first frame, stkrec's program on sched_switch, is a KSYM symbol under [bpf] ($own)" \
		[ "$own" -eq 1 ]
done

# The waker side has kernel stacks too (offwake): pipe_write -> wake-up.
wk=$(offc "$tmp/offwake.stk" | awk -F'\t' '$11 >= 0 { n++ } END { print n + 0 }')
check "offwake: rows with a waker kernel stack ($wk)" [ "$wk" -gt 0 ]

# --kallsyms=full keeps the whole table and never runs the symbolizer: the
# counter is absent, so it does tell the two paths apart.
start_offwork 3
"$REC" offwake -q --kallsyms=full -p "$ow_pid" -o "$tmp/full.stk" 1 > "$tmp/full.out" 2>&1
rc=$?
check "offwake --kallsyms=full: exit 0 (got $rc: $(cat "$tmp/full.out"))" [ "$rc" -eq 0 ]
nb=$(stat_of "$tmp/full.stk" kaddrs_named_bpf)
check "offwake --kallsyms=full: no kaddrs_named_bpf ($nb)" [ "$nb" -eq 0 ]
check "offwake --kallsyms=full: META kallsyms full" [ "$(meta_of "$tmp/full.stk" kallsyms)" = full ]

finish
