# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by the recording tests (tests/e2e/record_*.sh, offcpu_*.sh, ...)
# after lib/harness.sh: they need the recorder, stkdump and cpuwork, and
# BPF (else they are skipped, exit 77); and awk helpers over stkdump's
# output (tests/tools/stkdump.c documents its lines).

# Without the harness there is no $tmp: a test would write into the
# current directory or /.  Refuse instead.
[ -n "${tmp:-}" ] && [ -d "$tmp" ] || { echo "$0: source tests/e2e/lib/harness.sh first"; exit 1; }

need_files "$REC" "$REP" "$DUMP" "$CW"
need_bpf

# A user address or a kernel address's low 48 bits, as a number: mawk has
# only doubles, exact to 2^53.
AWK_HEX='
function hex(s,    i, c, v) {
	sub(/^0x/, "", s)
	if (length(s) > 12) s = substr(s, length(s) - 11)
	v = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}'

# samples FILE [TGID]: total count of CNTS rows (of TGID).
samples() {
	"$DUMP" "$1" | awk -F'\t' -v t="${2:-}" \
		'$1 == "CNTS" && (t == "" || $2 == t) { n += $9 } END { print n + 0 }'
}

# counts_whole FILE: checks that no sample was dropped (STAT
# counts_map_full) and that the CNTS rows add up to STAT samples (some);
# leaves the total in $total.
counts_whole() {
	total=$(stat_of "$1" samples)
	_rows=$(samples "$1")
	check "no sample dropped ($(stat_of "$1" counts_map_full) counts_map_full)" \
		[ "$(stat_of "$1" counts_map_full)" -eq 0 ]
	check "the CNTS rows add up to STAT samples ($_rows rows, $total samples)" \
		[ "$_rows" -eq "$total" -a "$total" -gt 0 ]
}

# stat FILE NAME: the last value of STAT NAME (an integer: mawk's print
# would turn values above 2^31 into 1.2e+09).
stat_of() {
	"$DUMP" "$1" | awk -F'\t' -v k="$2" '$1 == "STAT" && $2 == k { v = $3 } END { printf "%.0f\n", v + 0 }'
}

# meta FILE KEY: the last value of META KEY.
meta_of() {
	"$DUMP" "$1" | awk -F'\t' -v k="$2" '$1 == "META" && $2 == k { v = $3 } END { print v }'
}

