#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport's part of `make bench` (tests/bench/bench.sh may call it):
#  1. fold a synthetic capture of 100k unique stacks over 20 real binaries
#     (mkcapture --synthetic: 30000 distinct addresses, 4..32 frames each),
#     best of 3, target <= 1 s; and draw it as a flame graph (-f svg): time,
#     size and frames drawn, target <= 2 s and <= 2 MB, and, with chromium,
#     the wall time of a headless screenshot of it (load, script, paint)
#     next to one of an empty graph;
#  2. fold the same cpuwork run (2 threads, 5 s, 999 Hz) recorded by stkrec
#     and by perf record -g: stkreport -f folded vs perf script + folding
#     (awk), as ratios, target >= 10x, both with the default options (inline
#     frames from DWARF, which perf script -F ip,sym does not show: the
#     first report, with an empty symbol cache, and the next ones, which
#     read no DWARF) and with --no-inline (no DWARF, what perf script
#     does).  Needs root (BPF); skipped otherwise;
#  3. (run before 2) fold crafted captures that were quadratic to read:
#     many kernel objects, many maps snapshots (mkcapture --hostile);
#  4. the same as 2 on a recording of all CPUs while make -j2 builds a
#     copy of this tree;
#  5. the same on a bigger one: all CPUs for BIG_SECS (default 30) s while
#     make -j2 builds stkreport over and over (perf record started a second
#     after stkrec), with the cached report's CPU time and peak memory.
# Prints one "bench_report: ..." line per figure; exit 0 unless a tool failed.

O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
O=$(cd "$top" && cd "$O" && pwd)
REP=$O/stkreport
REC=$O/stkrec
MK=$O/tests/tools/mkcapture
CW=$O/samples/cpuwork
L=/usr/lib/x86_64-linux-gnu

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# stkreport's default symbol cache goes with the run, not into ~/.cache.
XDG_CACHE_HOME=$tmp/xdg
export XDG_CACHE_HOME

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'; }
best_of_3() {	# best_of_3 CMD... : best wall time in seconds
	best=
	for _ in 1 2 3; do
		t0=$(now)
		"$@" >/dev/null 2>&1 || return 1
		t=$(elapsed "$t0" "$(now)")
		best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}

# ---- 1. synthetic capture ----------------------------------------------
# 20 real binaries with symbols: ours (with DWARF, so inline scopes are
# read) and system libraries (.dynsym only).
files=
for f in "$REP" "$REC" "$CW" "$MK" "$O/tests/fixtures/root/fx/fx_cpp" \
	 $L/libc.so.6 $L/libm.so.6 $L/libz.so.1 $L/libzstd.so.1 $L/libelf.so.1 \
	 $L/libdw.so.1 $L/libstdc++.so.6 $L/libbpf.so.1 $L/liblzma.so.5 $L/libcrypto.so.3 \
	 $L/libssl.so.3 $L/libsqlite3.so.0 $L/libxml2.so.2 $L/libsystemd.so.0 $L/libcurl.so.4 \
	 $L/libgnutls.so.30 $L/libpython3.11.so.1.0 $L/libgcc_s.so.1 $L/libbz2.so.1.0; do
	[ -e "$f" ] || continue
	[ "$(echo "$files" | wc -w)" -ge 20 ] && break
	files="$files $(readlink -f "$f")"
done
n=$(echo "$files" | wc -w)
# shellcheck disable=SC2086
if ! "$MK" --synthetic 100000 "$tmp/synth.stk" $files; then
	echo "bench_report: mkcapture --synthetic failed"
	exit 1
