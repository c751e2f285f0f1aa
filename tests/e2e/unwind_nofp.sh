#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_nofp: user stacks of a program built without frame pointers
# (tests/unwind/nofpwork.c, -O2 -fomit-frame-pointer, mk/unwind.mk) are
# whole with the default --unwind=auto, on-CPU and off-CPU:
#  - >= 97% of its samples rooted at _start (through main),
#  - the known 50/30/20 split of main;alpha;burn, main;beta;gamma_;burn,
#    main;beta;delta;burn (burn called 5, 3 and 2 times a round, in a
#    shuffled order), each within share_ok's tolerance (4.5 binomial
#    standard deviations of the sample count, at least 2 points),
#  - --unwind=fp on the same program does not get there (what this guards),
#  - blocked on a pipe, the stack shows main;reader;read (the caller of
#    read(), which the frame pointers never reach from libc's __read), and
#    with offwake the waker's side shows write;writer;main;..;_start (the
#    blocks judged start once the recording has the reader's maps, hence
#    its tables, not after a sleep),
#  - META says which unwinder ran, STAT counts the tables;
#  - the same program linked without .eh_frame_hdr, and linked -static
#    (GCC links those without it; glibc's FDEs are in the binary too):
#    their .eh_frame's FDEs are scanned, and >= 99% of the samples after
#    the first second are rooted at _start (the static one's through
#    __libc_start_main_impl;__libc_start_call_main, glibc's own frames),
#    >= 90% of the whole run's: a process's first ~20-30 ms are unwound
#    before its tables, or libc's mapping, are in the kernel (counted as
#    fallbacks and stops), and on a loaded machine those few samples are
#    a larger share of a short run,
#  - the same program built -fno-asynchronous-unwind-tables -g, its CFI
#    in .debug_frame only: rooted at _start the same way, the table
#    counted in STAT unwind_tables_debug_frame,
#  - the same program with no CFI at all (no table): frame pointers, as
#    --unwind=fp, flagged [unwind stopped: frame pointer] and counted
#    (unwind_table_err_no_cfi), and stkreport counts those stops (info per
#    reason, the summary line as a share).
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Every nofpwork run is -- CMD (recorded from its first instruction) with
# -c: it runs for SECONDS of its own CPU time, so a recording at F Hz gets
# about SECONDS x F samples however busy the machine is, and the sample
# counts the checks need (>= 200, > 50) come from the work done, not from
# the machine's load.  It still runs alone: "after the first second"
# (--since 1) is judged on the clock, and other tests' load stretches the
# start-up a process's first samples are unwound in.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

NOFP=$O/tests/unwind/nofpwork
need_files "$NOFP" "$NOFP"_nohdr "$NOFP"_static "$NOFP"_nocfi "$NOFP"_dbgframe

# shares FOLDED: "total rooted alpha gamma delta" over nofpwork's samples.
shares() {
	awk '
	$0 ~ /^nofpwork;/ {
		n = $NF; total += n
		if ($0 ~ /^nofpwork;_start;.*;main;/) rooted += n
		if ($0 ~ /;main;alpha;burn /) a += n
		if ($0 ~ /;main;beta;gamma_;burn /) g += n
		if ($0 ~ /;main;beta;delta;burn /) d += n
	}
	END { printf "%d %d %d %d %d\n", total, rooted, a, g, d }' "$1"
}

# 999 Hz for 3 CPU seconds: ~3000 samples, a share's tolerance ~4 points.
"$REC" -q -F 999 -o "$tmp/auto.stk" -- "$NOFP" -c 3 >/dev/null
rc=$?
check "stkrec -- nofpwork exits 0 (got $rc)" [ "$rc" -eq 0 ]
"$REP" -f folded "$tmp/auto.stk" >"$tmp/auto.folded" 2>/dev/null
set -- $(shares "$tmp/auto.folded")
total=$1 rooted=$2 sa=$3 sg=$4 sd=$5
echo "     auto: $total samples, $rooted rooted at _start;..;main, alpha $sa gamma $sg delta $sd"
check "auto: >= 97% of $total samples rooted at _start..main ($rooted)" \
	[ "$total" -ge 200 -a $((rooted * 100)) -ge $((total * 97)) ]
share_ok "auto: main;alpha;burn" "$sa" "$total" 50
share_ok "auto: main;beta;gamma_;burn" "$sg" "$total" 30
share_ok "auto: main;beta;delta;burn" "$sd" "$total" 20
"$DUMP" "$tmp/auto.stk" >"$tmp/auto.dump"
check "auto: META unwind auto, unwind_used auto" \
	sh -c "grep -q '^META	unwind	auto$' '$tmp/auto.dump' && grep -q '^META	unwind_used	auto$' '$tmp/auto.dump'"
