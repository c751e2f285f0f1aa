# SPDX-License-Identifier: BSD-2-Clause
#
# Reporter performance work.
#
# check_scopes reads the fixtures and the tools themselves (built -O2 -g:
# full of inlined code).

$(O)/tests/check_scopes: $(FIXTURES) $(O)/stkreport $(O)/stkrec

# make bench runs stkreport's part too (tests/bench/bench.sh is stkrec's).
bench: bench-report
bench-report: all $(TEST_EXTRA_DEPS)
	$(Q)O=$(O) sh tests/bench/bench_report.sh
.PHONY: bench-report
