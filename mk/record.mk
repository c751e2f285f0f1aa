# SPDX-License-Identifier: BSD-2-Clause
#
# stkrec test rules: stkdump, a test reader that prints every record of a
# .stk file as tab-separated lines for the e2e scripts (tests/e2e/record_*.sh).

STKDUMP := $(O)/tests/tools/stkdump

$(STKDUMP): tests/tools/stkdump.c $(LIBSTK)
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(LIBSTK) $(PKG_LIBS) -o $@

TEST_EXTRA_DEPS += $(STKDUMP)

# Unit suites of record/ modules include their headers by name (one -I per
# folder of record/, as its objects are built).
$(O)/tests/check_record_%: private ALL_CFLAGS += $(RECORD_INCLUDES)
