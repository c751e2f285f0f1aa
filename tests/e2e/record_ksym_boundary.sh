#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_ksym_boundary: a kernel return address at the first byte of a
# symbol is named by the symbol before it, with the default
# --kallsyms=covering.  A call to a function that never returns, as the
# last instruction of its caller, leaves such a return address: the boot
# CPU's idle task has one (x86_64_start_reservations ends calling
# start_kernel).  The report looks return addresses up at address - 1, so
# the capture must hold the symbol covering that byte too.
#  - stkrec of every CPU, at least two flush intervals and until a dd
#    (in the kernel's read and write, until the test stops it) has
#    kernel stacks in the file, then SIGINT: of every recorded kernel
#    stack, no return address (frame 1 and up) is covered by a KSYM
#    symbol while the byte before it is not (before, each one at a symbol
#    start was); dd's stacks make sure there are return addresses to
#    look at, whatever else the machine runs;
#  - every kernel address the rows and their stacks hold is covered by a
#    KSYM symbol, but those STAT kaddr_unknown counts, and some were
#    named from a symbol named already (STAT kaddrs_named_known > 0: dd
#    is sampled at many offsets of the same functions), not by running
#    the symbolizer again;
#  - when CPU 0 was idle meanwhile, its idle stacks through start_kernel
#    read x86_64_start_kernel;x86_64_start_reservations;start_kernel,
#    never [unknown] next to start_kernel (on a CPU 0 that was never idle
#    there is nothing to look at: said, not asserted);
#  - the /proc/kallsyms path is check_record_ksymtab's.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

bg "$REC" -q -F 199 -o "$tmp/a.stk"
rpid=$bg_pid
wait_sampling "$tmp/a.stk" "$rpid" || fail "stkrec -F 199 never started"
bg dd if=/dev/zero of=/dev/null bs=512
dd=$bg_pid
# Two flushes, and a kernel stack of dd among the counts.
dd_seen() {
	[ "$(stat_of "$tmp/a.stk" flushes)" -ge 2 ] &&
		"$DUMP" "$tmp/a.stk" 2>/dev/null |
		awk -F'\t' -v p="$dd" '$1 == "CNTS" && $2 == p && $6 >= 0 { f = 1 } END { exit !f }'
}
wait_until dd_seen || fail "no kernel stack of dd in the file"
kill -INT "$rpid"
wait "$rpid"
rc=$?
stop "$dd"
check "stkrec -F 199, stopped by SIGINT: exit 0 (got $rc)" [ "$rc" -eq 0 ]
"$DUMP" "$tmp/a.stk" > "$tmp/a.dump"
# "B R": B return addresses covered where the byte before is not, of R.
awk -F'\t' "$AWK_HEX"'
	function covered(a,    j) {
		for (j = 1; j <= n; j++) if (a >= ka[j] && a < ke[j]) return 1
		return 0
	}
	$1 == "KSYM" { n++; ka[n] = hex($2); ke[n] = hex($2) + $3 }
	$1 == "STCK" { st[$2] = $4 }
	$1 == "CNTS" && $6 >= 0 { used[$6] = 1 }
	END {
		for (id in used) {
			k = split(st[id], fr, ",")
			for (i = 2; i <= k; i++) {
				if (fr[i] in seen) continue
				seen[fr[i]] = 1
				a = hex(fr[i])
				r++
				if (covered(a) && !covered(a - 1)) { b++; print "boundary " fr[i] > "/dev/stderr" }
			}
		}
		print b + 0, r + 0
	}' "$tmp/a.dump" > "$tmp/n" 2> "$tmp/boundary"
read -r b r < "$tmp/n"
check "no kernel return address is named but the byte before it not ($b of $r: $(head -n 3 "$tmp/boundary" | tr '\n' ' '))" \
	[ "$r" -gt 0 -a "$b" -eq 0 ]

# "U R": recorded kernel addresses (leaf IPs, stack frames) no KSYM
# symbol covers, of R.
awk -F'\t' "$AWK_HEX"'
	function covered(a,    j) {
		for (j = 1; j <= n; j++) if (a >= ka[j] && a < ke[j]) return 1
		return 0
	}
	function see(x) { if (length(x) == 18 && x ~ /^0xf/ && !(x in seen)) { seen[x] = 1; r++; if (!covered(hex(x))) u++ } }
	$1 == "KSYM" { n++; ka[n] = hex($2); ke[n] = hex($2) + $3 }
	$1 == "STCK" { st[$2] = $4 }
	$1 == "CNTS" { if ($6 >= 0) used[$6] = 1; see($7); see($8) }
	END {
		for (id in used) { k = split(st[id], fr, ","); for (i = 1; i <= k; i++) see(fr[i]) }
		print u + 0, r + 0
	}' "$tmp/a.dump" > "$tmp/n"
read -r u r < "$tmp/n"
unknown=$(stat_of "$tmp/a.stk" kaddr_unknown)
known=$(stat_of "$tmp/a.stk" kaddrs_named_known)
check "every recorded kernel address is covered by a KSYM symbol but kaddr_unknown's ($u of $r not, kaddr_unknown ${unknown:-0})" \
	[ "$r" -gt 0 -a "$u" -le "${unknown:-0}" ]
check "addresses inside symbols named already are named without the symbolizer (kaddrs_named_known ${known:-0})" \
	[ "${known:-0}" -gt 0 ]

"$REP" -f folded -K "$tmp/a.stk" 2> "$tmp/rep.err" | grep 'start_kernel;' > "$tmp/boot.folded"
n=$(wc -l < "$tmp/boot.folded")
if [ "$n" -eq 0 ]; then
	echo "note: CPU 0 was never idle while recording: no boot CPU idle stack to look at"
else
	bad=$(grep -c '\[unknown\];start_kernel;' "$tmp/boot.folded")
	good=$(grep -c ';x86_64_start_reservations;start_kernel;' "$tmp/boot.folded")
	check "$n boot CPU idle stacks: start_kernel called from x86_64_start_reservations in $good, [unknown] in $bad" \
		[ "$bad" -eq 0 -a "$good" -eq "$n" ]
fi
finish
