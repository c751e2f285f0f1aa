#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# record_setup: the time and memory a big --stack-storage-size costs.
#  - DURATION counts from when sampling starts, not from the start of the
#    setup (loading BPF, preallocating the maps: with 262144 entries the
#    setup is longer than the 0.3 s asked for, which once left 0 samples);
#    META setup_ns says how long the setup took;
#  - the kernel memory per entry is what --help says (about 145 bytes: the
#    stacks set and 64 bytes of its ring), from fdinfo's memlock, and the
#    two counts maps are sized by the samples of four flush intervals, not
#    by --stack-storage-size: 8192 entries (the least) for one CPU at
#    the default 49 Hz (-C 0), 4 x 4999 x 1 s at -F 4999 (fewer than
#    --stack-storage-size 65536), 65536 (at most) at -F 999 flushed
#    every 20 s;
#  - --python=no leaves Python's maps at one entry (its ring at a page);
#  - a size the machine cannot hold is refused in one line (a fake
#    /proc/meminfo with 1 GiB available, bind-mounted in a private mount
#    namespace).
# Exit 77 only when BPF cannot be used (not root, or no BTF).

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# Something to sample, until the test stops it (an hour only bounds a test
# that dies without its trap).
bg "$CW" 3600 1
cw=$bg_pid

# ---- DURATION from the start of sampling ------------------------------------
"$REC" -q --stack-storage-size 262144 -o "$tmp/d.stk" 0.3 2> "$tmp/d.err"
rc=$?
check "262144 entries, 0.3 s: exit 0 ($rc $(cat "$tmp/d.err"))" [ "$rc" -eq 0 ]
setup=$(meta_of "$tmp/d.stk" setup_ns)
check "META setup_ns says how long the setup took (${setup:-none})" [ "${setup:-0}" -gt 0 ]
check "samples were taken for the 0.3 s asked ($(stat_of "$tmp/d.stk" samples))" \
	[ "$(stat_of "$tmp/d.stk" samples)" -gt 0 ]
# The intervals recorded span DURATION, counted from the end of the setup.
"$DUMP" "$tmp/d.stk" | awk -F'\t' -v s="${setup:-0}" '
	$1 == "SEGMENT" { m = $5 }
	$1 == "CHUNK" && $3 == "CNTS" { t1 = $5 }
	END { printf "%.0f\n", t1 - (m + s) }' > "$tmp/d.span"
check "the counts cover DURATION from the start of sampling ($(cat "$tmp/d.span") ns)" \
	[ "$(cat "$tmp/d.span")" -ge 300000000 ]
stop "$cw"

