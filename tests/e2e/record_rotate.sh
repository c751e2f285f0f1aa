#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_rotate: a recorder that runs for days.  With --rotate SECS, -o is
# a strftime pattern and every file is a whole capture of its own (closed
# cleanly, symbolized alone); the files partition the samples: their rows
# add up to the recorder's total, merge of them equals the sum of the
# parts stack by stack.  SIGHUP rotates at once (and does not stop);
# a name that exists is never replaced (-1, -2... instead); --keep N
# leaves the newest N; without rotation -o is literal and SIGHUP still
# stops; --rotate-size below what a file starts with (--kallsyms=full)
# still puts a flush's rows in every file; a stack copied for want of an
# unwind table is written in the file that holds its rows, rotation or
# not.  Wrong values are one line, exit 2.
# Exclusive: F records every CPU while a CFI-bomb loader runs, which
# starved the tables and symbol reads of tests beside it (record_usermem
# once, beside CPU hogs).
# harness: exclusive
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# usage_error DESC ARGS...: exit 2 with one line starting "stkrec: ".
usage_error() {
	_d=$1
	shift
	"$REC" "$@" > "$tmp/usage.out" 2> "$tmp/usage.err"
	_rc=$?
	check "$_d: exit 2, one stkrec: line ($_rc: $(cat "$tmp/usage.err"))" \
		test "$_rc" -eq 2 -a "$(wc -l < "$tmp/usage.err")" -eq 1 -a ! -s "$tmp/usage.out" \
		-a "$(cut -c1-8 "$tmp/usage.err")" = "stkrec: "
}
usage_error "--keep without --rotate" -o "$tmp/x.stk" --keep 2 1
grep -q -- '--rotate' "$tmp/usage.err" || fail "--keep without --rotate: the line names --rotate"
usage_error "--rotate 0" --rotate 0 1
usage_error "--rotate 0.5" --rotate 0.5 1
usage_error "--rotate x" --rotate x 1
usage_error "--rotate-size 10X" --rotate-size 10X 1
usage_error "--rotate-size 0" --rotate-size 0 1
usage_error "--keep 0" --rotate 1 --keep 0 1
usage_error "--rotate into a device" --rotate 1 -o /dev/null 1

# The workload: cpuwork, running until the test stops it.
bg "$CW" 3600
cw=$bg_pid

# files DIR: the captures in DIR (not the temporary .NAME.XXXXXX ones).
files() {
	ls "$1" | grep -v '^\.'
}
nfiles() {
	files "$1" | wc -l
}
at_least() {
	[ "$(nfiles "$1")" -ge "$2" ]
}
# rot_start WHAT ARGS...: stkrec ARGS in the background, its stderr in
# $tmp/WHAT.err; $rec is its pid.
rot_start() {
	_w=$1
	shift
	bg "$REC" "$@" 2> "$tmp/$_w.err"
	rec=$bg_pid
}
# rot_stop WHAT DIR N: once DIR holds N files, SIGINT the recorder rot_start
# started; it must exit 0.
rot_stop() {
	wait_until at_least "$2" "$3" || fail "$1: $3 files did not come ($(cat "$tmp/$1.err"))"
	kill -INT "$rec"
	wait "$rec"
	_rc=$?
	check "$1: exit 0 ($_rc: $(cat "$tmp/$1.err"))" [ "$_rc" -eq 0 ]
}
# Samples of a "wrote" line.
wrote_samples() {
	sed -n 's/^stkrec: wrote [0-9]* files\{0,1\}, .*: \([0-9]*\) samples, .*/\1/p' "$1"
}

# ---- A: --rotate 1, stopped once 5 files are whole ------------------------
a=$tmp/a
mkdir "$a"
rot_start A -p "$cw" -F 99 --rotate 1 --keep 1000 -o "$a/cw-%Y%m%dT%H%M%S.stk"
# 6 names: the 5 closed and the one being written.
rot_stop A "$a" 6
n=$(nfiles "$a")
check "A: the summary says $n files" grep -q "^stkrec: wrote $n files, $a/cw-" "$tmp/A.err"
bad=$(files "$a" | grep -v -E '^cw-[0-9]{8}T[0-9]{6}(-[0-9]+)?\.stk$' | tr '\n' ' ')
check "A: names follow the pattern ($bad)" [ -z "$bad" ]
total=0 stat_total=0 open= reasons= unsym=
for f in $(files "$a"); do
	"$REP" info "$a/$f" > "$tmp/info" 2>&1
	grep -q '^verdict: OK: .*closed cleanly' "$tmp/info" || open="$open $f"
	reasons="$reasons $(meta_of "$a/$f" end_reason)"
	s=$(samples "$a/$f")
	total=$((total + s))
	stat_total=$((stat_total + $(stat_of "$a/$f" samples)))
	full=$(stat_of "$a/$f" counts_map_full)
	[ "$full" -eq 0 ] || fail "A: $f: counts map full ($full)"
	# Alone, each file names every frame of cpuwork's stacks.
	"$REP" -f folded "$a/$f" > "$tmp/folded" 2> "$tmp/folded.err"
	grep -q '100.0% of [0-9]* samples fully symbolized' "$tmp/folded.err" ||
		[ "$s" -eq 0 ] || unsym="$unsym $f: $(cat "$tmp/folded.err")"
	cat "$tmp/folded" >> "$tmp/parts"
