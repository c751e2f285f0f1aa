#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: stkrec, root, reads nothing of a traced process's that the
# process could not read itself (issue 23 item 1).  Each workload runs as
# nobody, in its own user and mount namespaces (unshare -Urm, as a user
# can without privileges), until the test stops it.  Checks:
#  - the attack: a root-only (0600) file with a marker line bound over the
#    process's own /tmp/perf-PID.map; with --embed-symbols=full and with
#    the default (covering: the marker's line covers the JIT code that
#    runs), the marker is in neither the report nor the decompressed
#    capture (stkdump and zstd -dc), and STAT perf_map_refused says why;
#  - the control: the same process's own map, not bound over, is read and
#    names its JIT frames (so the test fails if reading is just off);
#  - a root-owned 0644 map of that process (perf-map-agent's jmaps chowns a
#    non-root JVM's map to root; perf reads it): read, not refused;
#  - an execute-only (0711) binary that nobody runs (the kernel maps it,
#    the process cannot read it): none of its symbols embedded with full,
#    STAT esym_binaries_refused; a readable copy of it run alike is named;
#  - credentials that change across a fork (system-wide, where a fork's
#    child takes a copy of its parent's mappings): a root parent running
#    from a 0700 root directory before the recording forks, and its child
#    drops to nobody: the child's mapping of the binary carries no
#    build-id (STAT files_refused), none read as the root parent; the
#    parent drops to nobody and its child stays root: the child's mapping
#    carries the build-id, the nobody parent's refusal not taken for it.
#
# Exit 77 (skip) only when BPF cannot be used here, or when unprivileged
# user namespaces are off (user.max_user_namespaces = 0, or a kernel's
# unprivileged_userns_clone = 0).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

JW=$O/tests/tools/jitwork
CF=$O/tests/tools/credfork
need_files "$JW" "$CF" "$CW" "$DUMP" "$REP"
need_bpf
need_cmds setpriv unshare
[ "$(uname -m)" = x86_64 ] || skip_test "jitwork's code is x86-64"
# Everything nobody does goes through this (a command, not a function:
# bg's pid is then the workload's own, setpriv and unshare exec it).
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
$NOBODY unshare -Urm true 2>/dev/null ||
	skip_test "unprivileged user namespaces are off here"

MARK=stk_confine_secret_marker
# nobody must reach files under $tmp/pub (the bound file included: a
# bind mount needs no read permission on its source), not read them.
chmod 0711 "$tmp"
mkdir "$tmp/pub" "$tmp/nb"
chmod 0711 "$tmp/pub"
chown 65534:65534 "$tmp/nb"	# what nobody's shells write

# jit_line MAP: the address and size of jitwork's jit_spin line.
jit_line() {
	awk '/jit_spin/ { print $1, $2; exit }' "$1"
}
# tried_map FILE: the recording tried the perf map (read or refused).
tried_map() {
	[ $(($(stat_of "$1" perf_map_files_read) + $(stat_of "$1" perf_map_refused) +
	     $(stat_of "$1" perf_map_errors))) -ge 1 ]
}
flushes_past() {
	[ "$(stat_of "$1" flushes)" -ge "$2" ]
}
# in_capture FILE WORD: WORD is in the capture, decoded or raw.
in_capture() {
	"$DUMP" "$1" 2>/dev/null | grep -qa "$2" && return 0
	if command -v zstd >/dev/null 2>&1; then
		zstd -dc "$1" 2>/dev/null | grep -qa "$2" && return 0
	fi
	grep -qa "$2" "$1"
}

