#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: the names stkreport gives are perf's (docs/reporting.md,
# "Which name, of several at one address"), on real programs recorded by
# stkrec and `perf record --call-graph dwarf` at the same moments:
#  - uwholes lazy, run with LD_BIND_NOT=1, calls libuwctor.so through its
#    PLT, binding anew each time (ld.so, libc, the PLT stub), and dd
#    copying /dev/zero 64 bytes at a time (glibc's read and write, whose
#    aliases perf ranks otherwise, and the kernel's syscall entries);
#  - every frame with 5% of perf's samples (perf script --no-inline, its
#    symbol names) is in stk's report under an alias of the same address
#    (same file, or /proc/kallsyms), its share within 4.5 binomial
#    standard deviations of perf's (at least 2 points), the check saying
#    both names, counts and the tolerance;
#  - no output format (text, folded, pprof, svg, diff) holds a symbol
#    version, and __libc_start_main is named so;
#  - a sample in uwholes' PLT stub is uwctor_linked@plt, as perf names it;
#  - the kernel frames of uwholes vfork (vfork's entry point has three
#    names) are the same with the captured table and with --kallsyms
#    /proc/kallsyms, and vfork's is the first alias /proc/kallsyms lists.
#
# No luck: each workload runs until the test stops it, once it has had
# 3 s of CPU with both recorders sampling (perf's events enabled through
# --control, which acknowledges).  A PLT stub is a few instructions of
# each call: about 1 sample in 200 here, so 3 s at 999 Hz expect 15 of
# them, and none at all would be a 1-in-a-million run.
#
# Exit 77 (skipped) without BPF (root, BTF), or without perf for the
# comparison.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

UWH=$O/tests/unwind/uwholes
need_files "$REC" "$REP" "$UWH"
need_bpf
need_cmds perf readelf gzip

# perf's frames: "count<TAB>name<TAB>dso" per (name, dso), each sample's
# frames counted once; and "total N".
perf_frames() {
	perf script --no-inline -i "$1" -F ip,sym,dso 2>/dev/null | awk '
	function flush() { if (!n) return; total++; for (k in seen) c[k]++; delete seen; n = 0 }
	/^[ \t]+[0-9a-f]+ / {
		dso = $NF; gsub(/[()]/, "", dso)
		name = $2; for (i = 3; i < NF; i++) name = name " " $i
		seen[name "\t" dso] = 1; n++; next }
	/^$/ { flush() }
	END { flush(); for (k in c) print c[k] "\t" k; print "total\t" total }'
}

# stk's frames: "count<TAB>name", each stack's frames counted once.
stk_frames() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); total += n
		delete seen; for (i = 2; i <= k; i++) if (!(f[i] in seen)) { seen[f[i]] = 1; c[f[i]] += n } }
	END { for (x in c) print c[x] "\t" x; print total "\t(total)" }' "$1"
}

# alias_table DSO: "addr<TAB>name" of its function symbols and those of its
# debuginfo (by build-id), names without versions; /proc/kallsyms' text
# symbols for the kernel.
alias_table() {
	case $1 in
	\[kernel.kallsyms\])
		awk '$2 ~ /^[tTwW]$/ && NF == 3 { print $1 "\t" $3 }' /proc/kallsyms
		return ;;
	/*) ;;
	*) return ;;
	esac
	_bid=$(readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3 }')
	_dbg=/usr/lib/debug/.build-id/$(echo "$_bid" | cut -c1-2)/$(echo "$_bid" | cut -c3-).debug
	for _f in "$1" "$_dbg"; do
		[ -n "$_bid" ] || [ "$_f" = "$1" ] || continue
		[ -f "$_f" ] && readelf -sW "$_f" 2>/dev/null
	done | awk '$4 == "FUNC" || $4 == "IFUNC" { n = $8; sub(/@.*/, "", n); print $2 "\t" n }'
}

