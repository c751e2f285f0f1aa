#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_go: Go stacks are whole (issue 22).  A Go program's garbage
# collector runs on g0's stack, entered through runtime.systemstack,
# whose CFI (Go's .debug_frame) describes the goroutine's stack after the
# switch: the walk read a zero return address on g0's stack and ended at
# runtime.systemstack.abi0 in silence (4% of a Go program's samples),
# where perf -g goes on to runtime.goexit.  tests/unwind/gowork.go,
# built here with the installed go (skipped without one), allocates for
# 3 s of its CPU time; recorded with the default --unwind=auto:
#  - >= 100 samples have runtime.systemstack on their stack, and >= 95%
#    of them are rooted at runtime.goexit (as --unwind=fp roots them: the
#    frame pointers Go keeps are what the walk follows off g0's stack),
#  - the same for its samples through runtime.mcall and
#    runtime.morestack, when there are >= 20,
#  - no stack ends at runtime.systemstack.
# Exit 77 when BPF cannot be used or go is missing.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

need_cmds go
need_bpf

# go build wants a cache; a test environment may have no $HOME.
[ -n "${GOCACHE:-}" ] || [ -n "${HOME:-}" ] || export GOCACHE="$tmp/gocache"
GO=$tmp/gowork
if ! (cd "$tmp" && go build -o "$GO" "$top/tests/unwind/gowork.go") >"$tmp/build.log" 2>&1; then
	fail "go build tests/unwind/gowork.go" "$(cat "$tmp/build.log")"
	finish
fi

"$REC" -q -F 999 -o "$tmp/go.stk" -- "$GO" 3 >/dev/null
check "stkrec -- gowork exits 0" [ $? -eq 0 ]
"$REP" -U -f folded "$tmp/go.stk" >"$tmp/go.folded" 2>/dev/null

# through FN: "total rooted" over gowork's samples with FN on their stack,
# rooted meaning at runtime.goexit.
through() {
	awk -v f=";$1(\\\\.abi0)?;" '
	index($0, "gowork;") == 1 && $0 ~ f { t += $NF; if ($0 ~ /^gowork;runtime\.goexit(\.abi0)?;/) r += $NF }
	END { printf "%d %d\n", t, r }' "$tmp/go.folded"
}

set -- $(through runtime.systemstack)
echo "     systemstack: $2 of $1 samples rooted at runtime.goexit"
check "systemstack: >= 95% of $1 samples (>= 100) rooted at runtime.goexit ($2)" \
	[ "$1" -ge 100 -a $(($2 * 100)) -ge $(($1 * 95)) ]
for fn in runtime.mcall runtime.morestack; do
	set -- $(through $fn)
	echo "     $fn: $2 of $1 samples rooted at runtime.goexit"
	if [ "$1" -ge 20 ]; then
		check "$fn: >= 90% of $1 samples rooted at runtime.goexit ($2)" \
			[ $(($2 * 100)) -ge $(($1 * 90)) ]
	fi
done
n=$(awk '/^gowork;runtime\.systemstack(\.abi0)?;/ { n += $NF } END { print n + 0 }' "$tmp/go.folded")
check "no stack ends at runtime.systemstack ($n samples)" [ "$n" -eq 0 ]

finish