# start_jit NAME BIND: jitwork as nobody in its own namespaces; with BIND
# = yes, $tmp/pub/NAME.secret bound over its perf map there.  Sets jpid.
start_jit() {
	_out=$tmp/nb/$1.out
	if [ "$2" = yes ]; then
		_bind="mount --bind '$tmp/pub/$1.secret' \"\$map\" || exit 1"
	else
		_bind=:
	fi
	# The shell writes jitwork's pid, then its map's path once jitwork
	# has written it, then "ready" once the bind mount is in place.
	bg $NOBODY unshare -Urm sh -c "
		'$JW' 100000 >'$_out.jw' & echo \$! >>'$_out'
		while ! grep -q '^/tmp/perf-' '$_out.jw' 2>/dev/null; do sleep 0.05; done
		map=\$(head -1 '$_out.jw'); echo \"\$map\" >>'$_out'
		$_bind
		echo ready >>'$_out'
		wait" 2>"$tmp/$1.sh.err"
	wait_until grep -qs '^ready$' "$_out" || fail "$1: jitwork as nobody did not start" \
		"$(cat "$tmp/$1.sh.err")"
	jpid=$(head -1 "$_out")
	at_exit="${at_exit:+$at_exit; }kill -KILL $jpid 2>/dev/null; rm -f /tmp/perf-$jpid.map"
}

# record NAME PID OPTS...: stkrec -p PID OPTS until it has tried the perf
# map and flushed twice since (the lines it read written), then stopped.
record() {
	_n=$1 _p=$2
	shift 2
	bg "$REC" -q -o "$tmp/$_n.stk" -p "$_p" "$@" 2>"$tmp/$_n.err"
	_r=$bg_pid
	if wait_sampling "$tmp/$_n.stk" "$_r" && wait_until tried_map "$tmp/$_n.stk"; then
		_f=$(stat_of "$tmp/$_n.stk" flushes)
		wait_until flushes_past "$tmp/$_n.stk" $((_f + 2)) ||
			fail "$_n: no two flushes in the time allowed"
	else
		fail "$_n: the recording never tried the perf map" "$(cat "$tmp/$_n.err")"
	fi
	stop "$_r"
}

# ---- the attack: a root-only file bound over the process's perf map ---------

touch "$tmp/pub/atk.secret"
chmod 0600 "$tmp/pub/atk.secret"
start_jit atk yes
# The marker's line covers the JIT code that runs (so covering mode,
# too, would write it once read); root reads the address from the
# process's real map, which the bind hides only inside its namespace.
set -- $(jit_line "/tmp/perf-$jpid.map")
printf '%s %s %s\n' "$1" "$2" "$MARK" >"$tmp/pub/atk.secret"
check "the secret is not nobody's to read" \
	sh -c "! $NOBODY cat '$tmp/pub/atk.secret' 2>/dev/null"
check "inside the namespace the perf map is the secret (root sees it there)" \
	grep -q "$MARK" "/proc/$jpid/root/tmp/perf-$jpid.map"

for mode in full covering; do
	record "atk_$mode" "$jpid" --embed-symbols=$mode
	f=$tmp/atk_$mode.stk
	"$REP" --no-debuginfod "$f" >"$tmp/atk_$mode.txt" 2>&1
	check "$mode: the marker is not in the report" sh -c "! grep -q '$MARK' '$tmp/atk_$mode.txt'"
	check "$mode: the marker is not in the capture (stkdump, zstd -dc, raw)" \
		sh -c "! { '$DUMP' '$f' 2>/dev/null | grep -qa '$MARK' || zstd -dc '$f' 2>/dev/null | grep -qa '$MARK' || grep -qa '$MARK' '$f'; }"
	check "$mode: STAT perf_map_refused >= 1 ($(stat_of "$f" perf_map_refused))" \
		test "$(stat_of "$f" perf_map_refused)" -ge 1
	check "$mode: one warning line says so" grep -q 'warning: .*not read: the process could not read' "$tmp/atk_$mode.err"
done
kill -KILL "$jpid" 2>/dev/null

# ---- the control: the process's own map, same user, same namespaces ---------

start_jit own no
for mode in full covering; do
	record "own_$mode" "$jpid" --embed-symbols=$mode
	f=$tmp/own_$mode.stk
	"$REP" --no-debuginfod "$f" >"$tmp/own_$mode.txt" 2>&1
	check "$mode: nobody's own perf map names its JIT frames" \
		grep -q 'LazyCompile:\*jit_spin /app/jit.js:7' "$tmp/own_$mode.txt"
	check "$mode: STAT perf_map_refused is 0" test "$(stat_of "$f" perf_map_refused)" = 0
	check "$mode: no warning" sh -c "! grep -q 'not read' '$tmp/own_$mode.err'"
