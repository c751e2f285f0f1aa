#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: a capture reports without the recorded binaries
# (--embed-symbols, ESYM kinds 2 and 3).  Workloads: embedwork and its
# libembedwork.so copied to a temporary directory, jitwork (JIT code named
# by /tmp/perf-PID.map).  Checks:
#  - default (covering): binary and library deleted before the report,
#    every workload function is named, from "embedded symbols";
#  - --embed-symbols=none: the same report has [unknown] there (so the
#    embedded data is what named them); full embeds more, names the same;
#  - JIT: the frames are named by the map's line, also once the map file
#    is gone; the capture holds only the covering line; the map was read
#    on the reader thread (STAT reader_perf_map_bytes), not the main loop;
#  - a process in its own mount namespace, its binary reachable only
#    through a bind mount there: named, and its build-id recorded;
#  - a binary deleted while it runs: named (its files removed once it has
#    mapped them, the recording stopped two flushes later);
#  - a recording killed with kill -9 (the embedded symbols flushed with the
#    rows), its files then deleted: named;
#  (those two workloads run until the test stops them: no sleeps.)
#  - without embedded symbols, a container's root given with --sysroot;
#  - a flipped byte in an ESYM chunk: one error line, and the rest reports.
#
# Exit 77 (skip) only when BPF cannot be used here: not root, or no BTF.
#
# Runs alone: under a loaded parallel make check one sample of the
# deleted-while-running process, taken as it exited, kept unnamed user
# frames (not understood yet; it has not reproduced alone).
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

EW=$O/tests/tools/embedwork
EL=$O/tests/tools/libembedwork.so
JW=$O/tests/tools/jitwork
need_files "$EW" "$EL" "$JW"

WORK_FUNCS="embedwork_own embedwork_loop embedlib_spin embedlib_leaf main"

# copy_work DIR: embedwork and its library into DIR.
copy_work() {
	mkdir -p "$1" && cp "$EW" "$EL" "$1/"
}

# named FOLDED FUNC: FUNC is a frame of some embedwork stack.
named() {
	grep '^embedwork;' "$1" | tr ';' '\n' | sed 's/ [0-9]*$//' | grep -qx "$2"
}

# all_named FOLDED WHAT: every workload function is named.
all_named() {
	_ok=1
	for _f in $WORK_FUNCS; do
		named "$1" "$_f" || { _ok=0; fail "$2: $_f not named" "$(head -3 "$1")"; }
	done
	[ $_ok = 1 ] && pass "$2: every workload function named ($WORK_FUNCS)"
}

# ---- default: covering; binary and library deleted ----------------------

copy_work "$tmp/a"
if ! "$REC" -q -o "$tmp/a.stk" -- "$tmp/a/embedwork" 2 >/dev/null 2>"$tmp/rec.err"; then
	fail "stkrec -- embedwork 2" "$(cat "$tmp/rec.err")"
	finish
fi
copy_work "$tmp/n"
"$REC" -q --embed-symbols=none -o "$tmp/n.stk" -- "$tmp/n/embedwork" 2 >/dev/null 2>&1 ||
	fail "stkrec --embed-symbols=none"
copy_work "$tmp/f"
"$REC" -q --embed-symbols=full -o "$tmp/f.stk" -- "$tmp/f/embedwork" 2 >/dev/null 2>&1 ||
	fail "stkrec --embed-symbols=full"
rm -rf "$tmp/a" "$tmp/n" "$tmp/f"

check "META embed_symbols is covering by default" test "$(meta_of "$tmp/a.stk" embed_symbols)" = covering
"$REP" --no-debuginfod -f folded "$tmp/a.stk" >"$tmp/a.folded" 2>/dev/null
all_named "$tmp/a.folded" "covering, files deleted"
check "covering: no embedwork frame is [unknown]" sh -c "! grep '^embedwork;' '$tmp/a.folded' | grep -q 'unknown'"
"$REP" info --symbols "$tmp/a.stk" >"$tmp/a.sym" 2>&1
for m in embedwork libembedwork.so; do
	check "info --symbols: $m from embedded symbols" \
		awk -v m="$tmp/a/$m" '$1 == "module:" { cur = $2 } cur == m && /^  source: embedded symbols$/ { ok = 1 } END { exit !ok }' "$tmp/a.sym"
done
"$REP" info "$tmp/a.stk" >"$tmp/a.info" 2>&1
cov=$(awk '/^embedded symbols: / { print $3; exit }' "$tmp/a.info")
# The two binaries' sampled functions, and libc's exported ones at most.
check "covering: a few symbols only ($cov)" within "${cov:-0}" 5 40
check "info: the cost in bytes" grep -q '^embedded bytes: [1-9]' "$tmp/a.info"

