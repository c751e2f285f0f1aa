#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_oracle: the BPF unwinder against libdwfl, sample by sample.
# tests/tools/uworacle runs a workload, unwinds every user-mode sample
# with the BPF code stkrec runs (bpf/unwind.bpf.h over record/unwinder.c's
# tables) and copies the sample's registers and top 16 KiB of stack, which
# libdwfl (dwfl_attach_state) unwinds again; the two must agree frame by
# frame, and the BPF walk must not stop before libdwfl does:
#  - nofpwork (no frame pointers, a 3-path call tree),
#  - nofpwork edge: 60-deep recursion, a SIGPROF handler that burns (the
#    signal frame), a function that realigns its stack, qsort calling back,
#  - nofpwork linked -static, plain and edge (no .eh_frame_hdr: the FDEs
#    scanned; glibc's own frames and __restore_rt in the binary),
#  - nofpwork built -fno-asynchronous-unwind-tables -g (its CFI in
#    .debug_frame, which libdwfl reads too),
#  - samples/cpuwork (frame pointers, threads are not sampled here),
#  - python3 running a json/re/zlib loop (Debian's, no frame pointers).
# Exit 77 when BPF cannot be used (not root, or no BTF), or without python3
# (the other parts still run, and a failure among them still fails).
#
# Runs alone (tests/run-tests.sh): each part needs >= 100 samples of a 2 s
# run at 199 Hz; next to other tests (-j 4) cpuwork's fell from 313 to 103.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

ORACLE=$O/tests/tools/uworacle
NOFP=$O/tests/unwind/nofpwork
need_files "$ORACLE" "$NOFP" "$NOFP"_static "$NOFP"_dbgframe

# oracle LABEL CMD...: run it, check the verdict line.
oracle() {
	label=$1
	shift
	"$ORACLE" -v -F 199 -- "$@" >"$tmp/o.out" 2>"$tmp/o.err"
	rc=$?
	# What differed, for the log (addresses; /proc/PID/maps is gone).
	grep -A2 '^mismatch\|^bpf shorter' "$tmp/o.err" | head -12
	line=$(grep '^compared' "$tmp/o.out")
	echo "     $label: $line"
	set -- $line
	# compared N samples: M mismatches, S bpf-shorter, O oracle-shorter, F frames;
	# K not compared (a mapping not loaded yet)
	# (not "skipped": that is the harness's count of skipped checks)
	n=${2:-0} mis=${4:-x} short=${6:-x} late=${12:-x}
	check "$label: uworacle ran (exit $rc)" [ "$rc" -eq 0 ]
	check "$label: >= 100 samples compared ($n)" [ "$n" -ge 100 ]
	check "$label: no frame differs from libdwfl's ($mis mismatches)" [ "$mis" = 0 ]
	check "$label: no BPF walk stopped before libdwfl's ($short)" [ "$short" = 0 ]
	check "$label: at most 5% not compared for a mapping loaded late ($late)" \
		[ "$late" != x -a $((late * 20)) -le "$n" ]
}

oracle nofpwork "$NOFP" 2
oracle "nofpwork edge" "$NOFP" edge 2
oracle "nofpwork static" "$NOFP"_static 2
oracle "nofpwork static edge" "$NOFP"_static edge 2
oracle "nofpwork .debug_frame" "$NOFP"_dbgframe 2
oracle cpuwork "$CW" 2
if command -v python3 >/dev/null; then
	cat >"$tmp/loop.py" <<'PYEOF'
import json, re, time, zlib
end = time.time() + 2
d = {"k%d" % i: [i, str(i) * 5, {"x": i}] for i in range(200)}
pat = re.compile(r"(\d+)x(\w+)")
while time.time() < end:
    s = json.dumps(d)
    json.loads(s)
    pat.findall(s)
    zlib.compress(s.encode())
PYEOF
	oracle python3 python3 "$tmp/loop.py"
else
	skip "python3: the BPF walk agrees with libdwfl's" "no python3 (make deps)"
fi
finish
