#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_inputs: inputs that are not plain capture files must not hang
# stkreport or cost unbounded memory.
#  - A capture's binary whose .gnu_debuglink name is a FIFO (beside it, in
#    .debug/): the report and info --symbols finish, the module is
#    "stripped, no debuginfo"; with the real debug file there, it is used.
#  - /dev/zero: refused at once with one line, under a small ulimit -v.
#  - Endless stdin (a capture, then 400 MiB of zeros): the capture is
#    reported, under a ulimit -v far below the input's size.
#  - info --symbols on a pipe by name (/dev/stdin, as <(cat x.stk) is)
#    reads the capture twice.
#  - Counts that sum past 2^64: capped, one warning line, exit 1.
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_dbglink"

# The address space stkreport gets where memory is bounded (KiB): its
# libraries take ~100 MiB of it; reading an input whole takes more.
VLIMIT=300000

B=$tmp/bin
mkdir -p "$B/.debug"
cp "$FX/root/fx/fx_dbglink" "$B/fx_dbglink"
mkfifo "$B/.debug/fx_dbglink.debug"
cat >"$tmp/x.spec" <<SPEC
meta mode profile
map 100 app fx/fx_dbglink 0x555555554000 as=$B/fx_dbglink
syms fx/fx_dbglink fx/.debug/fx_dbglink.debug
stack 1 fx/fx_dbglink:fx_leaf+1 fx/fx_dbglink:fx_mid+4
count 100 100 app 1 -EFAULT 0 0 7
SPEC
"$MK" -C "$FX/root" "$tmp/x.spec" "$tmp/x.stk" || { fail "mkcapture"; finish; }

timeout 60 "$REP" -f folded --no-debuginfod "$tmp/x.stk" >"$tmp/fifo.out" 2>"$tmp/fifo.err"
rc=$?
check "debuglink FIFO: the report finishes (exit $rc, 124: hung)" [ $rc -eq 0 ]
check "debuglink FIFO: [unknown] frames" grep -qxF 'app;[unknown];[unknown] 7' "$tmp/fifo.out"
check "debuglink FIFO: the module is stripped, no debuginfo" \
	grep -qF 'stripped, no debuginfo' "$tmp/fifo.err"
timeout 60 "$REP" info --symbols "$tmp/x.stk" >"$tmp/fifo.info" 2>&1
rc=$?
check "debuglink FIFO: info --symbols finishes (exit $rc, 124: hung)" [ $rc -eq 0 ]
check "debuglink FIFO: info --symbols: stripped, no debuginfo" \
	grep -qxF '  symbols: stripped, no debuginfo' "$tmp/fifo.info"
[ -p "$B/.debug/fx_dbglink.debug" ] && pass "debuglink FIFO: still there" ||
	fail "debuglink FIFO: gone"

rm "$B/.debug/fx_dbglink.debug"
cp "$FX/root/fx/.debug/fx_dbglink.debug" "$B/.debug/fx_dbglink.debug"
timeout 60 "$REP" -f folded --no-debuginfod "$tmp/x.stk" >"$tmp/link.out" 2>"$tmp/link.err"
check "debuglink file beside the binary: found by its name" \
	grep -qxF 'app;fx_mid;fx_leaf 7' "$tmp/link.out"

# /dev/zero: the magic is checked before anything is buffered.
for cmd in "" info; do
	( ulimit -v $VLIMIT; timeout 60 "$REP" $cmd /dev/zero ) >"$tmp/zero.out" 2>"$tmp/zero.err"
	rc=$?
	check "stkreport $cmd /dev/zero: exit 1 (got $rc)" [ $rc -eq 1 ]
	check "stkreport $cmd /dev/zero: one line, not an .stk file ($(cat "$tmp/zero.err"))" \
		[ "$(cat "$tmp/zero.err")" = "stkreport: /dev/zero: byte 0: not an .stk file (no .stk file header)" ]
done

# Endless stdin after a capture: read as it arrives, frame by frame.
{ cat "$tmp/x.stk"; head -c 400M /dev/zero; } |
	( ulimit -v $VLIMIT; timeout 120 "$REP" -f folded --no-debuginfod - ) \
	>"$tmp/endless.out" 2>"$tmp/endless.err"
rc=$?
check "capture + 400 MiB of zeros on stdin: exit 1, damaged (got $rc: $(cat "$tmp/endless.err"))" \
	[ $rc -eq 1 ]
check "capture + 400 MiB of zeros on stdin: the capture is reported" \
	grep -qxF 'app;fx_mid;fx_leaf 7' "$tmp/endless.out"
check "capture + 400 MiB of zeros on stdin: the zeros are named" \
	grep -qF 'no .stk frame here' "$tmp/endless.err"

# info --symbols on a pipe by name: spooled, read twice.
cat "$tmp/x.stk" | timeout 60 "$REP" info --symbols /dev/stdin \
	>"$tmp/pipe.info" 2>"$tmp/pipe.err"
rc=$?
check "info --symbols /dev/stdin (a pipe): exit 0 (got $rc: $(cat "$tmp/pipe.err"))" [ $rc -eq 0 ]
check "info --symbols /dev/stdin: named as given" grep -qxF 'file: /dev/stdin' "$tmp/pipe.info"
check "info --symbols /dev/stdin: the module's symbols found" \
	grep -qxF '  symbols: symbols found' "$tmp/pipe.info"
head -c 100 /dev/zero | timeout 60 "$REP" info --symbols /dev/stdin >/dev/null 2>"$tmp/pipez.err"
rc=$?
check "info --symbols on a pipe of zeros: exit 1 with one line naming it ($(cat "$tmp/pipez.err"))" \
	[ $rc -eq 1 ] && [ "$(cat "$tmp/pipez.err")" = "stkreport: /dev/stdin: byte 0: not an .stk file (no .stk file header)" ]
# Counts that sum past 2^64 (crafted): capped, said in one line, exit 1.
cat >"$tmp/sat.spec" <<SPEC
meta mode profile
map 100 app fx/fx_dbglink 0x555555554000 as=$B/fx_dbglink
syms fx/fx_dbglink fx/.debug/fx_dbglink.debug
stack 1 fx/fx_dbglink:fx_leaf+1 fx/fx_dbglink:fx_mid+4
count 100 100 app 1 -EFAULT 0 0 18446744073709551610
count 100 101 app 1 -EFAULT 0 0 100
SPEC
"$MK" -C "$FX/root" "$tmp/sat.spec" "$tmp/sat.stk" || { fail "mkcapture sat"; finish; }
"$REP" -f folded --no-debuginfod "$tmp/sat.stk" >"$tmp/sat.out" 2>"$tmp/sat.err"
rc=$?
check "counts past 2^64: exit 1 (got $rc)" [ $rc -eq 1 ]
check "counts past 2^64: capped, not wrapped" \
	grep -qxF 'app;fx_mid;fx_leaf 18446744073709551615' "$tmp/sat.out"
n=$(grep -c 'counts sum past 2^64' "$tmp/sat.err")
check "counts past 2^64: one warning line ($n)" [ "$n" -eq 1 ]
"$REP" info "$tmp/sat.stk" >"$tmp/sat.info" 2>"$tmp/sati.err"
rc=$?
check "info, counts past 2^64: exit 1 (got $rc)" [ $rc -eq 1 ]
check "info, counts past 2^64: samples capped" grep -qxF 'samples: 18446744073709551615' "$tmp/sat.info"
check "info, counts past 2^64: one line ($(cat "$tmp/sati.err"))" \
	[ "$(grep -c 'counts sum past 2^64' "$tmp/sati.err")" -eq 1 ]
finish