# ---- kernel memory per entry ---------------------------------------------------
n=65536
# counts_entries PID: max_entries of PID's counts maps (hash, 72-byte key,
# 32-byte value: eight intervals' counts), one line each.
counts_entries() {
	for f in /proc/$1/fdinfo/*; do
		awk '/^map_type:/ { t = $2 } /^key_size:/ { k = $2 } /^value_size:/ { v = $2 }
			/^max_entries:/ { e = $2 }
			END { if (t == 1 && k == 72 && v == 32) print e }' "$f" 2>/dev/null
	done
}
bg "$REC" -q -C 0 --stack-storage-size $n -o "$tmp/m.stk"
rpid=$bg_pid
# Its maps are made (and their memory charged) before it samples.
wait_sampling "$tmp/m.stk" "$rpid" || fail "stkrec --stack-storage-size $n starts sampling"
# The maps of N entries (the stacks set) and the ring of N * 64 bytes.
bytes=0
for f in /proc/$rpid/fdinfo/*; do
	grep -Eq "^max_entries:	($n|$((n * 64)))\$" "$f" 2>/dev/null || continue
	b=$(awk '/^memlock:/ { print $2 }' "$f")
	bytes=$((bytes + b))
done
counts=$(counts_entries "$rpid" | tr '\n' ' ')
stop "$rpid"
per=$((bytes / n))
check "kernel memory per entry is about 145 bytes as --help says ($per bytes)" within "$per" 130 160
"$REC" --help | grep -q 'about 145 bytes of kernel memory per entry' &&
	pass "--help says what an entry costs" || fail "--help says what an entry costs"
check "one CPU at 49 Hz: two counts maps of 8192 entries, not $n ($counts)" [ "$counts" = "8192 8192 " ]
for hz_s in 4999:1 999:20; do
	hz=${hz_s%:*} s=${hz_s#*:}
	bg "$REC" -q -C 0 -F $hz --flush-interval $s --stack-storage-size $n -o "$tmp/m$hz.stk"
	rpid=$bg_pid
	wait_sampling "$tmp/m$hz.stk" "$rpid" || fail "stkrec -F $hz starts sampling"
	counts=$(counts_entries "$rpid" | tr '\n' ' ')
	stop "$rpid"
	want=$((4 * hz * s + 1))
	[ $want -le $n ] || want=$n
	check "one CPU at $hz Hz, flushed every $s s: two counts maps of $want entries ($counts)" \
		[ "$counts" = "$want $want " ]
done

# ---- --python=no: Python's maps at their smallest ------------------------------
# small_py PID: PID's maps that only --python=no makes this small: LRU
# hashes of one entry (py_threads: 16-byte values; py_codes_seen: 8-byte
# keys, 1-byte values), hashes of one entry with 64-byte values (py_procs)
# and ring buffers of one page (py_code_ring).
small_py() {
	for f in /proc/$1/fdinfo/*; do
		awk '/^map_type:/ { t = $2 } /^key_size:/ { k = $2 } /^value_size:/ { v = $2 }
			/^max_entries:/ { e = $2 }
			END { if ((t == 9 && e == 1 && (v == 16 || (k == 8 && v == 1))) ||
				  (t == 1 && e == 1 && v == 64) || (t == 27 && e == 4096)) print t "/" k "/" v }' "$f" 2>/dev/null
	done | sort | tr '\n' ' '
}
for py in yes no; do
	bg "$REC" -q -C 0 --python=$py -o "$tmp/py$py.stk"
	rpid=$bg_pid
	wait_sampling "$tmp/py$py.stk" "$rpid" || fail "stkrec --python=$py starts sampling"
	eval "small_$py=\"\$(small_py $rpid)\""
	stop "$rpid"
done
check "--python=no: py_procs, py_threads, py_codes_seen of one entry, py_code_ring of a page ($small_no)" \
	[ "$small_no" = "1/4/64 27/0/0 9/4/16 9/8/1 " ]
check "--python=yes: none of them that small ($small_yes)" [ -z "$small_yes" ]

# ---- a size the machine cannot hold -------------------------------------------
if command -v unshare > /dev/null; then
	printf 'MemTotal:        2097152 kB\nMemFree:          524288 kB\nMemAvailable:    1048576 kB\n' \
		> "$tmp/meminfo"
	unshare -m sh -c "mount --bind '$tmp/meminfo' /proc/meminfo &&
		exec '$REC' -C 0 --stack-storage-size 4194304 -o '$tmp/big.stk' 1" \
		> /dev/null 2> "$tmp/big.err"
	rc=$?
	check "4194304 entries with 1 GiB available: exit 1 ($rc)" [ "$rc" -eq 1 ]
	check "... one line with the reason ($(cat "$tmp/big.err"))" \
		[ "$(cat "$tmp/big.err")" = "stkrec: --stack-storage-size 4194304: the BPF maps would take 578.7 MiB of kernel memory, more than half of the 1.0 GiB available (MemAvailable); choose a smaller size" ]
	check "... and no file" [ ! -e "$tmp/big.stk" ]
else
	skip "refusing a size too big" "unshare (util-linux) is needed"
fi

finish
