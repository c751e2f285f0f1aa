# SPDX-License-Identifier: BSD-2-Clause
#
# Hostile-input test helpers: fifotrap, the unprivileged side of the "FIFO
# at a mapped path" attack on a root stkrec (tests/e2e/record_hostile.sh).

FIFOTRAP := $(O)/tests/tools/fifotrap

$(FIFOTRAP): tests/tools/fifotrap.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@

TEST_EXTRA_DEPS += $(FIFOTRAP)