done
check "A: every file closed cleanly ($open)" [ -z "$open" ]
last=$(echo $reasons | awk '{ print $NF }')
rot=$(echo $reasons | tr ' ' '\n' | grep -c '^rotated$')
check "A: end_reason rotated for all but the last, signal for it ($reasons)" \
	test "$rot" -eq $((n - 1)) -a "$last" = signal
check "A: every file symbolizes alone ($unsym)" [ -z "$unsym" ]
said=$(wrote_samples "$tmp/A.err")
check "A: the rows of the files add up to the recorder's $said samples (got $total)" \
	[ "$total" = "$said" ]
check "A: each file's STAT samples add up to them too (got $stat_total)" [ "$stat_total" = "$said" ]
check "A: samples were recorded ($total)" [ "$total" -gt 0 ]
# Merged, the files are one recording: the sum of the parts, stack by stack.
"$REP" merge -o "$tmp/merged.stk" $(files "$a" | sed "s|^|$a/|") 2> "$tmp/merge.err"
check "A: merge of the files (exit $?: $(cat "$tmp/merge.err"))" [ -s "$tmp/merged.stk" ]
"$REP" -f folded "$tmp/merged.stk" 2>/dev/null | sort > "$tmp/merged.folded"
awk '{ n = $NF; $NF = ""; s[$0] += n } END { for (k in s) print k s[k] }' "$tmp/parts" |
	sort > "$tmp/sum.folded"
check "A: merge equals the sum of the parts stack by stack" cmp -s "$tmp/merged.folded" "$tmp/sum.folded"
check "A: merged samples = $said" [ "$(samples "$tmp/merged.stk")" = "$said" ]

# ---- B: --keep 2 leaves the newest 2 ----------------------------------------
b=$tmp/b
mkdir "$b"
bg "$REC" -p "$cw" -F 99 --rotate 1 --keep 2 -o "$b/k-%Y%m%dT%H%M%S.stk" 2> "$tmp/b.err"
rec=$bg_pid
wait_until at_least "$b" 1
first=$(files "$b" | head -n 1)
first_gone() {
	! [ -e "$b/$first" ]
}
wait_until first_gone || fail "B: the first file $first was never deleted ($(cat "$tmp/b.err"))"
kill -INT "$rec"
wait "$rec"
rc=$?
check "B: exit 0 ($rc: $(cat "$tmp/b.err"))" [ "$rc" -eq 0 ]
check "B: --keep 2 leaves 2 files ($(files "$b" | tr '\n' ' '))" [ "$(nfiles "$b")" -eq 2 ]
check "B: the summary says how many were deleted" \
	grep -q "^stkrec: wrote [0-9]* files, .*, [0-9]* deleted by --keep: " "$tmp/b.err"
w=$(sed -n 's/^stkrec: wrote \([0-9]*\) files.*, \([0-9]*\) deleted by.*/\1 \2/p' "$tmp/b.err")
check "B: written less deleted is 2 ($w)" [ "$(echo $w | awk '{ print $1 - $2 }')" = 2 ]

# ---- C: SIGHUP rotates, a name that exists is never replaced ---------------
c=$tmp/c
mkdir "$c"
echo precious > "$c/same.stk"
bg "$REC" -p "$cw" -F 99 --rotate 3600 -o "$c/same.stk" 2> "$tmp/c.err"
rec=$bg_pid
wait_until at_least "$c" 2 || fail "C: no file ($(cat "$tmp/c.err"))"
kill -HUP "$rec"
wait_until at_least "$c" 3 || fail "C: SIGHUP made no new file ($(cat "$tmp/c.err"))"
check "C: SIGHUP does not stop the recorder" kill -0 "$rec"
kill -HUP "$rec"
wait_until at_least "$c" 4 || fail "C: a second SIGHUP made no new file"
kill -INT "$rec"
wait "$rec"
rc=$?
check "C: exit 0 ($rc: $(cat "$tmp/c.err"))" [ "$rc" -eq 0 ]
check "C: the file that was there is untouched" [ "$(cat "$c/same.stk")" = precious ]
check "C: the captures are same-1, -2, -3 ($(files "$c" | tr '\n' ' '))" \
	[ "$(files "$c" | tr '\n' ' ')" = "same-1.stk same-2.stk same-3.stk same.stk " ]
for f in same-1 same-2 same-3; do
	"$REP" info "$c/$f.stk" > "$tmp/info" 2>&1
	check "C: $f.stk closed cleanly" grep -q '^verdict: OK: .*closed cleanly' "$tmp/info"
done

