#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# python_fork_exit: a forked interpreter's Python entry (the kernel copies
# its parent's at fork, bpf/common.bpf.h) goes when it exits, even when
# user space never heard of it.  Debian's python3 runs
# tests/python/forker.py: 5000 children that exit at once (at -F 49 a
# handful of them are ever sampled; the "py_procs" map holds 4096), then a
# worker child running worker_fn for a fixed amount of work (~50 samples).
# Left behind, the entries of the 5000 filled the map and the worker had
# no Python frame; now worker_fn is in its samples.
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
need_bpf
need_files /usr/bin/python3 "$top/tests/python/forker.py"

"$REC" -F 49 -o "$tmp/f.stk" -- /usr/bin/python3 "$top/tests/python/forker.py" 5000 30000000 \
	> "$tmp/rec.out" 2>&1
rc=$?
check "stkrec -- python3 forker.py exit 0 (got $rc: $(head -c 300 "$tmp/rec.out"))" [ "$rc" -eq 0 ]
"$REP" -f folded "$tmp/f.stk" > "$tmp/folded" 2> "$tmp/rep.err"
rc=$?
check "stkreport -f folded exit 0 (got $rc: $(head -c 300 "$tmp/rep.err"))" [ "$rc" -eq 0 ]
n=$(awk '/;worker_fn \(forker\.py:[0-9]+\)/ { n += $NF } END { print n + 0 }' "$tmp/folded")
check "the worker forked after 5000 children exited has Python frames (worker_fn in $n samples)" \
	[ "$n" -gt 0 ]
finish
