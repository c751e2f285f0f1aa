#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_lazy: an all-process recording builds a file's unwind table only
# once a stack needs it (most files a busy machine maps are never on a
# sampled stack), and still unwinds whole stacks: nofpwork (no frame
# pointers), started while stkrec records every process, has >= 90% of
# its samples rooted at _start..main; STAT says mappings were loaded
# pending and stacks met them (then asked for their tables).  Before
# on-demand tables every mapping of every sampled process was built at
# once (libz3, libcrypto, ... under a system-wide capture of a build).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

NOFP=$O/tests/unwind/nofpwork
need_files "$NOFP"

bg "$REC" -q -F 499 -o "$tmp/all.stk" 6
r=$bg_pid
sleep 1.5
"$NOFP" 3 >/dev/null
wait "$r"
rc=$?
check "stkrec (all processes) exits 0 (got $rc)" [ "$rc" -eq 0 ]
# From a second after nofpwork started: its tables are built on request,
# behind whatever else the machine's processes asked for first.
"$REP" -f folded --since 2.5 --until 4.5 "$tmp/all.stk" >"$tmp/all.folded" 2>/dev/null
"$DUMP" "$tmp/all.stk" >"$tmp/all.dump"
set -- $(awk '$0 ~ /^nofpwork;/ { n = $NF; t += n; if ($0 ~ /^nofpwork;_start;.*;main;/) m += n }
	END { printf "%d %d\n", t, m }' "$tmp/all.folded")
echo "     nofpwork: $2 of $1 samples (its last 2 s) rooted at _start..main"
check "nofpwork: >= 90% of $1 samples rooted at _start..main ($2)" \
	[ "$1" -ge 30 -a $(($2 * 10)) -ge $(($1 * 9)) ]
check "STAT unwind_mappings_pending: mappings were loaded without a table" \
	grep -q '^STAT	unwind_mappings_pending	[1-9]' "$tmp/all.dump"
check "STAT unwind_table_pending: stacks met them and asked" \
	grep -q '^STAT	unwind_table_pending	[1-9]' "$tmp/all.dump"
finish
