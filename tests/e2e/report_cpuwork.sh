#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: record samples/cpuwork with stkrec (BPF, root) while perf
# records the same process at the same moments, report folded, and check
# that
#  - every sample in a leaf has the leaf's whole call chain root..leaf,
#  - the leaves' shares match cpuwork's 6:3:1 split (leaves with the same
#    body called 6, 3 and 1 times a round: 60/30/10 on any CPU),
#  - and match perf's (perf script folded here in awk);
# each within 4.5 binomial standard deviations of the sample counts (at
# least 2 points), the check saying count, share and tolerance;
# then "another machine": the binary deleted and kept only in a debug dir
# under its build-id resolves with --debug-dir (every frame in its
# mapping: none prints as [cw+0xOFFSET] with --addresses), gives [unknown] and names
# the missing build-id without, and a rebuilt binary at the same path is
# refused for its build-id.
#
# No luck: cpuwork runs until the test stops it; stkrec (its -o file is
# its "sampling" signal) and perf (started with its events disabled,
# enabled through --control, which acknowledges) both sample before the
# measured stretch starts, and that stretch ends once cpuwork has used
# 4 s of CPU (about 4000 samples at 999 Hz), however long a busy machine
# takes to give it them.  Then cpuwork is stopped and both recorders end
# on their own (-p: until the process is gone).  So it needs no machine
# of its own.
#
# Exit 77 (skipped) when BPF cannot be used here (not root, or no BTF), or
# without perf (linux-perf) for the comparison.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# share LEAF FOLDED: "samples-in-LEAF total-leaf-samples samples-with-full-chain"
# counting lines whose last frame is a leaf_* function.
leaf_stats() {
	awk -v leaf="$1" -v chain="$2" '
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		if (f[k] !~ /^leaf_[abc]$/) next
		total += n
		if (f[k] != leaf) next
		in_leaf += n
		if (index(line ";", chain ";") > 0) full += n
	}
	END { printf "%d %d %d\n", in_leaf, total, full }' "$3"
}