# Replaced: another binary (another build-id) at the recorded path is
# refused, and the capture's symbols name the frames.
mkdir -p "$tmp/a" && cp /bin/true "$tmp/a/embedwork"
"$REP" --no-debuginfod -f folded "$tmp/a.stk" >"$tmp/r.folded" 2>/dev/null
all_named "$tmp/r.folded" "a replaced binary at the recorded path"
"$REP" info --symbols "$tmp/a.stk" >"$tmp/r.sym" 2>&1
check "replaced: the other file is refused for its build-id" \
	grep -qx "  refused: $tmp/a/embedwork (another build-id)" "$tmp/r.sym"
check "replaced: true's names are never used" sh -c "! grep -q '^embedwork;.*usage' '$tmp/r.folded'"
rm -rf "$tmp/a"

check "META embed_symbols none" test "$(meta_of "$tmp/n.stk" embed_symbols)" = none
"$REP" --no-debuginfod -f folded "$tmp/n.stk" >"$tmp/n.folded" 2>/dev/null
check "none: the workload's frames are [unknown]" grep -q '^embedwork;.*\[unknown\]' "$tmp/n.folded"
check "none: embedwork_own is not named" sh -c "! grep -q embedwork_own '$tmp/n.folded'"
"$REP" info "$tmp/n.stk" >"$tmp/n.info" 2>&1
check "none: no symbol embedded" sh -c "! grep -q '^embedded symbols: [1-9]' '$tmp/n.info'"

"$REP" --no-debuginfod -f folded "$tmp/f.stk" >"$tmp/f.folded" 2>/dev/null
all_named "$tmp/f.folded" "full, files deleted"
"$REP" info "$tmp/f.stk" >"$tmp/f.info" 2>&1
full=$(awk '/^embedded symbols: / { print $3; exit }' "$tmp/f.info")
check "full embeds more than covering ($full > $cov)" test "${full:-0}" -gt "${cov:-0}"

# ---- JIT: /tmp/perf-PID.map -------------------------------------------------

if [ "$(uname -m)" = x86_64 ]; then
	"$REC" -q -o "$tmp/j.stk" -- "$JW" 2 >"$tmp/j.out" 2>"$tmp/j.err" ||
		fail "stkrec -- jitwork 2" "$(cat "$tmp/j.err")"
	map=$(head -1 "$tmp/j.out")
	case $map in /tmp/perf-*.map) rm -f "$map" ;; *) fail "jitwork wrote no map ($map)" ;; esac
	"$REP" --no-debuginfod "$tmp/j.stk" >"$tmp/j.txt" 2>/dev/null
	check "JIT frames named by the perf map, the map file deleted" \
		grep -q 'LazyCompile:\*jit_spin /app/jit.js:7' "$tmp/j.txt"
	check "only the covering line is embedded" sh -c "! grep -q not_this_one '$tmp/j.stk' '$tmp/j.txt'"
	check "STAT perf_map_symbols_written is 1" test "$(stat_of "$tmp/j.stk" perf_map_symbols_written)" = 1
	pm_read=$(stat_of "$tmp/j.stk" perf_map_bytes_read)
	pm_reader=$(stat_of "$tmp/j.stk" reader_perf_map_bytes)
	check "the perf map read on the reader thread, none on the main loop ($pm_reader of $pm_read bytes)" \
		[ "$pm_read" -gt 0 -a "$pm_reader" = "$pm_read" ]
	"$REP" info --symbols "$tmp/j.stk" >"$tmp/j.sym" 2>&1
	check "info --symbols: source perf map" grep -qx '  source: perf map' "$tmp/j.sym"
else
	skip "JIT perf map" "jitwork's code is x86-64"
fi

# ---- a mount namespace hides the binary from the host path --------------