done
kill -KILL "$jpid" 2>/dev/null

# ---- a root-owned, world-readable map of the nobody process (jmaps) ---------

start_jit rootmap no
chown 0:0 "/tmp/perf-$jpid.map" && chmod 0644 "/tmp/perf-$jpid.map" ||
	fail "rootmap: chown the map to root"
record rootmap "$jpid" --embed-symbols=covering
f=$tmp/rootmap.stk
"$REP" --no-debuginfod "$f" >"$tmp/rootmap.txt" 2>&1
check "root's 0644 perf map of a nobody process names its JIT frames" \
	grep -q 'LazyCompile:\*jit_spin /app/jit.js:7' "$tmp/rootmap.txt"
check "root's 0644 perf map: STAT perf_map_refused is 0 ($(stat_of "$f" perf_map_refused))" \
	test "$(stat_of "$f" perf_map_refused)" = 0
kill -KILL "$jpid" 2>/dev/null

# ---- an execute-only binary: the kernel maps it, its process cannot read it -

cp "$CW" "$tmp/pub/xonly"
cp "$CW" "$tmp/pub/readable"
chmod 0711 "$tmp/pub/xonly"
chmod 0755 "$tmp/pub/readable"
check "nobody cannot read the execute-only binary" sh -c "! $NOBODY cat '$tmp/pub/xonly' >/dev/null 2>&1"

# run_bin NAME: NAME as nobody in its own namespaces until stopped,
# recorded with full symbols until it has two flushes of samples.
run_bin() {
	bg $NOBODY unshare -Urm "$tmp/pub/$1" 100000
	_w=$bg_pid
	wait_until sh -c "grep -q '$tmp/pub/$1' /proc/$_w/maps 2>/dev/null" ||
		fail "$1: did not start"
	# unshare execs it: the pid is the workload's.
	bg "$REC" -q --embed-symbols=full -o "$tmp/$1.stk" -p "$_w" 2>"$tmp/$1.err"
	_r=$bg_pid
	if wait_sampling "$tmp/$1.stk" "$_r"; then
		_f=$(stat_of "$tmp/$1.stk" flushes)
		wait_until flushes_past "$tmp/$1.stk" $((_f + 2)) ||
			fail "$1: no two flushes in the time allowed"
	fi
	stop "$_r"
	kill -KILL "$_w" 2>/dev/null
}

run_bin readable
check "readable binary: its symbols embedded (mid_b in the capture)" in_capture "$tmp/readable.stk" mid_b
check "readable binary: STAT esym_binaries_refused is 0" \
	test "$(stat_of "$tmp/readable.stk" esym_binaries_refused)" = 0
run_bin xonly
check "execute-only binary: sampled ($(samples "$tmp/xonly.stk") samples)" \
	test "$(samples "$tmp/xonly.stk")" -gt 0
check "execute-only binary: none of its symbols in the capture" \
	sh -c "! { '$DUMP' '$tmp/xonly.stk' 2>/dev/null | grep -qa -e mid_b -e leaf_c || zstd -dc '$tmp/xonly.stk' 2>/dev/null | grep -qa -e mid_b -e leaf_c; }"
check "execute-only binary: STAT files_refused >= 1 ($(stat_of "$tmp/xonly.stk" files_refused))" \
	test "$(stat_of "$tmp/xonly.stk" files_refused)" -ge 1

# ---- credentials that change across a fork ---------------------------------

mkdir "$tmp/priv"
chmod 0700 "$tmp/priv"
cp "$CF" "$tmp/priv/credfork"
cf_bid=$(readelf -n "$tmp/priv/credfork" | awk '/Build ID:/ { print $3 }')
[ -n "$cf_bid" ] || fail "credfork has no build-id"
check "nobody cannot read the binary in the 0700 directory" \
	sh -c "! $NOBODY cat '$tmp/priv/credfork' >/dev/null 2>&1"

