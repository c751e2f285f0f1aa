#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_usermem: --user-memory bounds what stkrec keeps of symbol tables
# and perf maps, whatever unprivileged processes map, and the names still
# reach the capture.
#
#  - Symbol tables: symbigwork (as nobody) writes 12 copies of libsymbig.so
#    (300,000 function symbols: a 20 MB table each) under 12 build-ids,
#    loads and runs them all.  stkrec --user-memory 32 -p it: its peak
#    RSS stays under the RSS of the same recording with
#    --embed-symbols=none, plus the budget, plus two library files' size
#    (the table being read and its read buffers; stkrec before the budget
#    kept every table: 280 MB here); the budget's own peak is within it;
#    once the copies are deleted, every copy's samples are named from the
#    capture's embedded symbols.
#  - Perf maps: two jitbloat processes (as nobody) whose /tmp/perf-PID.map
#    hold 60 MB of lines each and gain lines (and new code) every half
#    second.  stkrec --user-memory 32 -p both: peak RSS under the same
#    base plus the budget plus 16 MiB (before: 297 MB, each file read
#    whole again whenever it changed); the bytes read are the files' sizes
#    once (STAT perf_map_bytes_read: read incrementally), all of them by
#    the reader thread (STAT reader_perf_map_bytes: none on the main loop,
#    which cost it 0.2 s a flush before); lines over the cap are counted,
#    said in one line at the end; the JIT frames are named.
#
# The peak RSS is the recorder's STAT rss_peak_bytes (its own VmHWM at the
# last flush), or VmHWM read from /proc while it ran if larger (a recorder
# without that STAT).  Workloads run until the test kills them; each
# recording is DURATION 6 at -F 499: 3000 samples of symbigwork on an idle
# machine, 500 where it gets a sixth of a CPU (it got 140 at -F 199 beside
# three other tests' CPU hogs), so that a copy without samples (nothing
# to name, and a table fewer to read) has a chance under 12 x (11/12)^500,
# 1e-17.
# Exit 77 only when BPF cannot be used (not root, or no BTF), setpriv or
# user nobody is missing, or (perf maps) not x86-64.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

SYMBIG=$O/tests/tools/libsymbig.so
need_files "$SYMBIG" "$O/tests/tools/symbigwork" "$O/tests/tools/jitbloat"
need_cmds setpriv
id nobody > /dev/null 2>&1 || skip_test "needs user nobody"
NOBODY="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
chmod 711 "$tmp"
cp "$SYMBIG" "$O/tests/tools/symbigwork" "$O/tests/tools/jitbloat" "$tmp/" &&
	chmod 755 "$tmp/libsymbig.so" "$tmp/symbigwork" "$tmp/jitbloat"
BUDGET_MB=32
COPIES=12

# record NAME PIDS OPTS...: stkrec -q -F 499 OPTS -p PIDS -o NAME.stk 6,
# its stderr in NAME.err, exit status in NAME.rc, and the last VmHWM read
# from /proc while it ran (kB) in NAME.hwm.
record() {
	_n=$1 _p=$2
	shift 2
	"$REC" -q -F 499 "$@" -p "$_p" -o "$tmp/$_n.stk" 6 2> "$tmp/$_n.err" &
	_r=$!
	echo 0 > "$tmp/$_n.hwm"
	while kill -0 "$_r" 2>/dev/null; do
		_h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$_r/status" 2>/dev/null)
		[ -n "$_h" ] && echo "$_h" > "$tmp/$_n.hwm"
		sleep 0.2
	done
	wait "$_r"
	echo $? > "$tmp/$_n.rc"
}

# peak_mb NAME: the recording's peak RSS in MiB (see above).
peak_mb() {
	_s=$(stat_of "$tmp/$1.stk" rss_peak_bytes)
	awk -v s="$_s" -v h="$(cat "$tmp/$1.hwm")" 'BEGIN {
		s /= 1048576; h /= 1024; printf "%d\n", (s > h ? s : h) + 0.5 }'
}

# ---- many large symbol tables ----------------------------------------------

mkdir "$tmp/w" && chown nobody "$tmp/w"
bg $NOBODY "$tmp/symbigwork" "$tmp/libsymbig.so" "$tmp/w" $COPIES > "$tmp/sym.ready"
sym=$bg_pid
wait_until grep -q '^ready$' "$tmp/sym.ready" ||
	{ fail "symbigwork started ($(cat "$tmp/sym.ready"))"; finish; }

record base "$sym" --embed-symbols=none
record sym "$sym" --user-memory $BUDGET_MB
stop "$sym"
for n in base sym; do
	check "$n: stkrec exit 0 ($(cat "$tmp/$n.err"))" [ "$(cat "$tmp/$n.rc")" -eq 0 ]
done
base=$(peak_mb base)
lib_mb=$(( ($(stat -L -c %s "$SYMBIG") + 1048575) / 1048576 ))
bound=$((base + BUDGET_MB + 2 * lib_mb))
got=$(peak_mb sym)
check "tables: peak RSS ${got} MiB <= ${bound} (without symbols ${base} + budget $BUDGET_MB + 2 x the library's $lib_mb)" \
	[ "$got" -le "$bound" ]
mem_peak=$(stat_of "$tmp/sym.stk" user_memory_peak_bytes)
check "tables: the budget's peak ($mem_peak bytes) is within it" \
	within "$mem_peak" 1 $((BUDGET_MB * 1048576))
