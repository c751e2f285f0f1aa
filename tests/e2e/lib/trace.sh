# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by the trace tests (tests/e2e/trace_*.sh) after lib/harness.sh and
# lib/record.sh: the workload whose events are known exactly
# (tests/tools/eventwork.c), and sums over stkreport's folded output.

EW=$O/tests/tools/eventwork
EWLIB=$O/tests/tools/libeventwork.so
need_files "$EW" "$EWLIB"

# folded_sum FILE PATTERN [EVENT]: the summed counts of the folded lines
# of FILE (of its event EVENT) that contain PATTERN (an awk regex).
folded_sum() {
	if [ -n "${3:-}" ]; then
		"$REP" -f folded --event "$3" "$1" 2> /dev/null
	else
		"$REP" -f folded "$1" 2> /dev/null
	fi | awk -v p="$2" '$0 ~ p { n += $NF } END { print n + 0 }'
}

# trce_sum FILE EVENT: the summed counts of FILE's TRCE rows of event index EVENT.
trce_sum() {
	"$DUMP" "$1" | awk -F'\t' -v e="$2" '$1 == "TRCE" && $2 == e { n += $8 } END { printf "%.0f\n", n + 0 }'
}
