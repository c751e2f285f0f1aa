#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_plugins: a plugin reload, recorded and reported (issue #23).
# pluginwork (tests/tools/pluginwork.c) loads five plugins in turn with
# dlopen(), each at the address the one before it had (the test checks
# that it is so), burns the same CPU time in each (its own pluginK_spin,
# the same code at the same addresses: the same stacks) and unloads it
# with dlclose() before loading the next.  Rows of one key from different
# flush intervals then name different functions: each interval's samples
# must resolve in the maps in force in it (SPEC.md, MAPS), so each plugin
# gets its share of the samples in plugin code, 1/5 within a tolerance
# from the sample count; and a merge of the capture with itself (which
# re-interns stacks by content) doubles every plugin's samples.
#
# SPEC's rule resolves a row in the maps at the end of its interval: a
# plugin swapped within one flush interval cannot be told from the next.
# The test keeps every swap across a flush: before loading plugin K+1 it
# waits until the capture holds a chunk whose interval ended after
# plugin K was unloaded (its stkdump CHUNK line), whatever the machine's
# speed.
#
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

PW=$O/tests/tools/pluginwork
PLUGDIR=$O/tests/tools/plugins
N=5
MS=400		# CPU time per plugin: ~200 samples at 499 Hz
need_files "$PW" "$PLUGDIR/libplugin1.so" "$PLUGDIR/libplugin$N.so"

mkdir "$tmp/p"
cp "$PLUGDIR"/libplugin*.so "$tmp/p/"
bg "$REC" -q -F 499 -o "$tmp/p.stk" -- "$PW" "$tmp/p" $N $MS > "$tmp/pw.out" 2> "$tmp/rec.err"
rec=$bg_pid
if ! wait_sampling "$tmp/p.stk" $rec; then
	fail "stkrec -- pluginwork" "$(cat "$tmp/rec.err")"
	finish
fi

# flushed_after T: the capture holds a chunk whose interval ends after T
# (CLOCK_MONOTONIC ns): every sample taken before T is in it or earlier.
flushed_after() {
	"$DUMP" "$tmp/p.stk" 2> /dev/null |
		awk -F'\t' -v t="$1" '$1 == "CHUNK" && $5 + 0 > t + 0 { f = 1 } END { exit !f }'
}
# closed_at K: the CLOCK_MONOTONIC time pluginwork unloaded plugin K.
closed_at() {
	awk -v k="$1" '$1 == "closed" && $2 == k { print $3 }' "$tmp/pw.out"
}
has_closed() {
	[ -n "$(closed_at "$1")" ] || ! kill -0 $rec 2> /dev/null
}

ok=1
k=1
while [ $k -le $N ]; do
	touch "$tmp/p/go.$k"
	wait_until has_closed $k && [ -n "$(closed_at $k)" ] || { ok=0; break; }
	[ $k -lt $N ] && { wait_until flushed_after "$(closed_at $k)" || { ok=0; break; }; }
	k=$((k + 1))
done
wait $rec
rc=$?
if [ $ok = 0 ] || [ $rc -ne 0 ]; then
	fail "stkrec -F 499 -- pluginwork: exit $rc, every plugin run" \
		"$(cat "$tmp/rec.err" "$tmp/pw.out")"
	finish
fi
pass "stkrec -F 499 -- pluginwork: exit 0, $N plugins run"

addrs=$(awk '$1 == "plugin" { print $3 }' "$tmp/pw.out" | sort -u)
check "the loader put every plugin's function at one address ($addrs)" \
	test "$(echo "$addrs" | wc -l)" -eq 1 -a "$(awk '$1 == "plugin"' "$tmp/pw.out" | wc -l)" -eq $N

# per_plugin FOLDED: "K COUNT" for each plugin, the samples whose stack
# holds pluginK_spin.
per_plugin() {
	awk -v n=$N '{ c = $NF; sub(/ [0-9]+$/, "")
		       m = split($0, f, ";")
		       for (i = 1; i <= m; i++)
			       if (f[i] ~ /^plugin[0-9]_spin$/) { s[substr(f[i], 7, 1)] += c; break } }
		     END { for (k = 1; k <= n; k++) printf "%d %.0f\n", k, s[k] }' "$1"
}
# shares FOLDED WHAT: each plugin 1/N of the plugin samples.
shares() {
	per_plugin "$1" > "$tmp/per"
	_t=$(awk '{ t += $2 } END { printf "%.0f", t }' "$tmp/per")
	while read -r _k _c; do
		share_ok "$2: plugin${_k}_spin's share of the samples in plugin code" \
			"$_c" "$_t" $((100 / N))
	done < "$tmp/per"
}

"$REP" -f folded "$tmp/p.stk" > "$tmp/p.folded" 2> "$tmp/rep.err" ||
	fail "stkreport -f folded" "$(cat "$tmp/rep.err")"
shares "$tmp/p.folded" "report"
check "no frame of pluginwork is [unknown]" \
	sh -c "! grep '^pluginwork;' '$tmp/p.folded' | grep -q 'unknown'"

# merge(A, A): stacks re-interned by content, rows of both copies in one
# segment; every plugin's samples double.
"$REP" merge -o "$tmp/pp.stk" "$tmp/p.stk" "$tmp/p.stk" > /dev/null 2> "$tmp/merge.err" ||
	fail "stkreport merge" "$(cat "$tmp/merge.err")"
"$REP" -f folded "$tmp/pp.stk" > "$tmp/pp.folded" 2> /dev/null
per_plugin "$tmp/p.folded" | awk '{ printf "%d %.0f\n", $1, 2 * $2 }' > "$tmp/want"
per_plugin "$tmp/pp.folded" > "$tmp/got"
if cmp -s "$tmp/want" "$tmp/got"; then
	pass "merge(A, A): every plugin's samples doubled ($(tr '\n' ' ' < "$tmp/got"))"
else
	fail "merge(A, A): every plugin's samples doubled" \
		"want $(tr '\n' ' ' < "$tmp/want"), got $(tr '\n' ' ' < "$tmp/got")"
fi
finish
