#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# python_dlopen: an interpreter loaded after its process was first sampled
# (an application embedding Python: tests/tools/pyembed.c spins 0.5 s of
# CPU in C, then a thread "pyphase" dlopen()s Debian's libpython3.11 and
# runs pyhot() for 1 s of its CPU) has its Python frames from its first
# samples on.  The side-band's records do not wake the recorder as they
# come (record/procs/mmapwatch.c); the process's next sample, seeing more
# code mapped than when it was announced (mm->exec_vm, bpf/common.bpf.h
# proc_announce()), does.  With --unwind=fp no stack in an unknown mapping
# asks for a reload, and --flush-interval 30 keeps every flush but the
# last away, so only that tells the recorder of the interpreter in time:
#  - the C phase was sampled (the process was known before the dlopen);
#  - >= 90% of pyphase's samples carry pyhot (Py_Initialize's own are
#    the rest, ~1%; before the exec_vm check: none, 0 of 505).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

PE=$O/tests/tools/pyembed
LIBPY=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
need_files "$PE" "$LIBPY"

"$REC" -q -F 499 --unwind=fp --flush-interval 30 -o "$tmp/e.stk" -- "$PE" "$LIBPY" 0.5 1.0 \
	> "$tmp/out" 2> "$tmp/err"
rc=$?
check "stkrec -- pyembed exits 0 ($rc: $(tail -1 "$tmp/err"))" [ "$rc" -eq 0 ]

"$REP" -f folded "$tmp/e.stk" > "$tmp/e.folded" 2> "$tmp/rep.err"
set -- $(awk '/^pyembed;/ && /c_spin/ { c += $NF }
	/^pyphase;/ { t += $NF; if (/;pyhot/) p += $NF }
	END { print c + 0, t + 0, p + 0 }' "$tmp/e.folded")
c=$1 t=$2 p=$3
check "the C phase before the dlopen was sampled ($c samples in c_spin)" [ "$c" -gt 0 ]
check ">= 90% of pyphase's samples carry pyhot ($p of $t)" \
	[ "$t" -gt 0 -a $((p * 10)) -ge $((t * 9)) ]

finish
