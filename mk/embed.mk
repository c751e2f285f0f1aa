# SPDX-License-Identifier: BSD-2-Clause
#
# Embedded-symbols test workloads (tests/e2e/report_embed.sh): embedwork
# and its shared library libembedwork.so (beside it, found by $ORIGIN),
# and jitwork (JIT code named by /tmp/perf-PID.map).  Frame pointers, as
# the samples, so stacks are complete.

EMBEDWORK := $(O)/tests/tools/embedwork
EMBEDLIB := $(O)/tests/tools/libembedwork.so
JITWORK := $(O)/tests/tools/jitwork

$(EMBEDLIB): tests/tools/embedlib.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) -fPIC -shared $(LDFLAGS) $< -o $@

$(EMBEDWORK): tests/tools/embedwork.c $(EMBEDLIB)
	$(call msg,CC-TOOL,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -L$(@D) -lembedwork \
		-Wl,-rpath,'$$ORIGIN' -o $@

$(JITWORK): tests/tools/jitwork.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -o $@

TEST_EXTRA_DEPS += $(EMBEDWORK) $(EMBEDLIB) $(JITWORK)
