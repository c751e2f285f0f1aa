#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_exec: with -- CMD, a process the command starts has its unwind
# tables loaded when it execs, not after its first sample: ten short
# nofpwork runs (no frame pointers) started by a shell take fewer
# frame-pointer fallbacks for "tables not loaded yet" (STAT
# unwind_fallback_no_process) than there are processes sampled.  Before,
# a process's tables were loaded only once its first sample announced
# it, so every sampled process's first sample fell back.  No timing
# assertion: it holds as long as the recorder reacts to an exec before
# the process is sampled at least once in every other process.  Each
# nofpwork runs 0.3 s of its own CPU time (-c): ~30 samples at 99 Hz
# however busy the machine is, so all ten are sampled.
# Samples in execve past the switch to the new image's memory take no
# user stack (below).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

NOFP=$O/tests/unwind/nofpwork
need_files "$NOFP"

"$REC" -q -F 99 -o "$tmp/ex.stk" -- sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10; do '$NOFP' -c 0.3 >/dev/null; done"
rc=$?
check "stkrec -- sh (ten nofpwork runs) exits 0 (got $rc)" [ "$rc" -eq 0 ]
"$DUMP" "$tmp/ex.stk" >"$tmp/ex.dump"
procs=$(awk -F'\t' '$1 == "CNTS" && $4 == "nofpwork" { print $2 }' "$tmp/ex.dump" | sort -u | wc -l)
fb=$(awk -F'\t' '$1 == "STAT" && $2 == "unwind_fallback_no_process" { v = $3 } END { print v + 0 }' "$tmp/ex.dump")
echo "     $procs nofpwork processes sampled, $fb samples taken before their tables were loaded"
check "all 10 processes sampled ($procs)" [ "$procs" -ge 10 ]
check "fewer no-table fallbacks ($fb) than processes sampled ($procs)" [ "$fb" -lt "$procs" ]

# In execve, once exec_mmap() has switched to the new image's memory and
# until the new image starts, the user registers are still the old
# image's: there is no user stack (perf takes none).  Before, BPF walked
# the old registers over the new memory, and such samples ended in
# [unwind stopped: fault] (or no mapping) right above execve.  2000 execs
# at 999 Hz spend ~0.1 s there: ~100 samples, so at least one.
"$REC" -q -F 999 -o "$tmp/sw.stk" -- sh -c \
	'i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done'
check "stkrec -- sh (2000 execs of true) exits 0" [ $? -eq 0 ]
none=$(stat_of "$tmp/sw.stk" stack_none_in_exec)
"$REP" -f folded "$tmp/sw.stk" 2>/dev/null | grep -E '^(sh|true);' >"$tmp/sw.folded"
bad=$(grep -c 'unwind stopped[^;]*\];execve;' "$tmp/sw.folded")
echo "     $none samples in execve past the switch without a user stack; $bad stacks stopped above execve"
check "samples past execve's switch take no user stack (STAT stack_none_in_exec $none >= 1)" \
	[ "${none:-0}" -ge 1 ]
check "no user stack stops right above execve ($bad do)" [ "$bad" -eq 0 ]
finish