# ---- D: without rotation -o is literal and SIGHUP stops ---------------------
d=$tmp/d
mkdir "$d"
bg "$REC" -q -p "$cw" -o "$d/lit-%Y.stk" 2> "$tmp/d.err"
rec=$bg_pid
wait_sampling "$d/lit-%Y.stk" "$rec" || fail "D: -o lit-%Y.stk was not written ($(cat "$tmp/d.err"))"
kill -HUP "$rec"
wait "$rec"
rc=$?
check "D: without --rotate, SIGHUP stops: exit 0 ($rc: $(cat "$tmp/d.err"))" [ "$rc" -eq 0 ]
"$REP" info "$d/lit-%Y.stk" > "$tmp/info" 2>&1
check "D: -o with % and no --rotate is the literal name, closed cleanly" \
	grep -q '^verdict: OK: .*closed cleanly' "$tmp/info"
check "D: and nothing else is written" [ "$(nfiles "$d")" -eq 1 ]

# ---- E: --rotate-size smaller than what a file starts with -----------------
# --kallsyms=full writes the whole kernel table (about 1 MB) into every file
# as it opens; a SIZE of 1K is less.  Each file must still hold the rows of
# a flush (the start is not what SIZE counts): as many files as flushes at
# the most, not one per pass of the main loop.
e=$tmp/e
mkdir "$e"
rot_start E -p "$cw" -F 49 --kallsyms=full --flush-interval 0.25 --rotate-size 1K \
	-o "$e/s-%H%M%S.stk"
rot_stop E "$e" 5
n=$(nfiles "$e")
empty= flushes=0
for f in $(files "$e"); do
	"$DUMP" "$e/$f" > "$tmp/e.dump"
	rows=$(awk -F'\t' '$1 == "CHUNK" && $3 == "CNTS"' "$tmp/e.dump" | wc -l)
	flushes=$((flushes + rows))
	reason=$(awk -F'\t' '$1 == "META" && $2 == "end_reason" { v = $3 } END { print v }' "$tmp/e.dump")
	[ "$reason" = signal ] || [ "$rows" -gt 0 ] || empty="$empty $f"
done
check "E: every rotated file holds a flush's rows (none in:$empty)" [ -z "$empty" ]
# The last file may end before its first flush's rows.
check "E: $n files for $flushes flushes with rows: one a file at the most" \
	[ "$n" -le $((flushes + 1)) ]

# ---- F: a copied stack is in the file that holds its rows -----------------
# A process started during the recording is sampled before its unwind
# table is in: stkrec copies the stack and unwinds it once the table is
# built, up to two flushes later.  The CFI bomb's table (tests/tools/
# cfibomb.S, as in record_slowcfi) takes seconds to build, so with
# --rotate 1 its copies are still waiting at every rotation: the file
# that ends must still hold every stack its rows name (STCK), never a row
# whose stack is in no file or in the next one.
BOMB=$O/tests/tools/libcfibomb.so
need_files "$BOMB" "$O/tests/tools/setbuildid" "$O/tests/tools/cfiload"
f=$tmp/f
mkdir "$f" "$tmp/bombs"
# One copy, under a build-id no recorder has met: its table is seconds
# of the recorder's worker, the load this test puts on the machine.
cp "$BOMB" "$tmp/bombs/c1.so"
"$O/tests/tools/setbuildid" "$tmp/bombs/c1.so" "$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')" ||
	fail "F: c1.so: its own build-id"
rot_start F -q --rotate 1 --unwind-cache none -o "$f/r-%H%M%S.stk"
wait_until at_least "$f" 1 || fail "F: no file ($(cat "$tmp/F.err"))"
bg "$O/tests/tools/cfiload" "$tmp/bombs/c1.so"
loader=$bg_pid
# 5 rotations after the loader's start.
rot_stop F "$f" $(($(nfiles "$f") + 5))
stop "$loader"
# stacks_in FILE: "rows_of_the_loader stacks_copied missing_ids" of a capture.
stacks_in() {
	"$DUMP" "$1" | awk -F'\t' -v l="$loader" '
		$1 == "STCK" { have[$2] = 1 }
		$1 == "CNTS" { if ($2 == l) rows++; if ($5 > 0) need[$5] = 1; if ($6 > 0) need[$6] = 1 }
		$1 == "STAT" && $2 == "unwind_deferred" { dfr = $3 }
		END { for (id in need) if (!(id in have)) miss = miss "," id
		      printf "%d %d %s\n", rows, dfr, miss == "" ? "-" : substr(miss, 2) }'
}
bad= rows=0 dfr=0
for g in $(files "$f"); do
	set -- $(stacks_in "$f/$g")
	rows=$(($rows + $1))
	dfr=$(($dfr + $2))
	[ "$3" = - ] || bad="$bad $g: $3;"
done
echo "note: F: $(nfiles "$f") files, $rows rows of the loader, $dfr stacks copied"
check "F: rows of the loader were recorded ($rows)" [ "$rows" -gt 0 ]
check "F: every file holds every stack its rows name (missing:$bad)" [ -z "$bad" ]

stop "$cw"
finish
