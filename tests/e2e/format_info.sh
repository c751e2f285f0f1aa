#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport info on captures with known contents (tests/tools/stkwrite-sample):
# the facts and totals it prints, --chunks, concatenated segments, and its
# exit status and one-line errors for truncated, unfinished, damaged, newer,
# empty and foreign files and for usage errors.

. "$(dirname "$0")/lib/harness.sh"
W=$O/tests/tools/stkwrite-sample
R=$REP
need_files "$W" "$R"

# run NAME: stkreport info with the remaining arguments; sets $rc, and
# $tmp/NAME.out / $tmp/NAME.err.
run() {
	name=$1
	shift
	"$R" info "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	rc=$?
}

# expect NAME LINE: the output of NAME has this exact line.
expect() {
	if grep -qxF -- "$2" "$tmp/$1.out"; then
		pass "$1: $2"
	else
		fail "$1: missing line '$2'"
		sed 's/^/    /' "$tmp/$1.out"
	fi
}

# status NAME WANT: the exit status and the stderr line count.
status() {
	if [ "$rc" -eq "$2" ]; then pass "$1: exit $2"; else fail "$1: exit $rc, want $2"; fi
}

# one_error NAME PATTERN: stderr is exactly one line, matching the regex.
one_error() {
	lines=$(wc -l < "$tmp/$1.err")
	if [ "$lines" -eq 1 ] && grep -qE -- "$2" "$tmp/$1.err"; then
		pass "$1: one stderr line '$(cat "$tmp/$1.err")'"
	else
		fail "$1: stderr ($lines lines) does not match '$2'"
		sed 's/^/    /' "$tmp/$1.err"
	fi
}

"$W" "$tmp/known.stk"

run good "$tmp/known.stk"
status good 0
expect good "segments: 1"
expect good "meta mode: profile"
expect good "meta hostname: testhost"
expect good "read version: 1"
expect good "writer: stk 0.1.0"
expect good "started: 2023-11-14T22:13:20.000000000Z"
expect good "closed: yes"
expect good "chunks: 13"
expect good "chunks CNTS: 2"
expect good "chunks MAPS: 2"
expect good "chunks STAT: 2"
expect good "interval: 2.000000000 s"
expect good "count rows: 3"
expect good "samples: 42"
expect good "off-cpu episodes: 7"
expect good "off-cpu blocked time: 1.500000000 s"
expect good "stacks: 4"
expect good "processes with maps: 2"
expect good "mappings: 8"
expect good "kernel symbols: 5"
expect good "kernel modules: 2"
expect good "stat samples: 42"
expect good "stat lost: 1"
expect good "verdict: OK: 13 chunks, closed cleanly"
if [ -s "$tmp/good.err" ]; then fail "good: stderr not empty"; else pass "good: stderr empty"; fi

run chunks --chunks "$tmp/known.stk"
status chunks 0
expect chunks "0 0 68 META $(sed -n 's/^0 0 68 META //p' "$tmp/chunks.out")"
n=$(grep -cE '^0 [0-9]+ [0-9]+ [A-Za-z]{4} [0-9]+ [0-9]+ [0-9]+ [0-9]+$' "$tmp/chunks.out")
if [ "$n" -eq 13 ]; then pass "chunks: 13 chunk lines"; else fail "chunks: $n chunk lines, want 13"; fi
expect chunks "0 5 $(awk '$2 == 5 && $4 == "CNTS" { print $3 }' "$tmp/chunks.out") CNTS $(awk '$2 == 5 { print $5, $6 }' "$tmp/chunks.out") 1000000000 2000000000"

# Two segments, from cat.
"$W" --seed 7 --small "$tmp/other.stk"
cat "$tmp/known.stk" "$tmp/other.stk" > "$tmp/cat.stk"
run cat "$tmp/cat.stk"
status cat 0
expect cat "segments: 2"
expect cat "[segment 1]"
expect cat "offset: $(wc -c < "$tmp/known.stk")"
expect cat "[total]"
expect cat "verdict: OK: 24 chunks, closed cleanly"

# Truncated in the middle of a chunk: what came before is reported.
size=$(wc -c < "$tmp/known.stk")
head -c $((size / 2)) "$tmp/known.stk" > "$tmp/cut.stk"
run cut "$tmp/cut.stk"
status cut 1
one_error cut "^stkreport: $tmp/cut.stk: byte [0-9]+: truncated at byte $((size / 2)) after chunk [0-9]+ \([A-Z]{4}\); [0-9]+ chunks recovered$"
expect cut "meta mode: profile"
if grep -q '^verdict: NOT CLOSED CLEANLY: .*chunks recovered$' "$tmp/cut.out"; then
	pass "cut: verdict says not closed, with the chunks recovered"
else
	fail "cut: verdict" "$(grep verdict "$tmp/cut.out")"
fi