if command -v unshare >/dev/null 2>&1 && unshare --mount true 2>/dev/null; then
	copy_work "$tmp/nsbin"
	mkdir -p "$tmp/hidden"
	want=$(readelf -n "$tmp/nsbin/embedwork" | awk '/Build ID:/ { print $3 }')
	"$REC" -q -o "$tmp/ns.stk" -- unshare --mount --propagation private --fork sh -c \
		"mount --bind '$tmp/nsbin' '$tmp/hidden' && exec '$tmp/hidden/embedwork' 2" \
		>/dev/null 2>"$tmp/ns.err" || fail "stkrec -- unshare --mount" "$(cat "$tmp/ns.err")"
	rm -rf "$tmp/nsbin"
	check "host path of the namespaced binary is empty" test ! -e "$tmp/hidden/embedwork"
	got=$("$DUMP" "$tmp/ns.stk" | awk -F'\t' -v p="$tmp/hidden/embedwork" '$1 == "MAP" && $10 == p { print $9 }' | sort -u)
	check "namespace: build-id recorded ($got)" test -n "$want" -a "$got" = "$want"
	"$REP" --no-debuginfod -f folded "$tmp/ns.stk" >"$tmp/ns.folded" 2>/dev/null
	all_named "$tmp/ns.folded" "mount namespace, no --sysroot"
	# Without embedded symbols the container's root file system, given
	# with --sysroot, names them: the recorded path under it.
	copy_work "$tmp/nsbin"
	"$REC" -q --embed-symbols=none -o "$tmp/nsn.stk" -- unshare --mount --propagation private \
		--fork sh -c "mount --bind '$tmp/nsbin' '$tmp/hidden' && exec '$tmp/hidden/embedwork' 2" \
		>/dev/null 2>"$tmp/ns.err" || fail "stkrec --embed-symbols=none -- unshare --mount" "$(cat "$tmp/ns.err")"
	mkdir -p "$tmp/croot$tmp/hidden"
	mv "$tmp/nsbin/embedwork" "$tmp/nsbin/libembedwork.so" "$tmp/croot$tmp/hidden/"
	"$REP" --no-debuginfod -f folded "$tmp/nsn.stk" >"$tmp/nsn.folded" 2>/dev/null
	check "namespace, none, no --sysroot: the workload is [unknown]" \
		sh -c "! grep -q embedwork_own '$tmp/nsn.folded'"
	"$REP" --no-debuginfod --sysroot "$tmp/croot" -f folded "$tmp/nsn.stk" >"$tmp/nsr.folded" 2>/dev/null
	all_named "$tmp/nsr.folded" "mount namespace, none, --sysroot the container's root"
	"$REP" info --symbols --sysroot "$tmp/croot" "$tmp/nsn.stk" >"$tmp/nsr.sym" 2>&1
	check "info --symbols: source sysroot" grep -q 'source: sysroot' "$tmp/nsr.sym"
else
	skip "mount namespace" "unshare --mount not usable here"
fi

# ---- deleted while it runs --------------------------------------------------

# flushes_past N: the recording in $rec_file has flushed N times or more.
flushes_past() {
	[ "$(stat_of "$rec_file" flushes 2>/dev/null)" -ge "$1" ]
}
# lib_mapped PIDFILE: the process named in PIDFILE has mapped the library.
lib_mapped() {
	[ -s "$1" ] && grep -q 'libembedwork\.so' "/proc/$(cat "$1")/maps" 2>/dev/null
}

# embedwork runs until the test stops it; its files go once it has mapped
# both (not after a sleep: a slow exec would find the binary gone), and it
# is stopped only after two flushes since, so that stacks sampled with the
# files gone are written, their symbols embedded from the running process.
copy_work "$tmp/del"
# embedwork is no child of this shell: should the test end early, the
# harness's kill of the recorder would leave it running.
at_exit='[ -s "$tmp/del.pid" ] && kill -KILL "$(cat "$tmp/del.pid")" 2>/dev/null'
bg "$REC" -q -o "$tmp/del.stk" -- sh -c \
	"'$tmp/del/embedwork' 3600 & echo \$! > '$tmp/del.pid'; wait; exit 0" \
	>/dev/null 2>"$tmp/del.err"
rpid=$bg_pid
rec_file=$tmp/del.stk
if wait_sampling "$tmp/del.stk" "$rpid" && wait_until lib_mapped "$tmp/del.pid"; then
	rm -f "$tmp/del/embedwork" "$tmp/del/libembedwork.so"
	f0=$(stat_of "$tmp/del.stk" flushes)
	wait_until flushes_past $((f0 + 2)) || fail "deleted while running: no two flushes in 120 s"
	kill -TERM "$(cat "$tmp/del.pid")"
	wait "$rpid"
	rc=$?
	rm -f "$tmp/del.pid"	# gone: at_exit must not kill a reused pid
	check "stkrec -- embedwork deleted while running: exit 0 (got $rc: $(cat "$tmp/del.err"))" [ $rc -eq 0 ]
	"$REP" --no-debuginfod -f folded "$tmp/del.stk" >"$tmp/del.folded" 2>/dev/null
	all_named "$tmp/del.folded" "binary deleted while it ran"
