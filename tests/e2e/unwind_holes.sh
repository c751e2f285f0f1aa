#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_holes: the unwinder's holes found on real programs (issue 22),
# each on a workload whose stack is known (tests/unwind/uwholes.c, built
# with frame pointers and CFI as Node.js is, against the distribution's
# libc: CFI, no frame pointers):
#  - STAT unwind_stop_* is what the report shows: per reason, the samples
#    (episodes) whose user stack ends with that marker, exactly, in auto
#    and dwarf captures and off-CPU (SPEC.md, STAT); the auto capture of
#    nodelike is where they disagreed (the walks stopped, the frame-pointer
#    stack taken: STAT counted stops no stack showed).
#  - A 300-deep recursion, deeper than the 127 frames taken: under
#    --unwind=dwarf and --unwind=fp (where bpf_get_stack() cannot say it
#    cut) every sample in its leaf shows [unwind stopped: depth] where the
#    stack was cut, the leaf side kept (as perf keeps it): 126 frames
#    ending deep_rec;deep_leaf;burn, then the marker; stkreport info
#    counts them, and so does STAT.
# Exit 77 only when BPF cannot be used (not root, or no BTF).
#
# Every uwholes run is -- CMD with -c: it runs for SECONDS of its own CPU
# time, so a recording at F Hz gets about SECONDS x F samples however busy
# the machine is.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"

UH=$O/tests/unwind/uwholes
NOFP=$O/tests/unwind/nofpwork
need_files "$UH" "$NOFP"_nocfi "$DUMP"
need_bpf

# stops_agree DESC FILE [any]: STAT unwind_stop_REASON of FILE equals, for
# every reason, the samples (episodes) stkreport info counts under its
# marker; and at least one stop was seen (else the check proves little),
# unless "any".
stops_agree() {
	"$DUMP" "$2" >"$tmp/sa.dump"
	"$REP" info "$2" >"$tmp/sa.info" 2>/dev/null
	awk -F'\t' -v any="${3:+1}" '
	FILENAME == ARGV[1] && $1 == "STAT" && $2 ~ /^unwind_stop_/ {
		r = substr($2, 13)
		if (r == "no_mapping") r = "no mapping"
		else if (r == "no_row") r = "no CFI"
		else if (r == "unsupported") r = "unsupported CFI"
		else if (r == "fp") r = "frame pointer"
		stat[r] = $3; seen[r] = 1
	}
	FILENAME == ARGV[2] && /^unwind stopped: / {
		s = $0; sub(/^unwind stopped: /, "", s)
		if (!match(s, / [0-9]+ (samples|episodes) /)) next
		r = substr(s, 1, RSTART - 1)
		n = substr(s, RSTART + 1, RLENGTH - 1); sub(/ .*/, "", n)
		shown[r] = n; seen[r] = 1
	}
	END {
		bad = 0; total = 0
		for (r in seen) {
			printf "%s: STAT %d, report %d; ", r, stat[r] + 0, shown[r] + 0
			if (stat[r] + 0 != shown[r] + 0) bad = 1
			total += shown[r]
		}
		printf "\n"
		exit bad || (total == 0 && !any)
	}' "$tmp/sa.dump" "$tmp/sa.info" >"$tmp/sa.out"
	_rc=$?
	echo "     $1: $(cat "$tmp/sa.out")"
	check "$1: STAT unwind_stop_* = the markers the report counts, per reason" [ "$_rc" -eq 0 ]
}

"$REC" -q -F 499 -o "$tmp/nl.stk" -- "$UH" -c nodelike 2 >/dev/null
check "stkrec -- uwholes nodelike (auto) exits 0" [ $? -eq 0 ]
stops_agree "auto nodelike" "$tmp/nl.stk" any

"$REC" -q -F 499 --unwind=dwarf -o "$tmp/nld.stk" -- "$UH" -c nodelike 2 >/dev/null
check "stkrec --unwind=dwarf -- uwholes nodelike exits 0" [ $? -eq 0 ]
stops_agree "dwarf nodelike" "$tmp/nld.stk"

"$REC" -q -F 499 -o "$tmp/nocfi.stk" -- "$NOFP"_nocfi -c 1 >/dev/null
stops_agree "auto, no CFI" "$tmp/nocfi.stk"

# Off-CPU, both sides: a reader woken by a writer, neither with a table.
"$REC" offwake -q -o "$tmp/ow.stk" -- sh -c "'$NOFP'_nocfi write 8 | '$NOFP'_nocfi read >/dev/null" >/dev/null
stops_agree "offwake, no CFI" "$tmp/ow.stk"

# deep MODE: record deep 300 under --unwind=MODE; of the samples whose user
# stack reaches deep_leaf, "total marked" (marked: the depth marker at the
# root, 126 frames below it, deep_leaf;burn at the leaf).
deep() {
	_mode=$1
	"$REC" -q -F 499 --unwind="$1" -o "$tmp/deep-$1.stk" -- "$UH" -c deep 300 2 >/dev/null
	check "stkrec --unwind=$1 -- uwholes deep 300 exits 0" [ $? -eq 0 ]
	"$REP" -U -f folded "$tmp/deep-$1.stk" >"$tmp/deep-$1.folded" 2>/dev/null
	set -- $(awk -F';' '
	$1 == "uwholes" && /;deep_leaf;/ {
		n = $NF; sub(/.* /, "", n); total += n
		if ($2 == "[unwind stopped: depth]" && NF == 128 && $(NF - 2) == "deep_rec" &&
		    $(NF - 1) == "deep_leaf" && $NF ~ /^burn /)
			marked += n
	}
	END { printf "%d %d\n", total, marked }' "$tmp/deep-$1.folded")
	echo "     $_mode: $2 of $1 samples in deep_leaf cut at 127 frames with the depth marker"
	_t=$1 _m=$2
}

for m in dwarf fp; do
	deep $m
	check "$m: >= 99% of $_t samples in deep_leaf (300 deep) marked where cut, leaf side kept ($_m)" \
		[ "$_t" -ge 200 -a $((_m * 100)) -ge $((_t * 99)) ]
	"$REP" info "$tmp/deep-$m.stk" >"$tmp/deep-$m.info" 2>/dev/null
	check "$m: stkreport info counts the depth stops" grep -q '^unwind stopped: depth [1-9]' "$tmp/deep-$m.info"
	stops_agree "$m deep" "$tmp/deep-$m.stk"
done

finish
