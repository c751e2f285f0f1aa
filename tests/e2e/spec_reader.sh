#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# SPEC.md is enough to read a capture: tests/tools/stkread.py, a reader in
# Python written from SPEC.md alone (no code shared with libstk), must
# decode every chunk of real captures and count what `stkreport info`
# counts: the chunk list (segment, seq, offset, tag, sizes, interval), chunks
# by tag, samples, off-CPU episodes and time, stacks, rows, maps, kernel
# symbols, META and STAT.  Any disagreement means SPEC.md or the code is
# wrong.
#
# Captures: stkwrite-sample's fixture (known totals) and random records of
# every type (no BPF); concatenated and unfinished files; a truncated and a
# damaged file, where both readers must report the errors at the same byte
# offsets and recover the same chunks (SPEC.md section 7); then, as root with
# BPF, real stkrec profile and offwake captures (system-wide, each with
# a workload of its own running throughout, so never empty).

. "$(dirname "$0")/lib/harness.sh"
W=$O/tests/tools/stkwrite-sample
R=$REP
PY=$top/tests/tools/stkread.py
need_files "$W" "$R" "$REC"
need_cmds python3 zstd

# The lines both readers print: the chunk list, and per segment and in
# total the header facts, META, totals and STAT (stkreport's uuid, start
# date, compression ratio and verdict wording are its own).
KEYS='^([0-9]+ [0-9]+ [0-9]+ |segments:|\[segment|\[total|offset:|read version:|write version:|writer:|wall start ns:|mono start ns:|closed:|meta |chunks|bytes |interval|count rows:|samples:|off-cpu |trace |stacks:|processes with maps:|map snapshots:|mappings:|kernel |embedded |stat )'

# compare NAME FILE: stkread.py and stkreport info agree on FILE: the same
# exit status, the same lines, and errors at the same byte offsets.
compare() {
	name=$1
	f=$2
	python3 "$PY" --chunks "$f" > "$tmp/py.out" 2> "$tmp/py.err"
	prc=$?
	"$R" info --chunks "$f" > "$tmp/c.out" 2> "$tmp/c.err"
	crc=$?
	grep -aE "$KEYS" "$tmp/py.out" > "$tmp/py.keys"
	grep -aE "$KEYS" "$tmp/c.out" > "$tmp/c.keys"
	grep -aoE 'byte [0-9]+:' "$tmp/py.err" > "$tmp/py.offs"
	grep -aoE 'byte [0-9]+:' "$tmp/c.err" > "$tmp/c.offs"
	if [ "$prc" -ne "$crc" ]; then
		fail "$name: exit status: stkread.py $prc, stkreport info $crc" "$(head -2 "$tmp/py.err")"
	elif ! cmp -s "$tmp/py.keys" "$tmp/c.keys"; then
		fail "$name: stkread.py and stkreport info disagree (< stkread.py, > stkreport)"
		diff "$tmp/py.keys" "$tmp/c.keys" | head -20 | sed 's/^/    /'
	elif ! cmp -s "$tmp/py.offs" "$tmp/c.offs"; then
		fail "$name: errors at other offsets" "stkread.py: $(tr '\n' ' ' < "$tmp/py.err") stkreport: $(tr '\n' ' ' < "$tmp/c.err")"
	else
		pass "$name: $(grep -c '^[0-9]* [0-9]* [0-9]* ' "$tmp/c.keys") chunks, $(wc -l < "$tmp/c.keys") lines and $(wc -l < "$tmp/c.offs") errors agree (exit $crc)"
	fi
}

# total NAME KEY WANT: the last 'KEY: value' line of stkread.py's output
# (the file total) is WANT.
total() {
	got=$(grep -a "^$2: " "$tmp/py.out" | tail -1 | sed "s/^$2: //")
	if [ "$got" = "$3" ]; then
		pass "$1: stkread.py counts $2 $3"
	else
		fail "$1: stkread.py counts $2 '$got', want $3"
	fi
}

# ---- fixtures, no BPF ----------------------------------------------------

"$W" "$tmp/known.stk"
compare "fixture" "$tmp/known.stk"
# stkwrite-sample.c documents what its default capture holds.
total "fixture" "chunks" 13
total "fixture" "chunks CNTS" 2
total "fixture" "samples" 42
total "fixture" "count rows" 3
total "fixture" "off-cpu episodes" 7
total "fixture" "off-cpu blocked time" "1.500000000 s"
total "fixture" "stacks" 4
total "fixture" "map snapshots" 3
total "fixture" "mappings" 8
total "fixture" "kernel symbols" 5
total "fixture" "kernel modules" 2
total "fixture" "embedded symbol tables" 1
total "fixture" "stat samples" 42

"$W" --esym-tables "$tmp/esym.stk"
compare "ESYM symbol tables and perf maps (kinds 2, 3)" "$tmp/esym.stk"
total "ESYM kinds 2, 3" "embedded symbol tables" 3
total "ESYM kinds 2, 3" "embedded symbols" 5

"$W" --empty --pycode "$tmp/pycode.stk"
compare "ESYM Python code objects (kind 4)" "$tmp/pycode.stk"
total "ESYM kind 4" "embedded symbol tables" 2
total "ESYM kind 4" "embedded python code objects" 4
"$W" --pycode --pycode-corrupt "$tmp/pycode_bad.stk"
compare "ESYM kind 4 with a fingerprint over 24 bits is corrupt" "$tmp/pycode_bad.stk"
total "ESYM kind 4, one corrupt" "embedded python code objects" 4