else
	fail "stkrec -- deleted while running: never sampling or never mapped the library" "$(cat "$tmp/del.err")"
fi

# ---- a recording killed with kill -9 keeps what it flushed ----------------

# embedwork runs until the test stops it; the recorder is killed once it
# has flushed twice after the first symbols were embedded, not after a time.
copy_work "$tmp/k9"
bg "$tmp/k9/embedwork" 3600
wpid=$bg_pid
bg "$REC" -q -p "$wpid" -o "$tmp/k9.stk"
rpid=$bg_pid
esym_flushed() {
	_e=$(stat_of "$tmp/k9.stk" esym_symbols_written 2>/dev/null)
	_f=$(stat_of "$tmp/k9.stk" flushes 2>/dev/null)
	[ "${_e:-0}" -gt 0 ] && [ "${_f:-0}" -ge 3 ]
}
wait_sampling "$tmp/k9.stk" "$rpid" && wait_until esym_flushed ||
	fail "kill -9: the recorder never flushed embedded symbols (in 120 s)"
kill -KILL "$rpid"
wait "$rpid" 2>/dev/null
stop "$wpid"
rm -rf "$tmp/k9"
"$REP" --no-debuginfod -f folded "$tmp/k9.stk" >"$tmp/k9.folded" 2>/dev/null
all_named "$tmp/k9.folded" "killed with kill -9, files deleted"

# ---- MiniDebugInfo: a stripped binary with .gnu_debugdata ---------------

if command -v xz >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1; then
	# As Fedora makes it: the function symbols of .symtab, xz-compressed in
	# a section of the stripped binary.
	copy_work "$tmp/mdi"
	b=$tmp/mdi/embedwork
	nm "$b" --format=posix --defined-only | awk '$2 ~ /[Tt]/ { print $1 }' >"$tmp/keep"
	objcopy --only-keep-debug "$b" "$tmp/dbg" &&
		objcopy -S --remove-section .gdb_index --remove-section .comment \
			--keep-symbols="$tmp/keep" "$tmp/dbg" "$tmp/mini" &&
		xz -f "$tmp/mini" && strip --strip-all "$b" &&
		objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$b" ||
		fail "making a MiniDebugInfo binary"
	check "the binary has no .symtab" sh -c "! readelf -S '$b' | grep -q '\.symtab'"
	"$REC" -q -o "$tmp/mdi.stk" -- "$b" 2 >/dev/null 2>&1 || fail "stkrec -- MiniDebugInfo embedwork"
	rm -rf "$tmp/mdi"
	"$REP" --no-debuginfod -f folded "$tmp/mdi.stk" >"$tmp/mdi.folded" 2>/dev/null
	check "MiniDebugInfo: the local function embedwork_own is named" named "$tmp/mdi.folded" embedwork_own
else
	skip "MiniDebugInfo" "needs xz and objcopy"
fi

# ---- a flipped byte in ESYM ------------------------------------------------

# The first ESYM chunk of kind 2 (a symbol table): its payload frame is
# after the 8-byte skippable frame header and the 48-byte chunk header.
off=$(python3 - "$tmp/a.stk" "$top/tests/tools" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
import stkread
found = []
def on_chunk(ch):
    if ch["tag"] == "ESYM" and ch["recs"] and ch["recs"][0].get("kind") == 2 and not found:
        found.append(ch["offset"] + 8 + 48 + ch["comp"] // 2)
stkread.Reader(open(sys.argv[1], "rb").read(), on_chunk).run()
print(found[0] if found else "")
EOF
)
if [ -n "$off" ]; then
	cp "$tmp/a.stk" "$tmp/bad.stk"
	printf '\377' | dd of="$tmp/bad.stk" bs=1 seek="$off" conv=notrunc 2>/dev/null
	"$REP" --no-debuginfod -f folded "$tmp/bad.stk" >"$tmp/bad.folded" 2>"$tmp/bad.err"
	errs=$(grep -c 'ESYM' "$tmp/bad.err")
	check "damaged ESYM: one error line naming it ($errs)" test "$errs" = 1
	check "damaged ESYM: the rest still reports" grep -q '^embedwork;' "$tmp/bad.folded"
	check "damaged ESYM: the other binary is still named" \
		sh -c "grep -q embedlib_spin '$tmp/bad.folded' || grep -q embedwork_own '$tmp/bad.folded'"
else
	fail "no ESYM kind 2 chunk found in the capture"
fi

finish
