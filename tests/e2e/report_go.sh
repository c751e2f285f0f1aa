#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_go: Go frames get inline frames and --lines (issue 26).  Go
# writes no .debug_aranges, and libdwfl takes a file without them to
# cover no address: stkreport found no CU for any Go address, so no
# inlined function and no source line, where perf shows
# "main.mix (inlined)".  tests/unwind/goinline.go, built here with the
# installed go, inlines main.mix into its hot loop main.spin (checked with
# go build -gcflags=-m); stkrec and `perf record --call-graph dwarf`
# record it at the same moments until it has had 3 s of CPU:
#  - main.mix is a frame of its own, under main.spin, in folded output,
#  - each leaf's source-line chain ("goinline.go:19 < goinline.go:29":
#    the inlined line, then its call site) with 5% of perf's samples has
#    the same share in stk's --lines --addresses report as in perf
#    script's srclines, within 4.5 binomial standard deviations (at least
#    2 points); among them at least one inlined chain, so inline frames
#    and lines are both compared;
#  - the samples whose leaf is in an inlined call are the same share in
#    both (perf: a leaf address with two frames, stk: main.mix the leaf);
#  - every name perf gives an inlined frame of main.spin is stk's, main.mix
#    (perf asks binutils' addr2line, which names Go's inlined frames by
#    their caller except at some addresses, so names are compared only
#    where perf marks them "(inlined)");
#  - stk's pprof profile holds main.mix with its file:line as an inline
#    line of main.spin's location, as go tool pprof -lines shows it.
#
# No luck: the workload runs until the test stops it, once it has had 3 s
# of CPU with both recorders sampling; shares are judged against perf's,
# with tolerances from the sample counts.
# Exit 77 (skipped) without BPF (root, BTF), or without go or perf.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

need_cmds go perf
need_bpf

# go build wants a cache; a test environment may have no $HOME.
[ -n "${GOCACHE:-}" ] || [ -n "${HOME:-}" ] || export GOCACHE="$tmp/gocache"
GO=$tmp/goinline
if ! (cd "$tmp" && go build -gcflags=-m -o "$GO" "$top/tests/unwind/goinline.go") \
	>"$tmp/build.log" 2>&1; then
	fail "go build tests/unwind/goinline.go" "$(cat "$tmp/build.log")"
	finish
fi
# Without the inlining there is nothing to prove.
if ! grep -q 'inlining call to mix' "$tmp/build.log"; then
	fail "go did not inline mix into spin" "$(cat "$tmp/build.log")"
	finish
fi

bg "$GO"
gopid=$bg_pid
record_with_perf go "$gopid" || finish

"$REP" -U -f folded "$tmp/go.stk" >"$tmp/go.folded" 2>/dev/null
n=$(awk '/;main\.spin;main\.mix [0-9]+$/ { n += $NF } END { print n + 0 }' "$tmp/go.folded")
check "main.mix is an inline frame under main.spin ($n samples)" [ "$n" -gt 0 ]

# stk's leaves: "count<TAB>chain<TAB>names" per leaf line chain, the
# frames at the leaf's address (its inline chain) leaf first; and the
# total.  A frame reads "%016x name (file:line)".
"$REP" -U -f folded --lines --addresses "$tmp/go.stk" 2>/dev/null | awk '
	{ n = $NF; sub(/ [0-9]+$/, ""); total += n
	  k = split($0, f, ";"); if (k < 2) next
	  a = substr(f[k], 1, 16); chain = ""; names = ""
	  for (i = k; i > 1 && substr(f[i], 1, 16) == a; i--) {
		s = f[i]; line = s; sub(/.*\(/, "", line); sub(/\)$/, "", line)
		nm = substr(s, 18); sub(/ \([^()]*\)$/, "", nm)
		chain = chain (chain == "" ? "" : " < ") line
		names = names (names == "" ? "" : ",") nm }
	  c[chain] += n; nm_of[chain] = names }
	END { for (x in c) print c[x] "\t" x "\t" nm_of[x]; print total "\t(total)" }' \
	>"$tmp/stk.chains"