fi
t=$(best_of_3 "$REP" -f folded -o "$tmp/synth.folded" "$tmp/synth.stk") || {
	echo "bench_report: stkreport failed on the synthetic capture"
	exit 1
}
verdict=$(awk -v t="$t" 'BEGIN { print (t <= 1.0) ? "met" : "missed" }')
echo "bench_report: fold 100000 unique stacks over $n binaries: ${t} s (target <= 1 s: $verdict)"
t=$(best_of_3 "$REP" -f svg -o "$tmp/synth.svg" "$tmp/synth.stk") || {
	echo "bench_report: stkreport -f svg failed on the synthetic capture"
	exit 1
}
size=$(wc -c <"$tmp/synth.svg")
frames=$(grep -c '^<g n=' "$tmp/synth.svg")
merged=$(grep -o '[0-9]* frames* narrower' "$tmp/synth.svg" | cut -d' ' -f1)
verdict=$(awk -v t="$t" -v s="$size" 'BEGIN { print (t <= 2.0 && s <= 2000000) ? "met" : "missed" }')
echo "bench_report: flame graph of the same: ${t} s, $size bytes, $frames frames drawn, ${merged:-0} narrower than 0.1 px merged (target <= 2 s, <= 2 MB: $verdict)"
CHROME=$(command -v chromium || true)
if [ -n "$CHROME" ]; then
	shot() {
		timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$tmp/chrome" --window-size=1200,900 \
			--screenshot="$tmp/shot.png" "file://$1"
	}
	"$REP" -f svg -o "$tmp/empty.svg" --pid 1 "$tmp/synth.stk" >/dev/null 2>&1
	te=$(best_of_3 shot "$tmp/empty.svg") && ts=$(best_of_3 shot "$tmp/synth.svg") &&
		echo "bench_report:   chromium headless screenshot: ${ts} s (an empty graph: ${te} s)"
else
	echo "bench_report:   chromium render time: skipped (no chromium; make deps)"
fi

# ---- 3. crafted inputs: what the reader's indexes bound ------------------
# (Before the cpuwork part, which ends the script where it cannot run.)
# mkcapture --hostile: 40960 distinct kernel objects (each was compared
# with every one kept: 2.8 s of CPU before), and 32768 maps snapshots of
# 8192 processes with 65536 off-CPU rows (every row scanned every snapshot),
# each folded, best of 3.
for spec in "kobjs 40960" "snapshots 32768"; do
	# shellcheck disable=SC2086
	set -- $spec
	"$MK" --hostile "$1" "$2" "$tmp/h$1.stk" || { echo "bench_report: mkcapture --hostile $1 failed"; exit 1; }
	t=$(best_of_3 "$REP" -f folded --no-debuginfod "$tmp/h$1.stk") ||
		{ echo "bench_report: stkreport failed on the crafted $1 capture"; exit 1; }
	echo "bench_report: crafted capture, $2 $1 ($(wc -c < "$tmp/h$1.stk") bytes): fold ${t} s (target <= 1 s: $(awk -v t="$t" 'BEGIN { print (t <= 1) ? "met" : "missed" }'))"
done

# ---- 2. cpuwork: stkreport vs perf script + folding ----------------------
if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null 2>&1; then
	echo "bench_report: stkreport vs perf script: skipped (needs root and perf)"
	exit 0
fi
"$CW" 7 2 >/dev/null &
cwpid=$!
sleep 0.5
perf record -q -F 999 -e cpu-clock -g -p "$cwpid" -o "$tmp/perf.data" -- sleep 5 >/dev/null 2>&1 &
perfpid=$!
"$REC" -q -F 999 -p "$cwpid" -o "$tmp/cw.stk" 5 2>"$tmp/rec.err" || {
	echo "bench_report: stkrec failed: $(cat "$tmp/rec.err")"
	kill $cwpid 2>/dev/null
	exit 1
}
wait $perfpid
wait $cwpid

# shellcheck disable=SC2016  # the program is awk's
FOLD_AWK='
	/^[^ \t]/ { comm = $1; n = 0; next }
	/^[ \t]+[0-9a-f]+ / { n++; sym[n] = $2; next }
	/^$/ { if (n) { line = comm; for (i = n; i >= 1; i--) line = line ";" sym[i]; c[line]++ } n = 0 }
	END { for (l in c) print l, c[l] }'
# shellcheck disable=SC2317  # called through best_of_3
perf_fold() {	# perf_fold PERF.DATA: perf script + folding, as people do
	perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk "$FOLD_AWK"
}
# shellcheck disable=SC2317  # called through best_of_3
cold_report() {	# stkreport with an empty symbol cache: what a first report costs
	rm -rf "$tmp/symcache.cold"
	"$REP" --symbol-cache "$tmp/symcache.cold" "$@"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 0.001; printf "%.1f\n", a / b }'; }
verdict() { awk -v r="$1" 'BEGIN { print (r >= 10) ? "met" : "missed" }'; }

