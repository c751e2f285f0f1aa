# SPDX-License-Identifier: BSD-2-Clause
#
# make bench's soak (tests/bench/soak.sh, issue 22): mapgrow, the hostile
# process whose large perf map keeps changing.

MAPGROW := $(O)/tests/tools/mapgrow

$(MAPGROW): tests/tools/mapgrow.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< -o $@

TEST_EXTRA_DEPS += $(MAPGROW)
