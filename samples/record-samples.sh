#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Records the sample captures samples/profile.stk, samples/offcpu.stk and
# samples/offwake.stk (as root, like any recording), which stkreport reads
# on any machine, without root: tests/e2e/samples_golden.sh compares their
# reports with tests/golden/samples_*.  Run it again only to replace them
# (then STK_GOLDEN_UPDATE=1 for the expected outputs, and review the diff).
#
# The workloads are samples/cpuwork and samples/offwork (offwake: its
# waiter thread, see below), built static with
# the Makefile's frame-pointer flags into a temporary directory that is
# removed afterwards: every user frame is then in one binary that no
# machine has at the recorded path, so stkreport names frames from the
# symbols stkrec embedded (--embed-symbols=covering, the default) and the
# kernel's from the captured kernel symbols (--kallsyms=covering), never
# from the files of the machine it runs on.
#
#   O=build samples/record-samples.sh
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-$top/build}
REC=$O/stkrec
CC=${CC:-gcc}
FP_CFLAGS="-O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline"

d=$(mktemp -d "${TMPDIR:-/tmp}/stk-samples.XXXXXX")
trap 'rm -rf "$d"' EXIT
for w in cpuwork offwork; do
	"$CC" $FP_CFLAGS -static -pthread -Wall -Wextra -Werror "$top/samples/$w.c" -o "$d/$w"
done
"$REC" -q -F 99 -o "$d/profile.stk" -- "$d/cpuwork" 2
"$REC" offcpu -q -o "$d/offcpu.stk" -- "$d/offwork" 2 > /dev/null
# offwake: the waiter thread only, whose waker is offwork's writer (a
# thread of every process would bring in wakers from all over the machine,
# which interrupts find running, and their binaries); stkrec stops when it
# is gone.
: > "$d/offwork.out"
"$d/offwork" 3 > "$d/offwork.out" &
ow=$!
while ! grep -q waiter "$d/offwork.out"; do sleep 0.1; done
waiter=$(sed -n 's/.* waiter \([0-9]*\).*/\1/p' "$d/offwork.out")
"$REC" offwake -q -t "$waiter" -o "$d/offwake.stk"
wait $ow
for c in profile offcpu offwake; do
	# Readable by anyone: the point is to try stkreport without root.
	install -m 0644 "$d/$c.stk" "$top/samples/$c.stk"
	echo "samples/$c.stk: $(wc -c < "$top/samples/$c.stk") bytes"
done
