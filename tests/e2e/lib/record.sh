# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by tests/e2e/record_*.sh: paths, BPF availability, a temporary
# directory removed on exit (with every background process the test
# started), ok/fail counting, and awk helpers over stkdump's output
# (tests/tools/stkdump.c documents its lines).
#
# A test sets NAME before sourcing this file, starts background processes
# with "bg CMD...", and ends with "finish".

O=${O:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
O=$(cd "$top" && cd "$O" && pwd)
REC=$O/stkrec
REP=$O/stkreport
DUMP=$O/tests/tools/stkdump
CW=$O/samples/cpuwork

for f in "$REC" "$REP" "$DUMP" "$CW"; do
	if [ ! -x "$f" ]; then
		echo "$NAME: $f missing; run make"
		exit 1
	fi
done
# BPF needs root (CAP_BPF + CAP_PERFMON) and a kernel with BTF (CO-RE).
# Only then is a skip allowed; the runner's STK_REQUIRE_BPF=1 turns a
# skip into a failure.
if [ "$(id -u)" != 0 ]; then
	echo "$NAME: needs root for BPF; skipped"
	exit 77
fi
if [ ! -e /sys/kernel/btf/vmlinux ]; then
	echo "$NAME: kernel without BTF; skipped"
	exit 77
fi

tmp=$(mktemp -d)
bg_pids=
at_exit=	# shell code a test wants run first on exit (e.g. umount)
cleanup() {
	for p in $bg_pids; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "$at_exit" ] && eval "$at_exit"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# bg CMD ARGS: run in the background; $! is remembered for cleanup.
bg() {
	"$@" &
	bg_pids="$bg_pids $!"
}

passed=0
failed=0
ok() {
	echo "ok   $1"
	passed=$((passed + 1))
}
fail() {
	echo "FAIL $1"
	failed=$((failed + 1))
}
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds.
check() {
	d=$1
	shift
	if "$@"; then ok "$d"; else fail "$d"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit $?
}

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

# stat FILE NAME: the last value of STAT NAME (an integer: mawk's print
# would turn values above 2^31 into 1.2e+09).
stat_of() {
	"$DUMP" "$1" | awk -F'\t' -v k="$2" '$1 == "STAT" && $2 == k { v = $3 } END { printf "%.0f\n", v + 0 }'
}

# meta FILE KEY: the last value of META KEY.
meta_of() {
	"$DUMP" "$1" | awk -F'\t' -v k="$2" '$1 == "META" && $2 == k { v = $3 } END { print v }'
}

# cpu_ticks PID: utime + stime of a process, in clock ticks.
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# within N LO HI: LO <= N <= HI (integers).
within() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
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
