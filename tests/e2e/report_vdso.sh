#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# End to end: frames in the vDSO get names.  No file on disk holds the
# vDSO, so stkrec embeds its image in an ESYM chunk and stkreport reads it
# from there.  Records "cpuwork -c" (clock_gettime() in a loop) and checks:
#  - the capture has one ESYM chunk, STAT vdso_embedded 1, and the [vdso]
#    mapping's build-id is the one read here from a process's own vDSO
#    (dd of /proc/PID/mem, readelf -n): the real one, not a made-up one,
#  - with --addresses no frame that a symbol of the vDSO covers prints as
#    [[vdso]+0xOFFSET] (unresolved), and samples in the vDSO are named
#    __vdso_clock_gettime.  Some kernels' vDSOs have code no symbol covers
#    (a paravirtual clock's reader, a static function before the first
#    exported one): those frames are unnamed in the image itself and print
#    as [[vdso]+0xOFFSET], truthfully;
#  - info --symbols names "embedded" as the source of [vdso], with no
#    sample left with an unknown frame there but those.
#
# Exit 77 (skip) only when BPF cannot be used here: not root, or no BTF.
#
# The independent build-id comes from this test's own shell, alive and
# past its exec for the whole test: a just-started process (it was a
# "bg sleep 5") can be read mid-exec, without a [vdso] mapping yet, and
# the build-id came back empty under load.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

# No user symbols embedded (--embed-symbols=none): the vDSO's image is
# then the capture's only ESYM chunk.
if ! "$REC" -q -F 199 --embed-symbols=none -o "$tmp/c.stk" -- "$CW" -c 2 >/dev/null 2>"$tmp/rec.err"; then
	fail "stkrec -- cpuwork -c 2" "$(cat "$tmp/rec.err")"
	finish
fi

"$REP" info "$tmp/c.stk" >"$tmp/info" 2>&1
check "one ESYM chunk (embedded symbol table)" grep -qx 'embedded symbol tables: 1' "$tmp/info"
check "STAT vdso_embedded is 1" test "$(stat_of "$tmp/c.stk" vdso_embedded)" = 1

# The vDSO's build-id, read independently: this shell's [vdso] mapping
# (every process maps the same image) copied out of its memory.
range=$(awk '$NF == "[vdso]" { print $1 }' "/proc/$$/maps")
if [ -z "$range" ]; then
	fail "no [vdso] mapping in /proc/$$/maps"
	finish
fi
start=$((0x${range%-*}))
end=$((0x${range#*-}))
dd if="/proc/$$/mem" of="$tmp/vdso.so" iflag=skip_bytes,count_bytes skip="$start" \
	count=$((end - start)) 2>/dev/null
want=$(readelf -n "$tmp/vdso.so" 2>/dev/null | awk '/Build ID:/ { print $3 }')
got=$("$DUMP" "$tmp/c.stk" | awk -F'\t' '$1 == "MAP" && $10 == "[vdso]" { print $9 }' | sort -u)
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	pass "[vdso] mappings carry the vDSO's build-id $want"
else
	fail "[vdso] build-id: recorded '$got', the vDSO's is '$want'"
fi

# --addresses puts every frame's address first ("%016x name"): names only.
"$REP" -f folded --addresses "$tmp/c.stk" 2>"$tmp/rep.err" |
	sed 's/;[0-9a-f]\{16\} /;/g' >"$tmp/folded"
n_vdso=$(awk '{ line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
		if (f[k] == "__vdso_clock_gettime") n += $NF } END { print n + 0 }' "$tmp/folded")
if [ "$n_vdso" -gt 0 ]; then
	pass "$n_vdso samples with __vdso_clock_gettime as the leaf"
else
	fail "no sample in __vdso_clock_gettime: $(head -3 "$tmp/folded")"
fi
# The vDSO's function symbols, "start size" (hex, decimal), from its own
# image.
readelf -sW "$tmp/vdso.so" 2>/dev/null |
	awk '$4 == "FUNC" { print $2, $3 }' > "$tmp/vdso.funcs"
# Unresolved vDSO frames at offsets a symbol covers, and samples with an
# offset none covers.
awk "$AWK_HEX"'
	NR == FNR { lo[NR] = hex($1); hi[NR] = lo[NR] + $2; n = NR; next }
	{
		line = $0; c = $NF; sub(/ [0-9]+$/, "", line); k = split(line, f, ";"); un = 0
		for (i = 1; i <= k; i++) {
			if (f[i] !~ /^\[\[vdso\]\+0x[0-9a-f]+\]$/) continue
			o = f[i]; gsub(/^\[\[vdso\]\+|\]$/, "", o); o = hex(o)
			cov = 0
			for (j = 1; j <= n; j++) if (o >= lo[j] && o < hi[j]) cov = 1
			if (cov) { if (bad++ < 3) print "covered: " $0 > "/dev/stderr" } else un = 1
		}
		if (un) uncovered += c
	}
	END { printf "%d %d\n", bad, uncovered }' "$tmp/vdso.funcs" "$tmp/folded" \
	> "$tmp/vdso.un" 2> "$tmp/vdso.bad"
read -r bad uncovered < "$tmp/vdso.un"
check "no vDSO frame a symbol covers prints as [[vdso]+0xOFFSET] ($bad; $(cat "$tmp/vdso.bad"); $(wc -l < "$tmp/vdso.funcs") symbols)" \
	[ "$bad" -eq 0 -a "$(wc -l < "$tmp/vdso.funcs")" -gt 0 ]

"$REP" info --symbols "$tmp/c.stk" >"$tmp/syms" 2>&1
awk '/^module: \[vdso\]$/ { on = 1; next } /^module: / { on = 0 } on' "$tmp/syms" >"$tmp/vdso.syms"
check "info --symbols: [vdso] from the embedded image" grep -qx '  elf: \[vdso\] (embedded)' \
	"$tmp/vdso.syms"
check "info --symbols: [vdso] symbols found" grep -qx '  symbols: symbols found' "$tmp/vdso.syms"
check "info --symbols: no [vdso] sample with an unknown frame but the $uncovered no symbol covers ($(grep 'unknown' "$tmp/vdso.syms"))" \
	grep -qx "  samples with unknown frames: $uncovered" "$tmp/vdso.syms"

finish