# is_comm PID COMM: process PID is named COMM now (its exec done).
is_comm() {
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

# cpu_ticks PID: utime + stime of a process, in clock ticks.
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# cpuwork_tgid FILE: the cpuwork process with the most samples.
cpuwork_tgid() {
	"$DUMP" "$1" | awk -F'\t' '$1 == "CNTS" && $4 == "cpuwork" { n[$2] += $9 }
		END { for (t in n) if (n[t] > best) { best = n[t]; tg = t } print tg }'
}

# cpuwork_chains FILE TGID: analyse the user stacks of cpuwork process TGID
# against the symbols of $CW (nm) and its mappings in FILE.  Prints
#   full_a full_b full_c broken other in_map out_map
# full_X: samples in leaf_X with the whole chain leaf_X .. run, main (or
# thread_main); broken: samples in a leaf without it; other: samples
# elsewhere; in_map/out_map: samples whose leaf IP is / is not inside an
# executable mapping of TGID.
cpuwork_chains() {
	nm -S "$CW" > "$tmp/nm.txt"
	"$DUMP" "$1" > "$tmp/chains.dump"
	awk -v tgid="$2" -v exe="$CW" "$AWK_HEX"'
	FNR == NR {
		if (NF == 4 && ($3 == "T" || $3 == "t")) {
			nsym++; sname[nsym] = $4; sval[nsym] = hex($1); ssize[nsym] = hex($2)
		}
		next
	}
	{ split($0, f, "\t") }
	f[1] == "MAP" && f[2] == tgid {
		if (index(f[6], "x")) { nx++; xs[nx] = hex(f[3]); xe[nx] = hex(f[4]) }
		if (f[10] == exe && f[5] == "0x0") bias = hex(f[3])
	}
	f[1] == "STCK" { stack[f[2]] = f[4] }
	f[1] == "CNTS" && f[2] == tgid && f[5] >= 0 { nrow++; rref[nrow] = f[5]; rcnt[nrow] = f[9] }
	function fn(a,    i, off) {
		off = a - bias
		for (i = 1; i <= nsym; i++)
			if (off >= sval[i] && off < sval[i] + ssize[i]) return sname[i]
		return "?"
	}
	function inmap(a,    i) {
		for (i = 1; i <= nx; i++) if (a >= xs[i] && a < xe[i]) return 1
		return 0
	}
	END {
		for (r = 1; r <= nrow; r++) {
			k = split(stack[rref[r]], fr, ",")
			n = rcnt[r]
			if (inmap(hex(fr[1]))) inm += n; else outm += n
			# Return addresses are looked up at pc-1: the call instruction.
			c = fn(hex(fr[1]))
			for (i = 2; i <= k && i <= 6; i++) c = c ";" fn(hex(fr[i]) - 1)
			if (c ~ /^leaf_a;work_a;run;(main|thread_main)(;|$)/) a += n
			else if (c ~ /^leaf_b;mid_b;work_b;run;(main|thread_main)(;|$)/) b += n
			else if (c ~ /^leaf_c;work_c;run;(main|thread_main)(;|$)/) cc += n
			else if (c ~ /^leaf_/) broken += n
			else other += n
		}
		printf "%d %d %d %d %d %d %d\n", a, b, cc, broken, other, inm, outm
	}' "$tmp/nm.txt" "$tmp/chains.dump"
}

# kallsyms_snapshot OUT: /proc/kallsyms as "addr name module" lines (module
# "-" for the core kernel), sorted: take it while stkrec records, so that
# its own BPF programs are listed (as bpf_prog_TAG_NAME [bpf]).
kallsyms_snapshot() {
	awk '{ m = $4; gsub(/[][]/, "", m); print $1, $3, (m == "" ? "-" : m) }' /proc/kallsyms |
		sort -u > "$1"
}

# uncovered_kframes DUMP KALLSYMS: kernel frames of the rows of DUMP (the
# kernel stack of CNTS rows, both sides' of OFFC rows) that no KSYM symbol
# written before the row covers.  Prints "U X S": U distinct such
# addresses, X of them outside the kernel's text (_text.._etext and
# _sinittext.._einittext of the KALLSYMS snapshot), S kernel stacks read.
# An address outside the text is one the recorder may rightly leave
# unnamed and count in STAT kaddr_unknown: a word that is no return
# address, or a BPF program unloaded before the flush named it (another
# recorder's, in whose code an interrupt landed).
uncovered_kframes() {
	awk -F'\t' "$AWK_HEX"'
	FNR == NR {
		split($0, f, " ")
		if (f[2] == "_text") t0 = hex(f[1]); if (f[2] == "_etext") t1 = hex(f[1])
		if (f[2] == "_sinittext") i0 = hex(f[1]); if (f[2] == "_einittext") i1 = hex(f[1])
		next
	}
	function covered(a,    j) {
		for (j = 1; j <= n; j++) if (a >= ka[j] && a < ke[j]) return 1
		return 0
	}
	function cover(ref,    k, i, a) {
		if (ref < 0 || !(ref in pend)) return
		k = split(pend[ref], fr, ",")
		for (i = 1; i <= k; i++) {
			if (covered(hex(fr[i])) || (fr[i] in seen)) continue
			seen[fr[i]] = 1
			u++
			a = hex(fr[i])
			if (!((a >= t0 && a < t1) || (a >= i0 && a < i1))) x++
			print "uncovered " fr[i] > "/dev/stderr"
		}
		delete pend[ref]
		nk++
	}
	$1 == "KSYM" { n++; ka[n] = hex($2); ke[n] = hex($2) + $3 }
	$1 == "STCK" { pend[$2] = $4 }
	$1 == "CNTS" { cover($6) }
	$1 == "OFFC" { cover($6); cover($11) }
	END { print u + 0, x + 0, nk + 0 }' "$2" "$1"
}

# foreign_ksyms DUMP KALLSYMS: "N B": N KSYM symbols of DUMP that are not
# the KALLSYMS snapshot's symbol at their address (same name and module),
# B of them BPF programs (module bpf) missing from the snapshot altogether:
# another recorder's, loaded and unloaded while this one ran.
foreign_ksyms() {
	awk -F'\t' '$1 == "KSYM" { sub(/^0x/, "", $2); print $2, $5, ($6 == "" ? "-" : $6) }' "$1" |
		sort -u | comm -23 - "$2" > "$tmp/foreign.txt"
	awk 'FNR == NR { have[$1] = 1; next }
		{ n++ } $3 == "bpf" && !($1 in have) { b++ }
		END { print n + 0, b + 0 }' "$2" "$tmp/foreign.txt"
}

# agree_ok DESC P1 T1 P2 T2: P1 of T1 and P2 of T2 are the same share:
# their difference within 4.5 standard deviations of the difference of
# two binomial shares of these counts (pooled), at least 2 points.
agree_ok() {
	_r=$(awk -v p1="$2" -v t1="$3" -v p2="$4" -v t2="$5" 'BEGIN {
		if (t1 <= 0 || t2 <= 0) { printf "0 0 0 1"; exit }
		q = (p1 + p2) / (t1 + t2)
		tol = 100 * 4.5 * sqrt(q * (1 - q) * (1 / t1 + 1 / t2))
		if (tol < 2) tol = 2
		x1 = 100 * p1 / t1; x2 = 100 * p2 / t2; d = x1 - x2; if (d < 0) d = -d
		printf "%.1f %.1f %.1f %d", x1, x2, tol, (d > tol) }')
	set -- "$1" $_r "$2" "$3" "$4" "$5"
	if [ "$5" -eq 0 ]; then
		pass "$1: stk $2% ($6 of $7) vs perf $3% ($8 of $9), within +- $4"
	else
		fail "$1: stk $2% ($6 of $7) vs perf $3% ($8 of $9), more than +- $4 apart"
	fi
}

# record_with_perf NAME PID: stkrec and `perf record --call-graph dwarf`
# on PID, both sampling, until PID has had 3 s of CPU and perf has
# written ~800 samples (its ring loses some on a busy machine); then PID
# is stopped.  $tmp/NAME.stk and $tmp/NAME.perf.  Returns 1 (after a fail)
# if either could not record.  Needs perf (need_cmds perf).
record_with_perf() {
	_n=$1 _pid=$2
	bg "$REC" -q -F 999 -p "$_pid" -o "$tmp/$_n.stk" 2>"$tmp/$_n.rec.err"
	_rec=$bg_pid
	if ! wait_sampling "$tmp/$_n.stk" "$_rec"; then
		fail "$_n: stkrec -p" "$(cat "$tmp/$_n.rec.err")"
		return 1
	fi
	rm -f "$tmp/perf.ctl" "$tmp/perf.ack"
	mkfifo "$tmp/perf.ctl" "$tmp/perf.ack"
	exec 8<>"$tmp/perf.ctl" 9<>"$tmp/perf.ack"
	# -B: perf 6.1's build-id pass asserts on some recordings here; the
	# binaries stay where they are, found by path.
	bg perf record -q -B -m 8M -F 999 -e cpu-clock --call-graph dwarf -p "$_pid" \
		-o "$tmp/$_n.perf" -D -1 --control "fifo:$tmp/perf.ctl,$tmp/perf.ack" \
		>"$tmp/$_n.perf.log" 2>&1
	_perf=$bg_pid
	echo enable >&8
	if ! timeout 120 sh -c 'read a && [ "$a" = ack ]' <&9; then
		fail "$_n: perf record --control: no ack" "$(cat "$tmp/$_n.perf.log")"
		return 1
	fi
	_t0=$(cpu_ticks "$_pid")
	# perf on a busy machine loses samples its ring could not hold (one
	# run got 180 of ~3000): PID runs until perf has written ~800 samples
	# too (a --call-graph dwarf sample is ~8.4 KiB; perf writes as it
	# reads), not for a fixed time that luck may leave short.
	# shellcheck disable=SC2317 # called through wait_until
	ran_enough() {
		[ "$(cpu_ticks "$_pid")" -ge $((_t0 + 300)) ] &&
			[ "$(wc -c <"$tmp/$_n.perf" 2>/dev/null || echo 0)" -ge $((800 * 8448)) ]
	}
	if ! wait_until ran_enough; then
		fail "$_n: no 3 s of CPU and 800 perf samples in 120 s" \
			"perf.data: $(wc -c <"$tmp/$_n.perf" 2>/dev/null) bytes"
		return 1
	fi
	stop "$_pid"
	wait "$_rec"
	wait "$_perf"
	exec 8>&- 9>&-
	return 0
}
