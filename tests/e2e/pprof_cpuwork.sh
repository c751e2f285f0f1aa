#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport -f pprof on a real recording: stkrec (BPF, root) records
# samples/cpuwork with two threads; the profile must read back in protoc
# and go tool pprof with the same function shares as the folded report of
# the same capture, cpuwork's known leaf split (60/30/10 by call counts)
# within share_ok's tolerance (4.5 binomial standard deviations of the
# leaves' sample count, at least 2 points), cpuwork as the main binary
# with its build-id, the recorded period and times, and the process's
# labels.
#
# cpuwork runs a fixed amount of work (-n ROUNDS per thread) as -- CMD:
# recorded from its first instruction, and its sample count comes from
# the CPU time that work takes, not from how much of the machine a fixed
# wall time gets it (next to other tests its ~600 samples of 3 s fell to
# ~60, once too few for fixed +-5 point bounds).
#
# Exit 77 (skip) only when BPF cannot be used here (not root, no BTF) or
# the pprof readers are not installed.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/pprof.sh"
need_pprof_tools

HZ=499
# --unwind=fp: the mapping flags below say every cpuwork location has
# lines, and .eh_frame unwinding (the default) goes on to cpuwork's _start,
# which is crt1.o assembly without any.
# 1500 rounds of ~1 ms of CPU per thread: ~750 samples each at 499 Hz, so
# a leaf share's tolerance is ~5 points.
if ! "$REC" -q --unwind=fp -F $HZ -o "$tmp/cw.stk" -- "$CW" -n 1500 2 >/dev/null 2>"$tmp/rec.err"; then
	fail "stkrec -- cpuwork -n 1500 2" "$(cat "$tmp/rec.err")"
	finish
fi
P=$tmp/cw.pb.gz
if "$REP" -f pprof -o "$P" "$tmp/cw.stk" 2>"$tmp/rep.err" && gzip -t "$P" &&
   "$REP" -f folded "$tmp/cw.stk" >"$tmp/cw.folded" 2>>"$tmp/rep.err"; then
	pass "stkreport writes pprof and folded from one capture"
else
	fail "stkreport: $(cat "$tmp/rep.err")"
	finish
fi
if decode "$P" >"$tmp/cw.txt" 2>"$tmp/err" && grep -q '^string_table: ""$' "$tmp/cw.txt"; then
	pass "protoc decodes the profile"
else
	fail "protoc decodes the profile: $(head -n 3 "$tmp/err")"
fi
gopprof -raw "$P" >"$tmp/cw.raw" 2>"$tmp/err"
check "go tool pprof -raw reads the profile" grep -q '^Mappings' "$tmp/cw.raw"

# The shares of every named function, flat and cumulative, are the folded
# report's (within rounding of the printed percentages).
top_shares samples "$P" >"$tmp/top.pp"
folded_shares 0 "$tmp/cw.folded" >"$tmp/top.fo"
if [ "$(grep -c . "$tmp/top.pp")" -ge 8 ] && same_shares "$tmp/top.fo" "$tmp/top.pp"; then
	pass "go tool pprof -top shares equal the folded shares ($(grep -c . "$tmp/top.pp") functions)"
else
	fail "go tool pprof -top shares differ from folded"
fi

