# SPDX-License-Identifier: BSD-2-Clause
#
# stkrec trace's test workload (tests/e2e/trace_*.sh, tests/bench):
# eventwork and its library libeventwork.so (beside it, found by
# $ORIGIN), built with the default flags: no frame pointers, so the
# stacks come from the .eh_frame unwinder as a distribution binary's.

EVENTWORK := $(O)/tests/tools/eventwork
EVENTLIB := $(O)/tests/tools/libeventwork.so

$(EVENTLIB): tests/tools/eventlib.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -O2 -g -fPIC -shared $(LDFLAGS) $< -o $@

$(EVENTWORK): tests/tools/eventwork.c $(EVENTLIB)
	$(call msg,CC-TOOL,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -O2 -g $(LDFLAGS) $< -L$(@D) -leventwork \
		-Wl,-rpath,'$$ORIGIN' -o $@

TEST_EXTRA_DEPS += $(EVENTWORK) $(EVENTLIB)

# make bench runs stkrec trace's part too (tests/bench/bench_trace.sh).
bench: bench-trace
bench-trace: all $(TEST_EXTRA_DEPS)
	$(Q)O=$(O) sh tests/bench/bench_trace.sh
.PHONY: bench-trace