"$W" --pid-ns "$tmp/pidn.stk"
compare "pidn: pids in other PID namespaces (ancillary)" "$tmp/pidn.stk"
check "pidn: stkread.py decodes its 3 records" \
	sh -c "python3 '$PY' --chunks '$tmp/pidn.stk' | grep -q '^chunks pidn: 1\$'"

for seed in 1 2 3; do
	"$W" --seed $seed "$tmp/seed$seed.stk"
	compare "random records of every type (seed $seed)" "$tmp/seed$seed.stk"
done
"$W" --seed 4 --small "$tmp/small.stk"
compare "random small records (seed 4)" "$tmp/small.stk"
"$W" --empty "$tmp/empty.stk"
compare "a file without chunks" "$tmp/empty.stk"
"$W" --ancillary "note" "$tmp/anc.stk"
compare "an unknown ancillary chunk is skipped" "$tmp/anc.stk"
"$W" --critical "NEWC" "$tmp/crit.stk"
compare "an unknown critical chunk stops the read" "$tmp/crit.stk"
"$W" --no-close "$tmp/open.stk"
compare "a file not closed cleanly" "$tmp/open.stk"
cat "$tmp/known.stk" "$tmp/seed1.stk" "$tmp/open.stk" "$tmp/known.stk" > "$tmp/cat.stk"
compare "four concatenated segments" "$tmp/cat.stk"
total "four concatenated segments" "segments" 4

# Damage: a cut inside a chunk, and flipped bytes in a header, a payload and
# the trailer; SPEC.md section 7 says how a reader reports and recovers.
size=$(stat -c %s "$tmp/known.stk")
head -c $((size * 2 / 3)) "$tmp/known.stk" > "$tmp/cut.stk"
compare "a file cut inside a chunk" "$tmp/cut.stk"
# flip FILE OFFSET OUT: OUT is FILE with the byte at OFFSET inverted.
flip() {
	cp "$1" "$3"
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf '%b' "\\0$(printf '%03o' $((b ^ 255)))" |
		dd of="$3" bs=1 seek="$2" conv=notrunc 2> /dev/null
}
flip "$tmp/known.stk" 80 "$tmp/flip_hdr.stk"
compare "a flipped byte in the first chunk header" "$tmp/flip_hdr.stk"
flip "$tmp/known.stk" $((size / 2)) "$tmp/flip_mid.stk"
compare "a flipped byte in the middle" "$tmp/flip_mid.stk"
flip "$tmp/known.stk" $((size - 20)) "$tmp/flip_trl.stk"
compare "a flipped byte in the trailer" "$tmp/flip_trl.stk"
flip "$tmp/cat.stk" $((size + 30)) "$tmp/flip_seg.stk"
compare "a flipped byte in the second segment's file header" "$tmp/flip_seg.stk"

# ---- real captures (root + BPF) -------------------------------------------

if [ "$(id -u)" != 0 ] || [ ! -e /sys/kernel/btf/vmlinux ]; then
	skip "stkrec profile and offwake captures" "need root and a kernel with BTF"
	finish
fi

# System-wide, so that the captures hold many processes; but each with a
# workload of the test's own that runs through the whole recording (started
# before it, stopped after; DURATION counts from when sampling starts), so
# that samples and episodes are there whatever else the machine does.
need_files "$CW" "$OW" "$O/tests/tools/eventwork"
bg "$CW" 3600 > /dev/null
wpid=$bg_pid
if "$REC" -q -o "$tmp/p.stk" 2 > "$tmp/rec.log" 2>&1; then
	compare "stkrec profile capture" "$tmp/p.stk"
	total "stkrec profile capture" "meta mode" profile
	n=$(grep -a '^samples: ' "$tmp/py.out" | tail -1 | sed 's/.*: //')
	if [ "${n:-0}" -gt 0 ]; then pass "profile capture: $n samples"; else fail "profile capture has no samples"; fi
else
	fail "stkrec profile" "$(tail -1 "$tmp/rec.log")"
fi
stop "$wpid"

# offwork: its waiter is woken by its writer every 10 ms.
bg "$OW" 3600 > /dev/null
wpid=$bg_pid
if "$REC" offwake -q -o "$tmp/w.stk" 2 > "$tmp/rec.log" 2>&1; then
	compare "stkrec offwake capture" "$tmp/w.stk"
	total "stkrec offwake capture" "meta mode" offwake
	n=$(grep -a '^off-cpu episodes: ' "$tmp/py.out" | tail -1 | sed 's/.*: //')
	if [ "${n:-0}" -gt 0 ]; then pass "offwake capture: $n episodes"; else fail "offwake capture has no OFFC rows"; fi
else
	fail "stkrec offwake" "$(tail -1 "$tmp/rec.log")"
fi
stop "$wpid"

# stkrec trace: TRCE rows, system-wide, of two events.
if "$REC" trace -q t:syscalls:sys_enter_write page-faults -o "$tmp/t.stk" -- \
	"$O/tests/tools/eventwork" 50 20 10 0 > "$tmp/rec.log" 2>&1; then
	compare "stkrec trace capture" "$tmp/t.stk"
	total "stkrec trace capture" "meta mode" trace
	n=$(grep -a '^trace events: ' "$tmp/py.out" | tail -1 | sed 's/.*: //')
	if [ "${n:-0}" -ge 80 ]; then pass "trace capture: $n events"; else fail "trace capture has too few TRCE events (${n:-0})"; fi
else
	fail "stkrec trace" "$(tail -1 "$tmp/rec.log")"
fi

finish