check "auto: STAT counts unwound stacks and tables" \
	sh -c "grep -q '^STAT	unwind_stacks	[1-9]' '$tmp/auto.dump' && grep -q '^STAT	unwind_tables	[1-9]' '$tmp/auto.dump' && grep -q '^STAT	unwind_rows	[1-9]' '$tmp/auto.dump'"

"$REC" -q --unwind=fp -F 199 -o "$tmp/fp.stk" -- "$NOFP" -c 2 >/dev/null
"$REP" -f folded "$tmp/fp.stk" >"$tmp/fp.folded" 2>/dev/null
set -- $(shares "$tmp/fp.folded")
echo "     fp: $1 samples, $2 rooted"
check "fp: frame pointers do not reach main in nofpwork ($2 of $1 rooted)" \
	[ "$1" -gt 0 -a $(($2 * 100)) -lt $(($1 * 50)) ]
"$DUMP" "$tmp/fp.stk" >"$tmp/fp.dump"
check "fp: META unwind_used fp, no unwind STAT" \
	sh -c "grep -q '^META	unwind_used	fp$' '$tmp/fp.dump' && ! grep -q '^STAT	unwind_stacks' '$tmp/fp.dump'"

# rooted FOLDED COMM ROOT: "total rooted" over COMM's samples, rooted
# meaning COMM;ROOT;..;main;.
rooted() {
	awk -v c="$2;" -v r="$2;$3;" '
	index($0, c) == 1 { t += $NF; if (index($0, r) == 1 && $0 ~ /;main;/) m += $NF }
	END { printf "%d %d\n", t, m }' "$1"
}

# rooted_run NAME LABEL ROOT: record "$NOFP"NAME 2 CPU s at 999 Hz into
# $tmp/NAME.stk, check >= 99% of its samples after the first second
# (--since 1) and >= 90% of all of them rooted at ROOT..main.
rooted_run() {
	"$REC" -q -F 999 -o "$tmp/$1.stk" -- "$NOFP$1" -c 2 >/dev/null
	"$REP" -f folded "$tmp/$1.stk" >"$tmp/$1.folded" 2>/dev/null
	"$REP" -f folded --since 1 "$tmp/$1.stk" >"$tmp/$1.late" 2>/dev/null
	_comm=$(echo "nofpwork$1" | cut -c1-15)
	set -- "$2" "$3" $(rooted "$tmp/$1.folded" "$_comm" "$3") $(rooted "$tmp/$1.late" "$_comm" "$3")
	echo "     $1: $4 of $3 samples rooted at $2;..;main, $6 of $5 after the first second"
	check "$1: >= 99% of $5 samples after the first second rooted at $2..main ($6)" \
		[ "$5" -ge 200 -a $(($6 * 100)) -ge $(($5 * 99)) ]
	check "$1: >= 90% of all $3 samples rooted there ($4)" \
		[ "$3" -ge "$5" -a $(($4 * 100)) -ge $(($3 * 90)) ]
}

rooted_run _nohdr "no .eh_frame_hdr" _start
rooted_run _static static "_start;__libc_start_main_impl;__libc_start_call_main;main"
"$DUMP" "$tmp/_static.stk" >"$tmp/static.dump"
check "static: its table built (unwind_tables_scanned), no unwind_table_err_no_cfi" \
	sh -c "grep -q '^STAT	unwind_tables_scanned	[1-9]' '$tmp/static.dump' && ! grep -q '^STAT	unwind_table_err_no_cfi	[1-9]' '$tmp/static.dump'"

rooted_run _dbgframe .debug_frame _start
"$DUMP" "$tmp/_dbgframe.stk" >"$tmp/dbgframe.dump"
check ".debug_frame: STAT unwind_tables_debug_frame counts its table" \
	grep -q '^STAT	unwind_tables_debug_frame	[1-9]' "$tmp/dbgframe.dump"

