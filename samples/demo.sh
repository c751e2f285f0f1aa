#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make demo: record samples/cpuwork for 5 seconds with stkrec, then show
# the capture: stkreport's folded report (cpuwork's call tree with its
# 60/30/10 split), or stkreport info if no report can be made.  The
# capture is kept as $O/demo.stk, to try the other views on.
# Needs root (BPF).  O= names the build directory (default build).

O=${O:-build}
REC=$O/stkrec
REP=$O/stkreport
CW=$O/samples/cpuwork

if [ "$(id -u)" != 0 ]; then
	echo "demo: stkrec needs root (BPF); run 'sudo make demo'" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
# Kept: the path printed below must still be there afterwards.
out=$O/demo.stk
rm -f "$out"

echo "== stkrec -F 99 -o $out -- $CW 5"
"$REC" -F 99 -o "$out" -- "$CW" 5 || exit 1
echo
if "$REP" -f folded "$out" > "$tmp/folded" 2> "$tmp/report.err"; then
	echo "== stkreport -f folded demo.stk   (cpuwork: leaf_a 60%, leaf_b 30%, leaf_c 10%)"
	sort -t' ' -k2 -nr "$tmp/folded" | head -20
	awk '{ n = $NF; t += n; if (match($0, /leaf_[abc]/)) s[substr($0, RSTART, 6)] += n }
	END { if (t) printf "shares: leaf_a %.0f%%, leaf_b %.0f%%, leaf_c %.0f%% of %d samples\n",
		100 * s["leaf_a"] / t, 100 * s["leaf_b"] / t, 100 * s["leaf_c"] / t, t }' "$tmp/folded"
else
	echo "== stkreport info demo.stk   (no symbolized report: $(head -1 "$tmp/report.err"))"
	"$REP" info "$out"
fi
echo "the capture stays in $out: try $REP -f top $out, or --callers leaf_a"