# vs_perf LABEL STK PERF.DATA: stkreport -f folded of STK against perf
# script + fold of PERF.DATA (the same workload at the same moment), best
# of 3 each: the first report (empty symbol cache: DWARF read), the next
# ones (the cache filled by the first: no DWARF read), and --no-inline.
vs_perf() {
	label=$1 stk=$2 pdata=$3
	# perf 6.1 under Linux 6.18 stops reading a perf.data made beside
	# stkrec at its first MMAP2 or KSYMBOL record the kernel wrote wrong
	# (tests/tools/perfdata_fixup.py says how): without this, perf script
	# read 3-30k of a big capture's 77k samples, and its time was for those.
	command -v python3 >/dev/null 2>&1 &&
		python3 "$top/tests/tools/perfdata_fixup.py" "$pdata" >/dev/null
	sc=$tmp/symcache.warm
	rm -rf "$sc"
	tc=$(best_of_3 cold_report -f folded -o "$tmp/vs.folded" "$stk") || {
		echo "bench_report: stkreport failed on the $label capture"
		return 1
	}
	"$REP" --symbol-cache "$sc" -f folded -o "$tmp/vs.folded" "$stk" 2>/dev/null
	tw=$(best_of_3 "$REP" --symbol-cache "$sc" -f folded -o "$tmp/vs.folded" "$stk") || return 1
	tn=$(best_of_3 "$REP" --symbol-cache none -f folded --no-inline -o /dev/null "$stk") || return 1
	tp=$(best_of_3 perf_fold "$pdata") || { echo "bench_report: perf script failed"; return 1; }
	samples=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/vs.folded")
	psamples=$(perf_fold "$pdata" | awk '{ s += $NF } END { print s + 0 }')
	rc=$(ratio "$tp" "$tc")
	rw=$(ratio "$tp" "$tw")
	rn=$(ratio "$tp" "$tn")
	echo "bench_report: $label ($samples samples; perf's: $psamples), best of 3:"
	printf 'bench_report:   perf script + fold               %6.3f s\n' "$tp"
	printf 'bench_report:   stkreport, first report          %6.3f s  %5.1fx faster (target >= 10x: %s)\n' \
		"$tc" "$rc" "$(verdict "$rc")"
	printf 'bench_report:   stkreport, next (symbol cache)   %6.3f s  %5.1fx faster (target >= 10x: %s)\n' \
		"$tw" "$rw" "$(verdict "$rw")"
	printf 'bench_report:   stkreport --no-inline            %6.3f s  %5.1fx faster (target >= 10x: %s)\n' \
		"$tn" "$rn" "$(verdict "$rn")"
	if [ "$psamples" -lt $((samples * 9 / 10)) ]; then
		echo "bench_report:   (perf script read fewer samples than stkreport: perf aborted on its file; its time is for those)"
		# An estimate: perf's time as if it had read as many samples
		# (its start-up scaled too, so the ratio is flattered).
		rs=$(awk -v a="$tp" -v b="$tw" -v s="$samples" -v p="$psamples" \
			'BEGIN { if (p <= 0) p = 1; if (b <= 0) b = 0.001; printf "%.1f\n", a * s / p / b }')
		printf 'bench_report:   (next against perf scaled to as many samples: ~%sx)\n' "$rs"
	fi
	# The cached report's CPU time and peak memory (wall times on a busy
	# machine are noisy).
	cpu=$(perf stat -x, -e task-clock -- "$REP" --symbol-cache "$sc" -f folded -o /dev/null \
		"$stk" 2>&1 >/dev/null | awk -F, '/task-clock/ { printf "%.0f", $1 }')
	# perf script and awk run side by side: their CPU time, both.
	# shellcheck disable=SC2016  # $1 and $2 are the inner shell's
	pcpu=$(perf stat -x, -e task-clock -o "$tmp/vs.pstat" -- sh -c \
		'perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk "$2"' sh "$pdata" "$FOLD_AWK" \
		>/dev/null 2>&1;
		awk -F, '/task-clock/ { printf "%.0f", $1 }' "$tmp/vs.pstat")
	/usr/bin/time -f '%M' -o "$tmp/vs.time" "$REP" --symbol-cache "$sc" -f folded \
		-o /dev/null "$stk" 2>/dev/null &&
		printf 'bench_report:   next (symbol cache): %s ms of CPU (perf script + awk: %s ms, %sx), %s MiB at most (capture: %s KiB)\n' \
			"${cpu:-?}" "${pcpu:-?}" "$(ratio "${pcpu:-0}" "${cpu:-0}")" \
			"$(($(cat "$tmp/vs.time") / 1024))" "$(($(wc -c < "$stk") / 1024))"
	printf 'bench_report:   symbol cache: %s KiB in %s files\n' \
		"$(du -sk "$sc" 2>/dev/null | cut -f1)" "$(find "$sc" -name '*.sym' 2>/dev/null | wc -l)"
}

