#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_oracle: the BPF unwinder against libdwfl, sample by sample.
# tests/tools/uworacle runs a workload, unwinds every user-mode sample
# with the BPF code stkrec runs (bpf/unwind.bpf.h over record/unwind/unwinder.c's
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
# Each workload runs a known amount of CPU time (nofpwork -c 2, cpuwork
# -n 2000 rounds of ~1 ms, python3 2 s of process_time()): ~400 samples
# at 199 Hz however busy the machine is, for the >= 100 compared (a 2 s
# wall-clock run's fell from 313 to 103 next to other tests).  It still
# runs alone: "at most 5% not compared for a mapping loaded late" is the
# share of a process's CPU time that passes before the recorder reads its
# maps, which other tests' load stretches.
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

oracle nofpwork "$NOFP" -c 2
oracle "nofpwork edge" "$NOFP" -c edge 2
oracle "nofpwork static" "$NOFP"_static -c 2
oracle "nofpwork static edge" "$NOFP"_static -c edge 2
oracle "nofpwork .debug_frame" "$NOFP"_dbgframe -c 2
oracle cpuwork "$CW" -n 2000
if command -v python3 >/dev/null; then
	cat >"$tmp/loop.py" <<'PYEOF'
import json, re, time, zlib
end = time.process_time() + 2
d = {"k%d" % i: [i, str(i) * 5, {"x": i}] for i in range(200)}
pat = re.compile(r"(\d+)x(\w+)")
while time.process_time() < end:
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
