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
# offwork runs until the test stops it, and each recorder runs until the
# test has read /proc/kallsyms while its programs are loaded (after its
# first flush) and then stops it with SIGTERM: no fixed duration that a
# busy machine's start-up could eat (seen: no stack started in stkrec's
# own sched_switch program, a count of 0, under a loaded make check: a 4 s
# offwork had ended before its 2 s recording did).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/offcpu.sh"

# flushed FILE: the recording FILE has had a flush with offwork's episodes.
flushed() {
	[ "$(stat_of "$1" flushes 2>/dev/null)" -ge 1 ] 2>/dev/null &&
		[ "$(rows_of "$1" 2 "$ow_pid" 2>/dev/null)" -gt 0 ] 2>/dev/null
}

for mode in offwake offcpu; do
	start_offwork
	bg "$REC" $mode -q -p "$ow_pid" -o "$tmp/$mode.stk" > "$tmp/$mode.out" 2>&1
	rpid=$bg_pid
	# After the first flush the programs are loaded and have counted
	# offwork's blocks (it blocks every 10 ms), and they stay until stkrec
	# exits: /proc/kallsyms then lists them.
	wait_sampling "$tmp/$mode.stk" "$rpid" &&
		wait_until flushed "$tmp/$mode.stk"
	kallsyms_snapshot "$tmp/$mode.kallsyms"
	stop "$rpid"
	rc=$?
	stop_offwork
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
start_offwork
"$REC" offwake -q --kallsyms=full -p "$ow_pid" -o "$tmp/full.stk" 1 > "$tmp/full.out" 2>&1
rc=$?
check "offwake --kallsyms=full: exit 0 (got $rc: $(cat "$tmp/full.out"))" [ "$rc" -eq 0 ]
nb=$(stat_of "$tmp/full.stk" kaddrs_named_bpf)
check "offwake --kallsyms=full: no kaddrs_named_bpf ($nb)" [ "$nb" -eq 0 ]
check "offwake --kallsyms=full: META kallsyms full" [ "$(meta_of "$tmp/full.stk" kallsyms)" = full ]

finish