vs_perf "cpuwork, 2 threads, 5 s at 999 Hz" "$tmp/cw.stk" "$tmp/perf.data" || exit 1
# Only the first report reads DWARF (inline frames, which perf script -F
# ip,sym does not show); its time over --no-inline is mostly libdw
# inflating every compressed debug section of libc's separate debuginfo
# when it opens it.
dbg=no
bid=$(readelf -n "$L/libc.so.6" 2>/dev/null | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] && [ -e "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ] &&
	dbg=yes
echo "bench_report:   (first - --no-inline: DWARF for inline frames; libc debuginfo installed: $dbg)"

# ---- 4. all CPUs while make -j2 builds this project ----------------------
# stkrec (every CPU) and perf record -a -g for the same 10 s of a build of
# a copy of this tree (in its own process group, stopped after).  perf
# record runs with -B: perf 6.1 under Linux 6.18 here aborts at exit on a
# build-id it cannot copy (bench.sh says more); perf script of the file
# then aborts after its last sample, which is counted.
mkdir -p "$tmp/tree"
(cd "$top" && tar --exclude=./build --exclude=./.git -cf - .) | (cd "$tmp/tree" && tar -xf -)
setsid make -s -C "$tmp/tree" -j2 >/dev/null 2>&1 &
mkpid=$!
sleep 2
perf record -B -N --no-bpf-event -q -F 999 -e cpu-clock -g -a -o "$tmp/sys.data" -- sleep 10 >/dev/null 2>&1 &
perfpid=$!
"$REC" -q -F 999 -o "$tmp/sys.stk" 10 2>"$tmp/rec.err" || echo "bench_report: stkrec (all CPUs) failed: $(cat "$tmp/rec.err")"
wait $perfpid
kill -TERM "-$mkpid" 2>/dev/null	# dash's kill takes no "--"
wait $mkpid 2>/dev/null
if [ -s "$tmp/sys.stk" ] && [ -s "$tmp/sys.data" ]; then
	vs_perf "all CPUs, 10 s of make -j2 at 999 Hz" "$tmp/sys.stk" "$tmp/sys.data"
fi

# ---- 5. a bigger system-wide capture of a build --------------------------
# BIG_SECS of all CPUs while make -j2 builds stkreport in the copy, again
# and again (tens of thousands of samples from ~1000 processes: cc1, as,
# ld, make, sh).  Not the whole tree: perf script 6.1 aborts on the first
# sample of bpftool (the BPF skeletons), which would leave perf a few
# seconds of the file.  stkrec starts first, perf record a second later.
BIG_SECS=${BIG_SECS:-30}
rm -rf "$tmp/tree/build"
# shellcheck disable=SC2016  # $1 is the inner shell's
setsid sh -c 'cd "$1" || exit 1
	while :; do rm -rf build; make -s -j2 build/stkreport >/dev/null 2>&1; done' sh "$tmp/tree" \
	>/dev/null 2>&1 </dev/null &
mkpid=$!
sleep 1
"$REC" -q -F 999 -o "$tmp/big.stk" "$BIG_SECS" 2>"$tmp/rec.err" &
recpid=$!
sleep 1
perf record -B -N --no-bpf-event -q -F 999 -e cpu-clock -g -a -o "$tmp/big.data" \
	-- sleep $((BIG_SECS - 1)) >/dev/null 2>&1
wait $recpid || echo "bench_report: stkrec (all CPUs, ${BIG_SECS} s) failed: $(cat "$tmp/rec.err")"
kill -TERM "-$mkpid" 2>/dev/null	# dash's kill takes no "--"
wait $mkpid 2>/dev/null
if [ -s "$tmp/big.stk" ] && [ -s "$tmp/big.data" ]; then
	vs_perf "all CPUs, ${BIG_SECS} s of make -j2 (stkreport, again and again) at 999 Hz" \
		"$tmp/big.stk" "$tmp/big.data"
fi
exit 0
