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

finish
