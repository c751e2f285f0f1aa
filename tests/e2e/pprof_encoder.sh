#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The pprof builder (report/output/pprof.c) read back by real decoders: protoc
# with pprof's own profile.proto (from Debian's golang-github-google-pprof-dev,
# read where the package installed it, never copied here) and go tool pprof.
# Profiles come from tests/tools/mkpprof.
#
# STK_GOLDEN_UPDATE=1 rewrites tests/golden/pprof_basic.* from this run's
# output instead of comparing (review the diff before committing it).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/pprof.sh"
MKPPROF=$O/tests/tools/mkpprof
need_files "$MKPPROF"
need_pprof_tools

# ---- the fixture profile ----------------------------------------------------
if ! "$MKPPROF" basic "$tmp/basic.pb.gz"; then
	fail "mkpprof writes the basic fixture"
	finish
fi

if gzip -t "$tmp/basic.pb.gz" 2>"$tmp/err"; then
	pass "output_is_a_valid_gzip_stream"
else
	fail "output_is_a_valid_gzip_stream" "$(cat "$tmp/err")"
fi

if decode "$tmp/basic.pb.gz" >"$tmp/basic.txt" 2>"$tmp/err" && golden pprof_basic.txt "$tmp/basic.txt"; then
	pass "protoc_decodes_fixture_as_golden_text"
else
	fail "protoc_decodes_fixture_as_golden_text" "$(head -n 3 "$tmp/err")"
fi

# profile.proto: string_table[0] must always be "".
if [ "$(grep -m 1 '^string_table:' "$tmp/basic.txt")" = 'string_table: ""' ]; then
	pass "string_table_0_is_empty"
else
	fail "string_table_0_is_empty" "$(grep -m 1 '^string_table:' "$tmp/basic.txt")"
fi

# The same calls give the same bytes (ids in first-use order, gzip mtime 0).
if "$MKPPROF" basic "$tmp/again.pb.gz" && cmp -s "$tmp/basic.pb.gz" "$tmp/again.pb.gz"; then
	pass "same_profile_gives_identical_bytes"
else
	fail "same_profile_gives_identical_bytes"
fi

# go tool pprof's own view: samples with labels, locations with inline lines,
# mappings with build-ids and has_* flags.
if gopprof -raw "$tmp/basic.pb.gz" >"$tmp/basic.raw" 2>"$tmp/err" &&
   golden pprof_basic.raw "$tmp/basic.raw"; then
	pass "go_pprof_raw_reads_fixture_as_golden"
else
	fail "go_pprof_raw_reads_fixture_as_golden" "$(head -n 3 "$tmp/err")"
fi

# -top by sample count: each leaf's flat share is what the fixture gave it
# (60, 25, 10 and 5 of 100 samples); the inline frame is shown as such.
if gopprof -top -sample_index=samples "$tmp/basic.pb.gz" >"$tmp/top" 2>"$tmp/err"; then
	awk '$1 ~ /^[0-9]+$/ && $1 > 0 { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; print $1, n }' \
		"$tmp/top" | sort >"$tmp/top.flat"
	printf '%s\n' '10 asm_sysvec_apic_timer_interrupt' '25 compute' '5 [libc.so.6]' \
		'60 square (inline)' | sort >"$tmp/top.want"
	if diff -u "$tmp/top.want" "$tmp/top.flat" >"$tmp/diff" &&
	   grep -q 'Total samples = 100 *$' "$tmp/top"; then
		pass "go_pprof_top_flat_counts_match_fixture"
	else
		cat "$tmp/diff" "$tmp/top"
		fail "go_pprof_top_flat_counts_match_fixture"
	fi
else
	fail "go_pprof_top_flat_counts_match_fixture" "$(head -n 3 "$tmp/err")"
fi

# cpu/nanoseconds is the default (last) sample type: 100 samples at 99 Hz.
if gopprof -top "$tmp/basic.pb.gz" 2>/dev/null | grep -q '^Type: cpu$' &&
   gopprof -top "$tmp/basic.pb.gz" 2>/dev/null | grep -q 'Total samples = 1010.10ms'; then
	pass "go_pprof_top_defaults_to_cpu_nanoseconds"
else
	fail "go_pprof_top_defaults_to_cpu_nanoseconds"
fi

# ---- property: totals survive both decoders -----------------------------------
# Random stacks and values; the totals mkpprof wrote must be the sums that
# go tool pprof -raw and protoc read back, per sample type.  protoc sees
# every sample; go pprof merges samples with equal stacks and labels (short
# random stacks repeat), so only its totals are compared.
for seed in 1 7 424242; do
	name="random_${seed}_totals_equal_in_go_pprof_and_protoc"
	if ! want=$("$MKPPROF" random 3000 "$seed" "$tmp/r.pb.gz"); then
		fail "$name" "mkpprof failed"
		continue
	fi
	got_go=$(gopprof -raw "$tmp/r.pb.gz" 2>"$tmp/err" | awk '
		/^Samples:/ { in_s = 1; next }
		/^Locations/ { in_s = 0 }
		in_s && $2 ~ /^[0-9]+:$/ { a += $1; sub(":", "", $2); b += $2 }
		END { printf "total %.0f %.0f\n", a, b }')
	got_pb=$(decode "$tmp/r.pb.gz" 2>>"$tmp/err" | awk '
		/^sample \{/ { k = 0; n++ }
		/^  value:/ { if (k++ == 0) a += $2; else b += $2 }
		END { printf "total %.0f %.0f n=%d\n", a, b, n }')
	if [ "$got_go" = "$want" ] && [ "$got_pb" = "$want n=3000" ]; then
		pass "$name"
	else
		fail "$name" "wrote '$want' in 3000 samples, go pprof '$got_go', protoc '$got_pb' $(head -n 2 "$tmp/err")"
	fi
done

finish