"$REC" -q -F 199 -o "$tmp/nocfi.stk" -- "$NOFP"_nocfi -c 1 >/dev/null
"$REP" -f folded "$tmp/nocfi.stk" >"$tmp/nocfi.folded" 2>/dev/null
"$DUMP" "$tmp/nocfi.stk" >"$tmp/nocfi.dump"
set -- $(awk '/^nofpwork_nocfi;/ { t += $NF; if ($0 ~ /^nofpwork_nocfi;\[unwind stopped: frame pointer\];.*burn /) m += $NF }
	END { printf "%d %d\n", t, m }' "$tmp/nocfi.folded")
echo "     no CFI: $2 of $1 samples flagged by the frame-pointer marker"
check "no table: >= 90% of $1 samples are frame-pointer stacks of burn, flagged ($2)" \
	[ "$1" -gt 50 -a $(($2 * 10)) -ge $(($1 * 9)) ]
check "no table: STAT unwind_table_err_no_cfi counts the binary" \
	grep -q '^STAT	unwind_table_err_no_cfi	[1-9]' "$tmp/nocfi.dump"
# The report counts those stops: info per reason, the summary as a share.
"$REP" info "$tmp/nocfi.stk" >"$tmp/nocfi.info" 2>/dev/null
"$REP" "$tmp/nocfi.stk" 2>"$tmp/nocfi.summary" >/dev/null
fpm=$(awk '/\[unwind stopped: frame pointer\]/ { m += $NF } END { print m + 0 }' "$tmp/nocfi.folded")
set -- $(awk '/^unwind stopped: frame pointer / { p = $7; gsub(/[(),]/, "", p); print $5, p }' "$tmp/nocfi.info") x x
echo "     info: unwind stopped: frame pointer $1 samples $2; folded: $fpm"
check "no table: info counts the $fpm frame-pointer stops ($1)" [ "$1" = "$fpm" -a "$fpm" -gt 0 ]
check "no table: the summary gives their share $2" \
	grep -q "user stacks stopped early (.*frame pointer $2" "$tmp/nocfi.summary"

# gate FILE: a script that writes "a" lines to the reader (one every 0.1
# s) until the recording FILE has the maps of a nofpwork process: stkrec
# reads a process's maps and loads its tables in one step (procs.c), so
# from then on its stacks are unwound by table.  The maps are written once
# a row references them: the lines end the reader's blocks (maybe unwound
# before its tables), and such a row comes at the next flush.  The 120 s
# bound only prevents a hang.
gate() {
	cat >"$tmp/gate.sh" <<GATE
i=0
until "$DUMP" "$1" 2>/dev/null | awk -F'\t' '\$1 == "MAPS" && \$3 == "nofpwork" { f = 1 } END { exit !f }'; do
	[ \$i -ge 1200 ] && exit 1
	echo a
	sleep 0.1
	i=\$((i + 1))
done
GATE
	echo "$tmp/gate.sh"
}

# Off-CPU: reads blocked on a pipe.  Those the gate ends may start before
# the tables are loaded; the one after it starts after they are and lasts
# >= 1 s: it must show the caller of read().
g=$(gate "$tmp/off.stk")
"$REC" offcpu -q -o "$tmp/off.stk" -- sh -c "(sh '$g'; echo b; sleep 1; echo c) | '$NOFP' read" >/dev/null
"$REP" -f folded "$tmp/off.stk" >"$tmp/off.folded" 2>/dev/null
us=$(awk '/^nofpwork;_start;.*;main;reader;(__)?read;/ { s += $NF } END { print s + 0 }' "$tmp/off.folded")
echo "     offcpu: $us us blocked under main;reader;read"
check "offcpu: >= 0.9 s blocked under _start..main;reader;read ($us us)" [ "$us" -ge 900000 ]

# Off-wake: the reader blocked in read(), woken by the writer's write().
# The writer starts once the reader's tables are loaded (gate); its own
# are loaded at its exec, and its ten writes 0.3 s apart block the reader
# >= 3 s, of which >= 1 s must have both stacks whole.
g=$(gate "$tmp/ow.stk")
"$REC" offwake -q -o "$tmp/ow.stk" -- sh -c "(sh '$g'; exec '$NOFP' write 10) | '$NOFP' read >/dev/null" >/dev/null
"$REP" -f folded "$tmp/ow.stk" >"$tmp/ow.folded" 2>/dev/null
us=$(awk '/^nofpwork;_start;.*;main;reader;(__)?read;.*;--;.*;(__)?write;writer;main;.*;_start;nofpwork / { s += $NF }
	END { print s + 0 }' "$tmp/ow.folded")
echo "     offwake: $us us blocked in main;reader;read and woken from main;writer;write"
check "offwake: >= 1 s with both whole stacks, the reader's and the writer's ($us us)" [ "$us" -ge 1000000 ]

finish
