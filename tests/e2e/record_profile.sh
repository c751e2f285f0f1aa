#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_profile: stkrec records samples/cpuwork, by pid (-p) and by
# -- CMD, and the file has what a report needs, checked record by record
# with stkdump:
#  - samples matching the workload's CPU time at -F Hz (within 30%),
#  - MAPS for the workload's pid with the build-id readelf -n prints,
#  - every sampled user leaf IP inside one of its executable mappings,
#  - whole frame-pointer call chains leaf_X .. run .. main,
#  - the known 60/30/10 split (cpuwork calls its three identical leaves 6,
#    3 and 1 times a round): each leaf's share within 4.5 binomial
#    standard deviations of its sample count (share_ok),
#  - KBID with the kernel's build-id, and KSYM covering every kernel frame
#    of a workload that runs in the kernel.
# The workloads' CPU time is fixed, never their wall time: by pid, cpuwork
# runs until the test stops it and is recorded while it uses 3 s of CPU
# (SIGSTOP once it has exec'd, before the recorder samples, and once the
# 3 s are used: its samples are those of exactly the ticks counted); by
# -- CMD it runs a fixed number of rounds (-n).  So the counts do not
# shrink with the load.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Runs alone (tests/run-tests.sh): beside a dozen other tests cpuwork gets
# a tenth of a CPU, and its 3 s of CPU would take half a minute.
# harness: exclusive

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

F=199
cw_buildid=$(readelf -n "$CW" | awk '/Build ID:/ { print $3 }')

# verify_cpuwork LABEL FILE TGID CPU_TICKS
verify_cpuwork() {
	label=$1 file=$2 tgid=$3 ticks=$4
	hz=$(getconf CLK_TCK)
	n=$(samples "$file" "$tgid")
	# Samples expected: F per second of CPU the workload used.
	want=$((F * ticks / hz))
	check "$label: $n samples for $ticks ticks of CPU at $F Hz (want ~$want)" \
		within "$n" $((want * 7 / 10)) $((want * 13 / 10 + 5))
	bid=$("$DUMP" "$file" | awk -F'\t' -v t="$tgid" -v p="$CW" \
		'$1 == "MAP" && $2 == t && $10 == p && $6 ~ /x/ { print $9; exit }')
	check "$label: MAPS of pid $tgid has cpuwork's build-id $cw_buildid" [ "$bid" = "$cw_buildid" ]
	set -- $(cpuwork_chains "$file" "$tgid")
	a=$1 b=$2 c=$3 broken=$4 other=$5 inm=$6 outm=$7
	echo "     chains: leaf_a $a, leaf_b $b, leaf_c $c, broken $broken, elsewhere $other; leaf IPs in maps $inm, outside $outm"
	check "$label: every sampled user IP lies in an executable mapping" [ "$outm" -eq 0 -a "$inm" -gt 0 ]
	full=$((a + b + c))
	check "$label: leaf samples have whole chains leaf..run..main ($broken broken of $((full + broken)))" \
		[ "$full" -gt 0 -a "$broken" -le $((full / 50)) ]
	share_ok "$label: leaf_a's share of the leaf samples" "$a" "$full" 60
	share_ok "$label: leaf_b's share of the leaf samples" "$b" "$full" 30
	share_ok "$label: leaf_c's share of the leaf samples" "$c" "$full" 10
}

# ---- by pid -----------------------------------------------------------
# cpuwork stopped until the recorder samples, then run for 300 ticks (3 s)
# of CPU, stopped again and its ticks read: the recorder saw all of them.
# An hour only bounds a test that dies without its trap.  The STOP waits
# for the exec: one before it would stop the forked shell, and -p would
# attach to a process that is not cpuwork yet.
bg "$CW" 3600
cwpid=$bg_pid
wait_until is_comm "$cwpid" cpuwork || fail "cpuwork $cwpid never started"
kill -STOP "$cwpid"
bg "$REC" -q -F $F -p "$cwpid" -o "$tmp/pid.stk" 2> "$tmp/pid.out"
rpid=$bg_pid
wait_sampling "$tmp/pid.stk" "$rpid" || fail "-p: stkrec starts sampling ($(cat "$tmp/pid.out"))"
t0=$(cpu_ticks "$cwpid")
kill -CONT "$cwpid"
ran() { [ "$(cpu_ticks "$cwpid")" -ge $((t0 + 300)) ]; }
wait_until ran || fail "cpuwork $cwpid runs"
kill -STOP "$cwpid"
t1=$(cpu_ticks "$cwpid")
kill -INT "$rpid"
wait "$rpid"
rc=$?
kill -CONT "$cwpid"
stop "$cwpid"
check "-p: exit 0 (got $rc: $(cat "$tmp/pid.out"))" [ "$rc" -eq 0 ]
verify_cpuwork "-p" "$tmp/pid.stk" "$cwpid" $((t1 - t0))
others=$("$DUMP" "$tmp/pid.stk" | awk -F'\t' -v t="$cwpid" '$1 == "CNTS" && $2 != t { n += $9 } END { print n + 0 }')
check "-p: no samples of other processes ($others)" [ "$others" -eq 0 ]

# ---- by -- CMD ----------------------------------------------------------
# time(1) reports the CPU the workload used; stkrec follows it and cpuwork.
# 3000 rounds of ~1 ms: about 3 s of CPU, however long a busy machine
# takes to give it.
"$REC" -q -F $F -o "$tmp/cmd.stk" -- /usr/bin/time -f '%U %S' -o "$tmp/time.txt" "$CW" -n 3000 \
	> "$tmp/cmd.out" 2>&1