# cpuwork's known split, read from pprof: leaf_a, leaf_b, leaf_c have
# identical bodies called 6, 3 and 1 times a round, so 60/30/10 of the
# leaves' samples.  The counts are pprof's flat sample counts (-top).
# shellcheck disable=SC2046 # four numbers, split on purpose
set -- $(gopprof -top -sample_index=samples -nodecount=100000 -nodefraction=0 -edgefraction=0 "$P" 2>/dev/null |
	awk '/^ *flat +flat%/ { on = 1; next }
	on && NF >= 6 && $6 ~ /^leaf_[abc]$/ { f[$6] = $1; t += $1 }
	END { printf "%d %d %d %d\n", f["leaf_a"], f["leaf_b"], f["leaf_c"], t }')
share_ok "pprof: leaf_a of the leaves' samples" "$1" "$4" 60
share_ok "pprof: leaf_b of the leaves' samples" "$2" "$4" 30
share_ok "pprof: leaf_c of the leaves' samples" "$3" "$4" 10

# Mapping 1 is cpuwork, with its build-id and full symbol flags.
bid=$(readelf -n "$CW" | awk '/Build ID:/ { print $3 }')
if grep -q "^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $CW $bid \[FN\]\[FL\]\[LN\]\[IN\]$" "$tmp/cw.raw"; then
	pass "mapping 1 is cpuwork with build-id $bid, functions, files, lines and inlines"
else
	fail "mapping 1: $(grep '^1: ' "$tmp/cw.raw")"
fi
# Kernel frames (folded -a marks them, if any were sampled) are in a
# [kernel.kallsyms] mapping with the recorded build-id.
kbid=$("$DUMP" "$tmp/cw.stk" | awk -F'\t' '$1 == "KBID" && $2 == "[kernel.kallsyms]" { print $5 }')
"$REP" -f folded -a "$tmp/cw.stk" 2>/dev/null | grep -q '_\[k\]' && kframes=1 || kframes=0
if grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x0 \[kernel.kallsyms\] $kbid (\[FN\])?$" "$tmp/cw.raw"; then
	kmap=1
else
	kmap=0
fi
if [ "$kframes" = "$kmap" ]; then
	pass "kernel frames: $kframes, [kernel.kallsyms] mapping with build-id $kbid: $kmap"
else
	fail "kernel frames: $kframes, but kernel mapping: $(grep 'kernel' "$tmp/cw.raw" | head -3)"
fi

# Period 1e9 / -F, every cpu value count * period; times from the capture.
period=$((1000000000 / HZ))
wall=$(meta_of "$tmp/cw.stk" wall_start_ns)
dur=$(meta_of "$tmp/cw.stk" duration_ns)
if grep -q "^Period: $period$" "$tmp/cw.raw" && grep -q "^time_nanos: $wall$" "$tmp/cw.txt" &&
   grep -q "^duration_nanos: $dur$" "$tmp/cw.txt" &&
   awk -v p=$period '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	on && $2 ~ /^[0-9]+:$/ { n++; sub(":", "", $2); if ($2 != $1 * p) bad++ }
	END { exit !(n > 0 && !bad) }' "$tmp/cw.raw"; then
	pass "period $period ns, cpu = count * period, start $wall and duration $dur from the capture"
else
	fail "period/times: $(grep '^Period' "$tmp/cw.raw"), want $period; time $wall, duration $dur"
fi

# Labels: cpuwork's pid with all its samples, its two threads, its comm.
# A sample taken between the fork and the exec carries the recorder's
# comm (stkrec): every sample is cpuwork's or that one's.
tgid=$(cpuwork_tgid "$tmp/cw.stk")
total=$(samples "$tmp/cw.stk" "$tgid")
gopprof -tags -sample_index=samples "$P" 2>/dev/null | awk '
	/^ *[a-z_]+: Total/ { key = $1; sub(/:$/, "", key); next }
	NF >= 3 { v = $1; sub(/\.0$/, "", v); print key, $NF, v }' >"$tmp/tags"
comm_ok() {
	awk -v total="$total" '
	$1 == "comm" && $2 == "cpuwork" { cw = $3; sum += $3; next }
	$1 == "comm" && $2 == "stkrec" && $3 <= 2 { sum += $3; next }
	$1 == "comm" { bad = 1 }
	END { exit !(!bad && cw > 0 && sum == total) }' "$tmp/tags"
}
if grep -q "^pid $tgid $total$" "$tmp/tags" && [ "$(grep -c '^tid ' "$tmp/tags")" = 2 ] &&
   comm_ok; then
	pass "labels: pid $tgid with its $total samples, 2 tids, comm cpuwork"
else
	fail "labels: want pid $tgid with $total samples: $(cat "$tmp/tags")"
fi

finish
