#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_ksym_boundary: a kernel return address at the first byte of a
# symbol is named by the symbol before it, with the default
# --kallsyms=covering.  The boot CPU's idle task is the case at hand:
# x86_64_start_reservations ends with a call to start_kernel, which never
# returns, so the return address on the idle stack is start_kernel's first
# byte.  The report looks it up at address - 1; the capture must hold the
# symbol covering that byte, not only the one covering the address.
#  - stkrec -C 0 (the boot CPU) for 2 s: the idle stacks through
#    start_kernel read x86_64_start_kernel;x86_64_start_reservations;
#    start_kernel, never [unknown] next to start_kernel;
#  - the same with the /proc/kallsyms path is check_record_ksymtab's.
# Skipped when CPU 0 was never idle while recording (nothing to look at),
# or the kernel has no x86_64_start_reservations (not x86-64).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"

need_bpf
grep -q ' x86_64_start_reservations$' /proc/kallsyms ||
	skip_test "no x86_64_start_reservations in this kernel"

"$REC" -q -C 0 -F 199 -o "$tmp/idle.stk" 2 > "$tmp/rec.out" 2>&1
rc=$?
check "stkrec -C 0: exit 0 (got $rc: $(cat "$tmp/rec.out"))" [ "$rc" -eq 0 ]
"$REP" -f folded -K "$tmp/idle.stk" > "$tmp/idle.folded" 2> "$tmp/rep.err"
grep 'start_kernel;' "$tmp/idle.folded" > "$tmp/boot.folded"
n=$(wc -l < "$tmp/boot.folded")
if [ "$n" -eq 0 ]; then
	skip "boot CPU idle stacks" "CPU 0 was never idle in 2 s"
else
	bad=$(grep -c '\[unknown\];start_kernel;' "$tmp/boot.folded")
	good=$(grep -c ';x86_64_start_reservations;start_kernel;' "$tmp/boot.folded")
	check "$n boot CPU idle stacks: start_kernel called from x86_64_start_reservations in $good, [unknown] in $bad ($(head -1 "$tmp/boot.folded"))" \
		[ "$bad" -eq 0 -a "$good" -eq "$n" ]
fi
finish