rc=$?
check "-- CMD: exit 0 (got $rc: $(cat "$tmp/cmd.out"))" [ "$rc" -eq 0 ]
tgid=$(cpuwork_tgid "$tmp/cmd.stk")
ticks=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($1 + $2) * hz }' "$tmp/time.txt")
check "-- CMD: the child's child (cpuwork, pid ${tgid:-none}) was followed" [ -n "$tgid" ]
[ -n "$tgid" ] && verify_cpuwork "-- CMD" "$tmp/cmd.stk" "$tgid" "$ticks"

# ---- kernel data --------------------------------------------------------
kbid=$("$DUMP" "$tmp/cmd.stk" | awk -F'\t' '$1 == "KBID" && $2 == "[kernel.kallsyms]" { print $5 }')
want_kbid=$(od -An -tx1 -v /sys/kernel/notes | tr -d ' \n' | \
	awk '{ i = index($0, "474e5500"); if (i) print substr($0, i + 8, 40) }')
check "KBID has the kernel's build-id ($kbid)" [ -n "$kbid" -a "$kbid" = "$want_kbid" ]

# dd spends its time in the kernel: kernel stacks and symbols.
"$REC" -q -F $F -o "$tmp/kern.stk" -- dd if=/dev/zero of=/dev/null bs=512 count=1500000 \
	> "$tmp/kern.out" 2>&1
rc=$?
check "kernel workload: exit 0 (got $rc)" [ "$rc" -eq 0 ]
"$DUMP" "$tmp/kern.stk" > "$tmp/kern.dump"
nksym=$(grep -c '^KSYM' "$tmp/kern.dump")
nkst=$(awk -F'\t' '$1 == "CNTS" && $6 >= 0 { n += $9 } END { print n + 0 }' "$tmp/kern.dump")
check "kernel workload: $nkst samples with kernel stacks, $nksym KSYM symbols" [ "$nkst" -gt 0 -a "$nksym" -gt 0 ]
# Every frame of every kernel stack is covered by a KSYM symbol written
# before the CNTS rows that use it (in the same flush as the stack), but an
# address outside the kernel's text that STAT kaddr_unknown counts.
kallsyms_snapshot "$tmp/kallsyms.txt"
# shellcheck disable=SC2046 # three numbers, split on purpose
set -- $(uncovered_kframes "$tmp/kern.dump" "$tmp/kallsyms.txt")
unk=$(stat_of "$tmp/kern.stk" kaddr_unknown)
check "kernel workload: every kernel frame is covered by a KSYM symbol, but $2 outside the kernel's text counted in kaddr_unknown ($unk); $1 not covered" \
	[ "$3" -gt 0 -a "$1" -eq "$2" -a "$2" -le "$unk" ]
# The symbols come from the kernel's own %pS (BPF symbolizer): each one is
# the symbol /proc/kallsyms has at that address, but BPF programs unloaded
# since (an NMI can land in one).
# shellcheck disable=SC2046 # two numbers, split on purpose
set -- $(foreign_ksyms "$tmp/kern.dump" "$tmp/kallsyms.txt")
check "kernel workload: every KSYM symbol is /proc/kallsyms' symbol at that address ($1 not, $2 of them programs gone since)" \
	[ "$1" -eq "$2" ]
# A stack is either a user or a kernel stack: never referenced as both,
# user stacks start at a user address, kernel stacks hold only kernel
# addresses.
mixed=$(awk -F'\t' '
	$1 == "STCK" { fr[$2] = $4 }
	$1 == "CNTS" && $5 >= 0 { u[$5] = 1; if (fr[$5] ~ /^0xffff/) bad++ }
	$1 == "CNTS" && $6 >= 0 {
		k[$6] = 1
		n = split(fr[$6], f, ",")
		for (i = 1; i <= n; i++) if (f[i] !~ /^0xffff/) bad++
	}
	END { for (id in u) if (id in k) bad++; print bad + 0 }' "$tmp/kern.dump")
check "stacks: user and kernel stacks are distinct, each with its kind of addresses" [ "$mixed" -eq 0 ]
# Every stack id referenced by a row is in a STCK chunk before the row.
missing=$(awk -F'\t' '
	$1 == "STCK" { have[$2] = 1 }
	$1 == "CNTS" && (($5 >= 0 && !have[$5]) || ($6 >= 0 && !have[$6])) { bad++ }
	END { print bad + 0 }' "$tmp/kern.dump")
check "every referenced stack is written before its count row" [ "$missing" -eq 0 ]


# Each perf event fd is closed once: the BPF link owns it after attach
# (bpf_link__destroy() closes it), so a second close() by stkrec would
# fail with EBADF, or close an unrelated file that took the number.
if command -v strace > /dev/null; then
	strace -f -qq -e trace=close -o "$tmp/close.trace" "$REC" -q -o "$tmp/fds.stk" 0.5
	rc=$?
	nbad=$(grep -c EBADF "$tmp/close.trace")
	check "detach: every fd closed once, none twice (exit $rc, $nbad close() with EBADF)" \
		[ "$rc" -eq 0 -a "$nbad" -eq 0 ]
else
	skip "detach: every fd closed once" "no strace"
fi

finish
