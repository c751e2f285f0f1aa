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
#    the one /proc/kallsyms has at that address;
#  - offcpu mode too.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

NAME=offcpu_ksym
. "$(dirname "$0")/lib/record.sh"
. "$(dirname "$0")/lib/offcpu.sh"

awk '{ print $1, $3 }' /proc/kallsyms | sort -u > "$tmp/kallsyms.txt"

# uncovered DUMP: kernel frames (both sides of OFFC rows) not covered by a
# KSYM symbol written before the row.  The first frame of a stack taken on
# a tracepoint is our BPF program itself, which %pS names without an
# offset or size (so it is no symbol): it is excused when the frame after
# it is in bpf_trace_run* (stkreport drops these frames anyway).
uncovered() {
	awk -F'\t' "$AWK_HEX"'
	function sym(a,    j) {
		for (j = 1; j <= n; j++) if (a >= ka[j] && a < ke[j]) return kn[j]
		return ""
	}
	function cover(ref,    k, i) {
		if (ref < 0 || !(ref in pend)) return
		k = split(pend[ref], fr, ",")
		for (i = 1; i <= k; i++) {
			if (sym(hex(fr[i])) != "") continue
			if (i == 1 && k > 1 && sym(hex(fr[2])) ~ /^bpf_trace_run/) continue
			bad++
			print "uncovered " fr[i] > "/dev/stderr"
		}
		delete pend[ref]
		nk++
	}
	$1 == "KSYM" { n++; ka[n] = hex($2); ke[n] = hex($2) + $3; kn[n] = $5 }
	$1 == "STCK" { pend[$2] = $4 }
	$1 == "OFFC" { cover($6); cover($11) }
	END { print bad + 0, nk + 0 }' "$1"
}

# not_kallsyms DUMP: KSYM symbols that are not /proc/kallsyms' symbol at
# their address.
not_kallsyms() {
	awk -F'\t' '$1 == "KSYM" { sub(/^0x/, "", $2); print $2, $5 }' "$1" | sort -u |
		comm -23 - "$tmp/kallsyms.txt" | wc -l
}

for mode in offwake offcpu; do
	start_offwork 4
	"$REC" $mode -q -p "$ow_pid" -o "$tmp/$mode.stk" 2 > "$tmp/$mode.out" 2>&1
	rc=$?
	check "$mode -p offwork: exit 0 (got $rc: $(cat "$tmp/$mode.out"))" [ "$rc" -eq 0 ]
	"$DUMP" "$tmp/$mode.stk" > "$tmp/$mode.dump"
	nb=$(stat_of "$tmp/$mode.stk" kaddrs_named_bpf)
	nksym=$(grep -c '^KSYM' "$tmp/$mode.dump")
	check "$mode: kernel addresses named in the kernel (kaddrs_named_bpf $nb, $nksym KSYM)" \
		[ "$nb" -gt 0 -a "$nksym" -gt 0 ]
	# shellcheck disable=SC2046 # two numbers, split on purpose
	set -- $(uncovered "$tmp/$mode.dump")
	check "$mode: every kernel frame of $2 kernel stacks is covered by a KSYM symbol ($1 not)" \
		[ "$1" -eq 0 -a "$2" -gt 0 ]
	notin=$(not_kallsyms "$tmp/$mode.dump")
	check "$mode: every KSYM symbol is /proc/kallsyms' symbol at that address ($notin not)" \
		[ "$notin" -eq 0 ]
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
