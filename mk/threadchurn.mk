# SPDX-License-Identifier: BSD-2-Clause
#
# threadchurn (tests/e2e/record_counts_fill.sh): a burst of threads that
# come and go, on cue, each sample a counts key of its own.
THREADCHURN := $(O)/tests/tools/threadchurn

$(THREADCHURN): tests/tools/threadchurn.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -lpthread -o $@

TEST_EXTRA_DEPS += $(THREADCHURN)