# compare NAME: each frame with 5% of perf's samples, under an alias of
# the same address in stk's report, with the same share.
compare() {
	_n=$1
	"$REP" -f folded "$tmp/$_n.stk" >"$tmp/$_n.folded" 2>"$tmp/$_n.rep.err" ||
		fail "$_n: stkreport -f folded: $(cat "$tmp/$_n.rep.err")"
	stk_frames "$tmp/$_n.folded" >"$tmp/$_n.stkf"
	perf_frames "$tmp/$_n.perf" >"$tmp/$_n.perff"
	ptotal=$(awk -F'\t' '$1 == "total" { print $2 }' "$tmp/$_n.perff")
	stotal=$(awk -F'\t' '$2 == "(total)" { print $1 }' "$tmp/$_n.stkf")
	if [ "${ptotal:-0}" -lt 500 ] || [ "${stotal:-0}" -lt 500 ]; then
		fail "$_n: too few samples to compare (stk ${stotal:-0}, perf ${ptotal:-0})"
		return
	fi
	awk -F'\t' -v t="$ptotal" '$1 != "total" && $1 * 20 >= t && $2 != "[unknown]"' \
		"$tmp/$_n.perff" | sort -rn >"$tmp/$_n.top"
	: >"$tmp/$_n.aliases"
	cut -f3 "$tmp/$_n.top" | sort -u | while read -r dso; do
		alias_table "$dso" | sed "s|^|$dso\t|" >>"$tmp/$_n.aliases"
	done
	while IFS='	' read -r pcount pname pdso; do
		# perf's name without its version; the names at its address.
		bare=${pname%%@*}
		names=$(awk -F'\t' -v d="$pdso" -v n="$bare" '
			$1 == d { at[$2] = at[$2] " " $3; if ($3 == n) want[$2] = 1 }
			END { for (a in want) print at[a] }' "$tmp/$_n.aliases" | tr ' ' '\n' | sort -u)
		[ -n "$names" ] || names=$bare
		hit=$(printf '%s\n' "$names" | awk -F'\t' 'NR == FNR { if ($0 != "") want[$0] = 1; next }
			($2 in want) { print $1 "\t" $2; exit }' - "$tmp/$_n.stkf")
		if [ -z "$hit" ]; then
			fail "$_n: perf's $pname ($pdso, $pcount of $ptotal samples): no alias in stk's report" \
				"$(printf '%s ' $names)"
			continue
		fi
		agree_ok "$_n: perf's $pname is stk's ${hit#*	}" "${hit%%	*}" "$stotal" "$pcount" "$ptotal"
	done <"$tmp/$_n.top"
}

# ---- uwholes lazy: ld.so, libc, a PLT stub ------------------------------
LD_BIND_NOT=1 bg "$UWH" lazy 3600
uwpid=$bg_pid
if record_with_perf lazy "$uwpid"; then
	compare lazy
	n=$(awk -F'\t' '$2 == "uwctor_linked@plt" { print $1 }' "$tmp/lazy.stkf")
	if [ "${n:-0}" -gt 0 ]; then
		pass "a sample in the PLT stub is uwctor_linked@plt ($n of $stotal)"
	else
		fail "no uwctor_linked@plt frame in $stotal samples" "$(sort -rn "$tmp/lazy.stkf" | head -12 | tr '\n' ' ')"
	fi
	grep -q ';__libc_start_main;' "$tmp/lazy.folded" &&
		pass "__libc_start_main without its version" ||
		fail "no __libc_start_main frame" "$(head -2 "$tmp/lazy.folded")"
	# Every output format, and diff of the capture with itself.
	"$REP" "$tmp/lazy.stk" >"$tmp/out.text" 2>/dev/null
	"$REP" -f svg -o "$tmp/out.svg" "$tmp/lazy.stk" 2>/dev/null
	"$REP" -f pprof -o "$tmp/out.pb.gz" "$tmp/lazy.stk" 2>/dev/null
	gzip -dc "$tmp/out.pb.gz" >"$tmp/out.pb"
	"$REP" diff -n 0 "$tmp/lazy.stk" "$tmp/lazy.stk" >"$tmp/out.diff" 2>/dev/null
	"$REP" diff -f folded "$tmp/lazy.stk" "$tmp/lazy.stk" >"$tmp/out.difff" 2>/dev/null
	for f in lazy.folded out.text out.svg out.pb out.diff out.difff; do
		if [ ! -s "$tmp/$f" ]; then
			fail "$f: empty"
		elif grep -aq '@@\?GLIBC_' "$tmp/$f"; then
			fail "$f holds a symbol version" "$(grep -ao '[A-Za-z_0-9]*@@\?GLIBC_[0-9.]*' "$tmp/$f" | sort -u | head -3 | tr '\n' ' ')"
		else
			pass "$f: no symbol version"
		fi
	done
fi

# ---- dd: glibc's read and write, the kernel's syscall entries -----------
bg dd if=/dev/zero of=/dev/null bs=64
ddpid=$bg_pid
record_with_perf dd "$ddpid" && compare dd

# ---- kernel aliases: the captured table and --kallsyms agree -------------
bg "$UWH" vfork 100000000
vfpid=$bg_pid
bg "$REC" -q -F 999 -p "$vfpid" -o "$tmp/vf.stk" 2>"$tmp/vf.err"
vfrec=$bg_pid
if wait_sampling "$tmp/vf.stk" "$vfrec"; then
	t0=$(cpu_ticks "$vfpid")
	# shellcheck disable=SC2317 # called through wait_until
	vf_enough() { [ "$(cpu_ticks "$vfpid")" -ge $((t0 + 100)) ]; }
	wait_until vf_enough || fail "uwholes vfork: no 1 s of CPU in 120 s"
	stop "$vfpid"
	wait "$vfrec"
	# BPF programs are named at recording; /proc/kallsyms now lists others
	# (or none at their addresses, once the recorders that loaded them
	# have gone): stacks through BPF are left out, and the rest compared
	# as sets (lines that differ only in a BPF frame no longer sort apart).
	nobpf() {
		grep -v 'bpf_prog_\|\[bpf\]\|bpf_trace_run\|\[unknown\]' |
			awk '{ c = $NF; sub(/ [0-9]+$/, ""); n[$0] += c }
			     END { for (k in n) printf "%s %.0f\n", k, n[k] }' | LC_ALL=C sort
	}
	"$REP" -f folded -K "$tmp/vf.stk" 2>/dev/null | nobpf >"$tmp/vf.cap"
	"$REP" -f folded -K --kallsyms /proc/kallsyms "$tmp/vf.stk" 2>/dev/null | nobpf >"$tmp/vf.kall"
	if [ -s "$tmp/vf.cap" ] && cmp -s "$tmp/vf.cap" "$tmp/vf.kall"; then
		pass "kernel frames: the captured table and --kallsyms /proc/kallsyms name them alike ($(wc -l <"$tmp/vf.cap") stacks)"
	else
		fail "kernel frames differ between the capture and --kallsyms" \
			"$(diff "$tmp/vf.cap" "$tmp/vf.kall" | head -4 | tr '\n' ' ')"
	fi
	addr=$(awk '$3 == "__x64_sys_vfork" { print $1; exit }' /proc/kallsyms)
	first=$(awk -v a="$addr" '$1 == a && $2 ~ /^[tTwW]$/ { print $3; exit }' /proc/kallsyms)
	if [ -z "$first" ]; then
		skip "vfork's entry point named by its first alias" "no __x64_sys_vfork in /proc/kallsyms"
	elif grep -q ";$first;" "$tmp/vf.cap"; then
		pass "vfork's entry point is $first, the first of its aliases /proc/kallsyms lists"
	else
		fail "vfork's entry point is not $first" "$(grep -o '[^;]*sys_vfork[^;]*' "$tmp/vf.cap" | sort -u | tr '\n' ' ')"
	fi
else
	fail "stkrec -p uwholes vfork" "$(cat "$tmp/vf.err")"
fi

finish
