# SPDX-License-Identifier: BSD-2-Clause
#
# Format test rules: stkwrite-sample writes .stk files without BPF (known
# totals, or random records of every type from a seed) for the format_*.sh
# e2e tests and for regenerating the fuzz corpus (tests/fuzz/make-corpus.sh).

STKWRITE := $(O)/tests/tools/stkwrite-sample

$(STKWRITE): tests/tools/stkwrite-sample.c $(LIBSTK)
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Itests/tools $< $(LIBSTK) $(PKG_LIBS) -o $@

TEST_EXTRA_DEPS += $(STKWRITE)
