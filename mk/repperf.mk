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

# check_cuaddr: stkreport, and a copy of it without .debug_aranges (as Go,
# clang and rustc write their DWARF).
$(O)/tests/fixtures/stkreport.noaranges: $(O)/stkreport
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && objcopy --remove-section=.debug_aranges $< $@
$(O)/tests/check_cuaddr: $(O)/tests/fixtures/stkreport.noaranges $(O)/stkreport
