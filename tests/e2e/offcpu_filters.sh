#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# offcpu_filters: each filter of stkrec offcpu/offwake removes what it
# should, proven against an unfiltered recording of the same 2 seconds
# (all recordings run at once over two samples/offwork processes A and B):
# something present without the filter must be absent with it, and what
# the filter keeps must still be there.
#   -p A          B's rows vanish, A's stay
#   -t WAITER     A's writer thread vanishes, the waiter stays
#   -u / -k       kernel threads / user processes vanish
#   -m 1000       blocks under 1 ms (offwork's 100 us writer_nap) vanish
#   -M 5000       blocks over 5 ms (offwork's 10 ms waits) vanish
#   --state 2     offwork's interruptible sleeps vanish (not state 2)
#   -U / -K       kernel / user stacks are not taken (-ENOENT)
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
. "$top/tests/e2e/lib/offcpu.sh"

# Both run until the test ends, however long twelve setups take on a
# loaded machine: DURATION counts from when each recording starts sampling.
start_offwork
a_pid=$ow_pid a_waiter=$ow_waiter a_writer=$ow_writer
start_offwork
b_pid=$ow_pid

# rec NAME MODE ARGS...: record in the background for 2 s into $tmp/NAME.stk.
pids=
rec() {
	n=$1
	shift
	bg "$REC" "$@" -q -o "$tmp/$n.stk" 2 > "$tmp/$n.out" 2>&1
	pids="$pids $bg_pid"
}
rec all offcpu
rec wall offwake
rec p offcpu -p "$a_pid"
rec t offwake -t "$a_waiter"
rec u offcpu -u
rec k offcpu -k
rec m offcpu -p "$a_pid" -m 1000
rec M offcpu -p "$a_pid" -M 5000
rec s offcpu -p "$a_pid" --state 2
rec s1 offcpu -p "$a_pid" --state 1
rec U offwake -p "$a_pid" -U
rec K offwake -p "$a_pid" -K
failed_rec=
for p in $pids; do
	wait "$p" || failed_rec="$failed_rec $p"
done
check "12 concurrent recordings exit 0 ($(cat "$tmp"/*.out))" [ -z "$failed_rec" ]

# ---- -p -------------------------------------------------------------------
check "unfiltered: A ($(rows_of "$tmp/all.stk" 2 "$a_pid") rows) and B ($(rows_of "$tmp/all.stk" 2 "$b_pid") rows) present" \
	[ "$(rows_of "$tmp/all.stk" 2 "$a_pid")" -gt 0 -a "$(rows_of "$tmp/all.stk" 2 "$b_pid")" -gt 0 ]
others=$(offc "$tmp/p.stk" | awk -F'\t' -v a="$a_pid" '$2 != a' | wc -l)
check "-p A: A present, B absent, no other process ($others rows)" \
	[ "$(rows_of "$tmp/p.stk" 2 "$a_pid")" -gt 0 -a "$(rows_of "$tmp/p.stk" 2 "$b_pid")" -eq 0 -a "$others" -eq 0 ]

# ---- -t -------------------------------------------------------------------
check "unfiltered offwake: A's writer thread $a_writer present" [ "$(rows_of "$tmp/wall.stk" 3 "$a_writer")" -gt 0 ]
others=$(offc "$tmp/t.stk" | awk -F'\t' -v t="$a_waiter" '$3 != t' | wc -l)
check "-t WAITER: the waiter present, the writer absent, no other thread ($others rows)" \
	[ "$(rows_of "$tmp/t.stk" 3 "$a_waiter")" -gt 0 -a "$(rows_of "$tmp/t.stk" 3 "$a_writer")" -eq 0 -a "$others" -eq 0 ]
# The writer is still there as the waiter's waker: -t filters targets.
check "-t WAITER: the writer is still its waker" [ "$(rows_of "$tmp/t.stk" 8 "$a_writer")" -gt 0 ]

# ---- -u / -k --------------------------------------------------------------
set -- $(thread_kinds "$tmp/all.stk")
check "unfiltered: kernel threads ($1) and user processes ($2) present" [ "$1" -gt 0 -a "$2" -gt 0 ]
set -- $(thread_kinds "$tmp/u.stk")
check "-u: no kernel thread ($1), user processes ($2)" [ "$1" -eq 0 -a "$2" -gt 0 ]
set -- $(thread_kinds "$tmp/k.stk")
check "-k: kernel threads ($1), no user process ($2)" [ "$1" -gt 0 -a "$2" -eq 0 ]