# Stopped before the trailer, at a chunk boundary (kill -9).
"$W" --no-close "$tmp/open.stk"
run open "$tmp/open.stk"
status open 1
expect open "closed: no"
expect open "samples: 42"
if grep -q '^verdict: NOT CLOSED CLEANLY: 12 chunks, segment 0 has no trailer' "$tmp/open.out"; then
	pass "open: verdict not closed cleanly"
else
	fail "open: verdict" "$(grep verdict "$tmp/open.out")"
fi
if [ -s "$tmp/open.err" ]; then fail "open: stderr not empty"; else pass "open: no error for an unfinished file"; fi

# A flipped byte in the middle: one error, the rest recovered.
cp "$tmp/known.stk" "$tmp/flip.stk"
printf '\377' | dd of="$tmp/flip.stk" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run flip "$tmp/flip.stk"
status flip 1
one_error flip "^stkreport: $tmp/flip.stk: byte [0-9]+: "
if grep -q '^verdict: DAMAGED: 1 error, 12 chunks recovered' "$tmp/flip.out"; then
	pass "flip: verdict damaged, 12 of 13 chunks recovered"
else
	fail "flip: verdict" "$(grep verdict "$tmp/flip.out")"
fi

# Not an .stk file.
printf 'hello, world\n' > "$tmp/text"
run text "$tmp/text"
status text 1
one_error text "^stkreport: $tmp/text: byte 0: not an \.stk file"

# Empty file.
: > "$tmp/empty.stk"
run empty "$tmp/empty.stk"
status empty 1
one_error empty "^stkreport: $tmp/empty.stk: empty file$"

# Missing file.
run missing "$tmp/nope.stk"
status missing 1
one_error missing "^stkreport: $tmp/nope.stk: No such file or directory$"
# The report and diff say the same (the file and the OS error, no byte).
"$REP" -f folded "$tmp/nope.stk" > /dev/null 2> "$tmp/nope-report.err"
check "report of a missing file: the name and the OS error" \
	grep -qx "stkreport: $tmp/nope.stk: No such file or directory" "$tmp/nope-report.err"
"$REP" diff "$tmp/nope.stk" "$tmp/nope.stk" > /dev/null 2> "$tmp/nope-diff.err"
check "diff of a missing file: the name and the OS error" \
	grep -qx "stkreport: $tmp/nope.stk: No such file or directory" "$tmp/nope-diff.err"

# A directory: the read fails on the file, not at a byte of it.
mkdir "$tmp/dir.stk"
run dir "$tmp/dir.stk"
status dir 1
one_error dir "^stkreport: $tmp/dir.stk: (read: )?Is a directory$"
"$REP" -f folded "$tmp/dir.stk" > /dev/null 2> "$tmp/dir-report.err"
check "report of a directory: the name and the OS error, no byte" \
	grep -qx "stkreport: $tmp/dir.stk: read: Is a directory" "$tmp/dir-report.err"

# An unknown critical chunk is named.
"$W" --critical QZZY "$tmp/crit.stk"
run crit "$tmp/crit.stk"
status crit 1
one_error crit "unknown critical chunk 'QZZY'"

# An unknown ancillary chunk is counted and skipped.
"$W" --ancillary zNew "$tmp/anc.stk"
run anc "$tmp/anc.stk"
status anc 0
expect anc "chunks unknown: 1"

# Standard input.
"$R" info - < "$tmp/known.stk" > "$tmp/stdin.out" 2>&1
rc=$?
status stdin 0
expect stdin "samples: 42"
# --symbols reads the capture twice: a pipe must still give both passes.
cat "$tmp/known.stk" | "$R" info --symbols - > "$tmp/pipesym.out" 2> "$tmp/pipesym.err"
rc=$?
status pipesym 0
expect pipesym "samples: 42"
expect pipesym "[symbols]"
if [ ! -s "$tmp/pipesym.err" ]; then pass "pipesym: no error"; else fail "pipesym: $(cat "$tmp/pipesym.err")"; fi

# Output that cannot be written is an error, said once, with and without
# the --symbols section.
"$R" info "$tmp/known.stk" > /dev/full 2> "$tmp/full.err"
rc=$?
status full 1
one_error full "^stkreport: info: writing the output: "
"$R" info --symbols "$tmp/known.stk" > /dev/full 2> "$tmp/fullsym.err"
rc=$?
status fullsym 1
one_error fullsym "^stkreport: info: writing the output: "

# Usage errors.
run usage0
status usage0 2
one_error usage0 "^stkreport: info: missing FILE"
run usage2 "$tmp/known.stk" "$tmp/known.stk"
status usage2 2
run usagebad --bogus "$tmp/known.stk"
status usagebad 2
run help --help
status help 0
expect help "Usage: stkreport info [--chunks] [--symbols [--sysroot DIR] [--debug-dir DIR]...] FILE.stk"

finish