evicted=$(stat_of "$tmp/sym.stk" esym_tables_evicted)
check "tables: the budget bound (STAT esym_tables_evicted $evicted)" [ "$evicted" -gt 0 ]
check "tables: no symbol left out (STAT esym_symbols_skipped)" \
	[ "$(stat_of "$tmp/sym.stk" esym_symbols_skipped)" -eq 0 ]

# The copies gone, only the capture can name them.
rm -f "$tmp"/w/*.so
"$REP" info --symbols "$tmp/sym.stk" > "$tmp/sym.info" 2>&1
# module, samples, source of each copy: "N SAMPLES SOURCE".
awk '$1 == "module:" { m = ($2 ~ /\/libsymbig-[0-9]+\.so$/) ? $2 : ""; s = 0 }
	m != "" && $1 == "samples:" { s = $2 }
	m != "" && $1 == "source:" { sub(/^ *source: /, ""); print m, s, $0; m = "" }' \
	"$tmp/sym.info" > "$tmp/sym.mods"
sampled=$(awk '$2 > 0' "$tmp/sym.mods" | wc -l)
embedded=$(awk '$2 > 0 && /embedded symbols$/' "$tmp/sym.mods" | wc -l)
check "tables: all $COPIES copies sampled ($sampled)" [ "$sampled" -eq $COPIES ]
if [ "$embedded" -eq "$sampled" ]; then
	pass "tables: each sampled copy named from embedded symbols ($embedded)"
else
	fail "tables: each sampled copy named from embedded symbols ($embedded of $sampled)" \
		"$(awk '$2 > 0 && !/embedded symbols$/' "$tmp/sym.mods" | head -3)"
fi
"$REP" --no-debuginfod -f folded "$tmp/sym.stk" > "$tmp/sym.folded" 2>/dev/null
spin=$(awk '/^symbigwork;/ && /;symbig_spin [0-9]+$/ { n += $NF } END { print n + 0 }' "$tmp/sym.folded")
all=$(awk '/^symbigwork;/ { n += $NF } END { print n + 0 }' "$tmp/sym.folded")
# The workload spins in symbig_spin but for its loop in main: 1% of it.
check "tables: symbig_spin names the leaf of $spin of $all samples (>= 90%)" \
	[ "$all" -gt 0 -a $((spin * 100)) -ge $((all * 90)) ]

# ---- large perf maps that keep growing -------------------------------------

if [ "$(uname -m)" != x86_64 ]; then
	skip "perf maps" "jitbloat is x86-64 code"
	finish
fi
for i in 1 2; do
	bg $NOBODY "$tmp/jitbloat" 60 > "$tmp/jit$i.ready"
	eval "jit$i=\$bg_pid"
	at_exit="${at_exit:+$at_exit; }rm -f /tmp/perf-$bg_pid.map"
done
for i in 1 2; do
	wait_until grep -q '^/tmp/perf-' "$tmp/jit$i.ready" ||
		{ fail "jitbloat $i wrote its map"; finish; }
done
record jit "$jit1,$jit2" --user-memory $BUDGET_MB
map_bytes=$(( $(stat -c %s "/tmp/perf-$jit1.map") + $(stat -c %s "/tmp/perf-$jit2.map") ))
stop "$jit1"
stop "$jit2"
check "jit: stkrec exit 0 ($(cat "$tmp/jit.err"))" [ "$(cat "$tmp/jit.rc")" -eq 0 ]
got=$(peak_mb jit)
bound=$((base + BUDGET_MB + 16))
check "jit: peak RSS ${got} MiB <= ${bound} (without symbols ${base} + budget $BUDGET_MB + 16)" \
	[ "$got" -le "$bound" ]
read_bytes=$(stat_of "$tmp/jit.stk" perf_map_bytes_read)
check "jit: the maps read once, what they gained since too: $read_bytes bytes read of $map_bytes" \
	within "$read_bytes" $((map_bytes * 9 / 10)) "$map_bytes"
reader_bytes=$(stat_of "$tmp/jit.stk" reader_perf_map_bytes)
check "jit: all of it read on the reader thread, none on the main loop ($reader_bytes of $read_bytes)" \
	[ "$read_bytes" -gt 0 -a "$reader_bytes" = "$read_bytes" ]
not_kept=$(stat_of "$tmp/jit.stk" perf_map_lines_skipped)
check "jit: lines over the cap counted (STAT perf_map_lines_skipped $not_kept)" [ "$not_kept" -gt 0 ]
check "jit: one line says so at the end" \
	grep -q "^stkrec: --user-memory $BUDGET_MB MiB reached: $not_kept perf map lines not kept" "$tmp/jit.err"
"$REP" --no-debuginfod -f folded "$tmp/jit.stk" > "$tmp/jit.folded" 2>/dev/null
named=$(awk '/^jitbloat;/ && /;LazyCompile:\*jit_hot_[0-9]+ [^;]* [0-9]+$/ { n += $NF } END { print n + 0 }' "$tmp/jit.folded")
jit=$(awk '/^jitbloat;/ && /;(LazyCompile:[^;]*|\[unknown\]) [0-9]+$/ { n += $NF } END { print n + 0 }' "$tmp/jit.folded")
check "jit: the JIT frames named: $named of $jit samples in JIT code or unnamed (>= 90%)" \
	[ "$jit" -gt 0 -a $((named * 100)) -ge $((jit * 90)) ]
finish
