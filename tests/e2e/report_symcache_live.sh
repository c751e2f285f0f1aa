#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_symcache_live: on a fresh recording of cpuwork (libc's frames, with
# its debuginfo's inline frames where libc6-dbg is installed), stkreport
# prints the same without its symbol cache, with a cold one and with a warm
# one, with and without --lines and --no-inline (report_symcache.sh checks
# the cache itself on fixtures).

. "$(dirname "$0")/lib/harness.sh"
need_files "$REP" "$CW"
need_bpf

C=$tmp/cache
bg "$CW" 600 1
cw=$bg_pid
"$REC" -q -F 999 -p "$cw" -o "$tmp/cw.stk" 2 2>"$tmp/rec.err" || fail "stkrec" "$(cat "$tmp/rec.err")"
stop "$cw"
[ -s "$tmp/cw.stk" ] || finish

for o in "-f folded" "-f folded --lines" "-f folded --no-inline" "-f pprof" "--lines"; do
	# shellcheck disable=SC2086
	"$REP" --symbol-cache none $o "$tmp/cw.stk" >"$tmp/none.out" 2>"$tmp/none.err"
	ok=1
	for k in cold warm; do
		# shellcheck disable=SC2086
		"$REP" --symbol-cache "$C" $o "$tmp/cw.stk" >"$tmp/$k.out" 2>"$tmp/$k.err"
		if ! cmp -s "$tmp/none.out" "$tmp/$k.out" || ! cmp -s "$tmp/none.err" "$tmp/$k.err"; then
			fail "fresh cpuwork capture, $o: $k cache differs"
			diff -u "$tmp/none.out" "$tmp/$k.out" | head -20
			ok=0
			break
		fi
	done
	[ $ok = 1 ] && pass "fresh cpuwork capture, $o: same with and without the cache"
done
grep -q . "$tmp/warm.out" || fail "the report printed nothing"
finish