# fork_bids FILE TGID: the build-ids of TGID's MAP lines of credfork's
# code, each once ("-": a line without one, as stkdump prints it); empty:
# no such line.
fork_bids() {
	"$DUMP" "$1" | awk -F'\t' -v t="$2" -v p="$tmp/priv/credfork" '
		$1 == "MAP" && $2 == t && $10 == p && $6 ~ /x/ {
			if (!($9 in seen)) { seen[$9] = 1; all = all (all == "" ? "" : ",") $9 }
		}
		END { print all }'
}
# fork_mapped FILE TGID...: each TGID has its credfork code mapped there.
fork_mapped() {
	_f=$1
	shift
	for _t; do
		[ -n "$(fork_bids "$_f" "$_t")" ] || return 1
	done
}

# record_fork NAME SIDE: credfork SIDE, root, started before a system-wide
# recording (read from /proc then: no build-ids from the kernel), forks
# once the recorder samples; recorded until each side that runs (both
# with SIDE parent, the child with SIDE child: its parent waits) has its
# mappings written.  Sets fparent and fchild, and fuids to their real
# uids then ("PARENT CHILD").
record_fork() {
	_n=$1
	bg "$tmp/priv/credfork" "$2" usr1 >"$tmp/$_n.cf" 2>"$tmp/$_n.cf.err"
	_c=$bg_pid
	at_exit="${at_exit:+$at_exit; }kill -KILL $_c 2>/dev/null"
	wait_until grep -qs '^ready$' "$tmp/$_n.cf" ||
		fail "$_n: credfork did not start" "$(cat "$tmp/$_n.cf.err")"
	bg "$REC" -q -F 199 -o "$tmp/$_n.stk" 2>"$tmp/$_n.err"
	_r=$bg_pid
	wait_sampling "$tmp/$_n.stk" "$_r" ||
		fail "$_n: stkrec did not start" "$(cat "$tmp/$_n.err")"
	kill -USR1 "$_c"
	wait_until grep -qs '^forked ' "$tmp/$_n.cf" ||
		fail "$_n: credfork did not fork" "$(cat "$tmp/$_n.cf.err")"
	# shellcheck disable=SC2046 # two words: the pids
	set -- $(awk '/^forked / { print $2, $3 }' "$tmp/$_n.cf")
	fparent=$1 fchild=$2
	at_exit="$at_exit; kill -KILL $fchild 2>/dev/null"
	if [ "$_n" = fork_parent ]; then
		_wait="$fparent $fchild"
	else
		_wait=$fchild
	fi
	# shellcheck disable=SC2086 # one pid or two
	wait_until fork_mapped "$tmp/$_n.stk" $_wait ||
		fail "$_n: the mappings of $_wait never written" "$(cat "$tmp/$_n.err")"
	fuids="$(awk '/^Uid:/ { print $2 }' "/proc/$fparent/status") $(awk '/^Uid:/ { print $2 }' "/proc/$fchild/status")"
	stop "$_r"
	kill -KILL "$fchild" "$fparent" 2>/dev/null
}

record_fork fork_child child
f=$tmp/fork_child.stk
check "fork_child: the parent runs as root, the child as nobody ($fuids)" test "$fuids" = "0 65534"
check "fork, nobody child of a root parent: its mapping of the 0700 directory's binary has no build-id ($(fork_bids "$f" "$fchild"))" \
	test "$(fork_bids "$f" "$fchild")" = -
check "fork, nobody child: STAT files_refused >= 1 ($(stat_of "$f" files_refused))" \
	test "$(stat_of "$f" files_refused)" -ge 1

record_fork fork_parent parent
f=$tmp/fork_parent.stk
check "fork_parent: the parent runs as nobody, the child as root ($fuids)" test "$fuids" = "65534 0"
# The parent was root until just after its fork: a snapshot the recorder
# took of it then may rightly carry the build-id (the process could read
# the file then), so its own mapping is said, not checked.
echo "note: fork, nobody parent: its own mapping's build-id: $(fork_bids "$f" "$fparent")"
check "fork, root child of a nobody parent: its mapping has the build-id $cf_bid ($(fork_bids "$f" "$fchild"))" \
	test "$(fork_bids "$f" "$fchild")" = "$cf_bid"

finish