# ---- -m / -M --------------------------------------------------------------
# A row holds count episodes of blocked_ns in total, each within [min, max],
# so min <= blocked_ns / count <= max: a row's average bounds the filter.
# short FILE: rows of A averaging under 1 ms; long: over 5 ms.
short() {
	offc "$1" | awk -F'\t' -v a="$a_pid" '$2 == a && $13 < $12 * 1000000 { n++ } END { print n + 0 }'
}
long() {
	offc "$1" | awk -F'\t' -v a="$a_pid" '$2 == a && $13 > $12 * 5001000 { n++ } END { print n + 0 }'
}
"$REP" -f folded --pid "$a_pid" "$tmp/all.stk" > "$tmp/all.folded" 2>/dev/null
"$REP" -f folded "$tmp/m.stk" > "$tmp/m.folded" 2>/dev/null
"$REP" -f folded "$tmp/M.stk" > "$tmp/M.folded" 2>/dev/null
check "unfiltered: A has sub-ms episodes ($(short "$tmp/all.stk") rows, writer_nap) and >5 ms ones ($(long "$tmp/all.stk") rows)" \
	[ "$(short "$tmp/all.stk")" -gt 0 -a "$(long "$tmp/all.stk")" -gt 0 ]
check "unfiltered: writer_nap is in the folded report" grep -q ';writer_nap;' "$tmp/all.folded"
# Every episode kept by -m 1000 lasted >= 1 ms, so every row averages that
# much; by -M 5000 < 5.001 ms (whole microseconds are compared).  Names are
# checked by time, not presence: on a loaded machine a 100 us nap can last
# over 1 ms, and a 10 ms nanosleep can be preempted on its way out or
# woken early (do_nanosleep then sleeps again), each a short episode.
# us_of FILE REGEX: microseconds of FILE's folded lines matching REGEX.
us_of() {
	awk -v re="$2" '$0 ~ re { n += $NF } END { printf "%.0f\n", n + 0 }' "$1"
}
all_sleep=$(us_of "$tmp/all.folded" ';writer_sleep;')
lo=$(offc "$tmp/m.stk" | awk -F'\t' '$13 < $12 * 1000000' | wc -l)
check "-m 1000: no row averages under 1 ms ($lo rows do); writer_sleep and waiter_block kept" \
	eval '[ "$lo" -eq 0 ] && grep -q ";writer_sleep;" "$tmp/m.folded" && grep -q ";waiter_block;" "$tmp/m.folded"'
hi=$(offc "$tmp/M.stk" | awk -F'\t' '$13 > $12 * 5001000' | wc -l)
m_sleep=$(us_of "$tmp/M.folded" ';writer_sleep;')
check "-M 5000: no row averages over 5 ms ($hi rows do); writer_sleep under 5% of unfiltered ($m_sleep of $all_sleep us); writer_nap kept" \
	eval '[ "$hi" -eq 0 ] && [ "$m_sleep" -lt $((all_sleep / 20)) ] && grep -q ";writer_nap;" "$tmp/M.folded"'
check "STAT counts the episodes -m/-M left out" \
	[ "$(stat_of "$tmp/m.stk" offcpu_filtered_block_time)" -gt 0 -a "$(stat_of "$tmp/M.stk" offcpu_filtered_block_time)" -gt 0 ]

# ---- --state -------------------------------------------------------------
# offwork's waits (pipe read, nanosleep) are interruptible sleeps (1).
check "--state 1: A's waiter is present ($(rows_of "$tmp/s1.stk" 3 "$a_waiter") rows)" \
	[ "$(rows_of "$tmp/s1.stk" 3 "$a_waiter")" -gt 0 ]
check "--state 2: A's waiter is absent ($(rows_of "$tmp/s.stk" 3 "$a_waiter") rows)" \
	[ "$(rows_of "$tmp/s.stk" 3 "$a_waiter")" -eq 0 ]
check "META records the state filter" [ "$(meta_of "$tmp/s.stk" state_filter)" = 2 ]

# ---- -U / -K ----------------------------------------------------------------
ku=$(offc "$tmp/wall.stk" | awk -F'\t' -v a="$a_pid" '$2 == a && $5 >= 0 && $6 >= 0' | wc -l)
check "unfiltered: A's rows have user and kernel stacks ($ku)" [ "$ku" -gt 0 ]
bad=$(offc "$tmp/U.stk" | awk -F'\t' '$6 != -2 || $11 != -2' | wc -l)
users=$(offc "$tmp/U.stk" | awk -F'\t' '$5 >= 0' | wc -l)
check "-U: no kernel stack on either side ($bad rows have one), user stacks kept ($users)" \
	[ "$bad" -eq 0 -a "$users" -gt 0 ]
bad=$(offc "$tmp/K.stk" | awk -F'\t' '$5 != -2 || $10 != -2' | wc -l)
kern=$(offc "$tmp/K.stk" | awk -F'\t' '$6 >= 0' | wc -l)
check "-K: no user stack on either side ($bad rows have one), kernel stacks kept ($kern)" \
	[ "$bad" -eq 0 -a "$kern" -gt 0 ]

finish