# perf's, the same from perf script: a sample's first frame outside the
# kernel and the frames after it at the same address; its srcline, on
# the next line, ends "(inlined)" for an inlined frame.
perf script -i "$tmp/go.perf" -F ip,sym,srcline,dso 2>/dev/null | awk '
	function flush() {
		if (inl) { total++; if (chain != "") { c[chain]++; nm_of[chain] = names } }
		inl = 0; chain = ""; names = ""; a = ""; done = 0; want = 0 }
	/^$/ { if (inl) flush(); next }
	/^\t/ { inl = 1
		if (done || $0 ~ /kernel\.kallsyms/) { want = 0; next }
		if (a != "" && $1 != a) { done = 1; want = 0; next }
		a = $1; names = names (names == "" ? "" : ",") $2; want = 1; next }
	want { chain = chain (chain == "" ? "" : " < ") $1
		if ($0 ~ /\(inlined\)$/) names = names "(inlined)"
		want = 0 }
	END { flush(); for (x in c) print c[x] "\t" x "\t" nm_of[x]; print total "\t(total)" }' \
	>"$tmp/perf.chains"
stotal=$(awk -F'\t' '$2 == "(total)" { print $1 }' "$tmp/stk.chains")
ptotal=$(awk -F'\t' '$2 == "(total)" { print $1 }' "$tmp/perf.chains")
if [ "${ptotal:-0}" -lt 500 ] || [ "${stotal:-0}" -lt 500 ]; then
	fail "too few samples to compare (stk ${stotal:-0}, perf ${ptotal:-0})"
	finish
fi

inl=0
awk -F'\t' -v t="$ptotal" '$2 != "(total)" && $1 * 20 >= t' "$tmp/perf.chains" | sort -rn \
	>"$tmp/perf.top"
while IFS='	' read -r pcount chain pnames; do
	scount=$(awk -F'\t' -v k="$chain" '$2 == k { print $1 }' "$tmp/stk.chains")
	case $chain in *' < '*) inl=$((inl + 1)) ;; esac
	agree_ok "leaf lines $chain ($pnames)" "${scount:-0}" "$stotal" "$pcount" "$ptotal"
done <"$tmp/perf.top"
check "an inlined leaf among the chains compared ($inl of $(wc -l <"$tmp/perf.top"))" [ "$inl" -gt 0 ]

sinl=$(awk -F'\t' '$2 ~ / < / { n += $1 } END { print n + 0 }' "$tmp/stk.chains")
pinl=$(awk -F'\t' '$2 ~ / < / { n += $1 } END { print n + 0 }' "$tmp/perf.chains")
agree_ok "leaf in an inlined call" "$sinl" "$stotal" "$pinl" "$ptotal"

# Names: stk's inlined leaves in main.spin are main.mix, and so are
# perf's where it marks them "(inlined)".
snames=$(awk -F'\t' '$2 ~ / < / && $3 ~ /,main\.spin$/ { print $3 }' "$tmp/stk.chains" |
	sort -u | tr '\n' ' ')
check "stk names each inlined leaf in main.spin main.mix ($snames)" \
	[ "$snames" = "main.mix,main.spin " ]
pnames=$(awk -F'\t' '$3 ~ /,main\.spin$/ { k = split($3, f, ",")
	for (i = 1; i <= k; i++) if (f[i] ~ /\(inlined\)$/) print f[i] }' "$tmp/perf.chains" |
	sort -u | tr '\n' ' ')
if [ -z "$pnames" ]; then
	skip "perf's inlined names are stk's" "perf named no inlined frame in main.spin"
else
	check "perf's inlined names are stk's ($pnames)" [ "$pnames" = "main.mix(inlined) " ]
fi

# pprof: main.mix with its line, inlined into main.spin's location.
if "$REP" -U -f pprof -o "$tmp/go.pb.gz" "$tmp/go.stk" 2>"$tmp/pprof.err"; then
	go tool pprof -symbolize=none -lines -top "$tmp/go.pb.gz" >"$tmp/pprof.top" 2>&1
	check "go tool pprof -lines: main.mix at goinline.go:LINE (inline)" \
		grep -Eq ' main\.mix .*goinline\.go:[0-9]+ \(inline\)$' "$tmp/pprof.top"
	check "go tool pprof -lines: main.spin at goinline.go:LINE" \
		grep -Eq ' main\.spin .*goinline\.go:[0-9]+$' "$tmp/pprof.top"
else
	fail "stkreport -f pprof" "$(cat "$tmp/pprof.err")"
fi

finish