# perf script -> folded: comm;root..leaf count, one line per sample.
perf_fold() {
	awk '
	/^[^ \t]/ { comm = $1; n = 0; next }
	/^[ \t]+[0-9a-f]+ / { n++; s = $2; for (i = 3; i <= NF; i++) if ($i !~ /^\(/) s = s " " $i; sym[n] = s; next }
	/^$/ {
		if (n) { line = comm; for (i = n; i >= 1; i--) line = line ";" sym[i]; print line " 1" }
		n = 0
	}
	END { if (n) { line = comm; for (i = n; i >= 1; i--) line = line ";" sym[i]; print line " 1" } }'
}

# ---- record the same stretch with stkrec and perf -------------------------
# cpuwork's SECONDS only bounds it should the test die unkilled.
bg "$CW" 3600 >/dev/null
cwpid=$bg_pid
bg "$REC" -q -F 999 -p "$cwpid" -o "$tmp/cw.stk" 2>"$tmp/rec.err"
recpid=$bg_pid
if ! wait_sampling "$tmp/cw.stk" "$recpid"; then
	fail "stkrec -p cpuwork" "$(cat "$tmp/rec.err")"
	finish
fi
perfpid=
if command -v perf >/dev/null 2>&1; then
	# Both FIFOs held open read-write here: neither open blocks, and the
	# acknowledgement is read once perf has enabled its events.
	mkfifo "$tmp/perf.ctl" "$tmp/perf.ack"
	exec 8<>"$tmp/perf.ctl" 9<>"$tmp/perf.ack"
	bg perf record -q -F 999 -e cpu-clock -g -p "$cwpid" -o "$tmp/perf.data" \
		-D -1 --control "fifo:$tmp/perf.ctl,$tmp/perf.ack" >"$tmp/perf.log" 2>&1
	perfpid=$bg_pid
	echo enable >&8
	# The bound only stops a perf that died without acknowledging.
	if ! timeout 120 sh -c 'read a && [ "$a" = ack ]' <&9; then
		fail "perf record --control: no ack" "$(cat "$tmp/perf.log")"
		finish
	fi
fi
# 4 s of cpuwork's CPU (400 clock ticks at USER_HZ 100), both sampling.
t0=$(cpu_ticks "$cwpid")
ran_enough() { [ "$(cpu_ticks "$cwpid")" -ge $((t0 + 400)) ]; }
if ! wait_until ran_enough; then
	fail "cpuwork did not get 4 s of CPU in 120 s"
	finish
fi
stop "$cwpid"
wait "$recpid"
rc=$?
check "stkrec -p cpuwork: exit 0 once cpuwork is gone (got $rc: $(cat "$tmp/rec.err"))" [ $rc -eq 0 ]
if [ -n "$perfpid" ]; then
	wait "$perfpid"
	exec 8>&- 9>&-
fi

if "$REP" -f folded "$tmp/cw.stk" >"$tmp/stk.folded" 2>"$tmp/rep.err"; then
	pass "stkreport -f folded on a real capture"
else
	fail "stkreport -f folded: $(cat "$tmp/rep.err")"
fi
grep -q "100.0% of" "$tmp/rep.err" && pass "summary: every sample fully symbolized" ||
	fail "summary: $(cat "$tmp/rep.err")"

# Every sample of a leaf has the whole chain root..leaf (thread 1 starts at main).
for spec in "leaf_a main;run;work_a;leaf_a 60" "leaf_b main;run;work_b;mid_b;leaf_b 30" \
	    "leaf_c main;run;work_c;leaf_c 10"; do
	set -- $spec
	leaf=$1 chain=$2 want=$3
	set -- $(leaf_stats "$leaf" "$chain" "$tmp/stk.folded")
	in_leaf=$1 total=$2 full=$3
	if [ "$in_leaf" -gt 0 ] && [ "$full" = "$in_leaf" ]; then
		pass "$leaf: all $in_leaf samples have the chain $chain"
	else
		fail "$leaf: $full of $in_leaf samples have the chain $chain"
	fi
	eval "stk_$leaf=\"$in_leaf $total\""
	share_ok "$leaf: share of the leaves' samples (cpuwork's 6:3:1 split)" \
		"$in_leaf" "$total" "$want"
done

# ---- against perf ------------------------------------------------------
if [ -z "$perfpid" ]; then
	skip "leaf shares against perf's" "no perf (make deps)"
elif [ -s "$tmp/perf.data" ]; then
	perf script -i "$tmp/perf.data" -F comm,ip,sym 2>/dev/null | perf_fold >"$tmp/perf.folded"
	for leaf in leaf_a leaf_b leaf_c; do
		set -- $(leaf_stats "$leaf" "" "$tmp/perf.folded")
		eval "s=\$stk_$leaf"
		agree_ok "$leaf: share of the leaves' samples" $s "$1" "$2"
	done
else
	fail "perf record produced nothing: $(cat "$tmp/perf.log" 2>/dev/null)"
fi

# ---- another machine ---------------------------------------------------
# A private copy of the binary, recorded, then moved into a debug dir under
# its build-id: the recorded path no longer exists.  Without embedded
# symbols, so that the files found are all there is (report_embed.sh
# checks what embedded symbols do).
cp "$CW" "$tmp/cw"
if ! "$REC" -q -F 199 --embed-symbols=none -o "$tmp/moved.stk" -- "$tmp/cw" 2 >/dev/null 2>"$tmp/rec2.err"; then
	fail "stkrec -- cw" "$(cat "$tmp/rec2.err")"
	finish
fi
bid=$(readelf -n "$tmp/cw" | awk '/Build ID:/ { print $3 }')
mkdir -p "$tmp/dbg/.build-id/$(echo "$bid" | cut -c1-2)"
mv "$tmp/cw" "$tmp/dbg/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-)"

# Every frame in the moved binary's mapping must resolve: with --addresses
# an unresolved one prints as [cw+0xOFFSET].  Frames elsewhere (a sample in
# ld.so's start-up code without a symbol) are not what this checks.
# (--addresses puts every frame's address first, "%016x name": names only.)
"$REP" -f folded --addresses --debug-dir "$tmp/dbg" "$tmp/moved.stk" 2>"$tmp/moved.err" |
	sed 's/;[0-9a-f]\{16\} /;/g' >"$tmp/moved.folded"
if grep -q ';main;run;work_a;leaf_a ' "$tmp/moved.folded" &&
   ! grep -q '\[cw+0x' "$tmp/moved.folded"; then
	pass "--debug-dir with the binary under .build-id resolves every frame of the binary"
else
	fail "--debug-dir: $(grep -m3 '\[cw+0x' "$tmp/moved.folded") / $(cat "$tmp/moved.err")"
fi
"$REP" -f folded --addresses "$tmp/moved.stk" >"$tmp/nodbg.folded" 2>/dev/null
if grep -q '\[cw+0x' "$tmp/nodbg.folded"; then
	pass "without --debug-dir the same frames print as [cw+0xOFFSET] (the check above can fail)"
else
	fail "without --debug-dir no [cw+0x...] frame: $(head -3 "$tmp/nodbg.folded")"
fi

"$REP" -f folded "$tmp/moved.stk" >"$tmp/gone.folded" 2>"$tmp/gone.err"
if grep -q '\[unknown\]' "$tmp/gone.folded" && ! grep -q 'leaf_a' "$tmp/gone.folded" &&
   grep -q "$tmp/cw (build-id $bid: no file found)" "$tmp/gone.err"; then
	pass "binary gone: [unknown] frames and the summary names build-id $bid"
else
	fail "binary gone: $(head -3 "$tmp/gone.folded") / $(cat "$tmp/gone.err")"
fi

# A rebuilt binary (another build-id) at the recorded path is not used.
cp "$O/tests/fixtures/root/fx/fx_pie" "$tmp/cw" 2>/dev/null || cp /bin/true "$tmp/cw"
"$REP" -f folded "$tmp/moved.stk" >"$tmp/rebuilt.folded" 2>"$tmp/rebuilt.err"
if grep -q "build-id $bid: build-id mismatch" "$tmp/rebuilt.err" &&
   ! grep -Eq 'fx_|leaf_a' "$tmp/rebuilt.folded"; then
	pass "rebuilt binary at the recorded path: build-id mismatch, not used"
else
	fail "rebuilt binary: $(head -3 "$tmp/rebuilt.folded") / $(cat "$tmp/rebuilt.err")"
fi

finish
