#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Run test programs (Check suites, fuzz corpus replays, e2e shell scripts)
# and end with one line "N passed, N failed".
#
# Exit status of a test: 0 pass, 77 skip (e.g. no BPF), anything else fail.
# With STK_REQUIRE_BPF=1 (CI) a skip counts as a failure.

passed=0
failed=0
skipped=0
failed_names=""

for t in "$@"; do
	name=${t##*/}
	echo "=== $name"
	case "$t" in
	*.sh) sh "$t" ;;
	*) "$t" ;;
	esac
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
	elif [ $rc -eq 77 ] && [ "${STK_REQUIRE_BPF:-0}" != 1 ]; then
		echo "--- $name: SKIPPED"
		skipped=$((skipped + 1))
	else
		[ $rc -eq 77 ] && echo "--- $name: skipped, but STK_REQUIRE_BPF=1 makes that a failure"
		echo "--- $name: FAILED (exit $rc)"
		failed=$((failed + 1))
		failed_names="$failed_names $name"
	fi
done

[ -n "$failed_names" ] && echo "failed:$failed_names"
[ $skipped -gt 0 ] && echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
