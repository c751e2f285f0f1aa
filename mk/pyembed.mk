# SPDX-License-Identifier: BSD-2-Clause
#
# pyembed (tests/e2e/python_dlopen.sh): an interpreter dlopen()ed by a
# process sampled before, as an application embedding Python loads it.
PYEMBED := $(O)/tests/tools/pyembed

$(PYEMBED): tests/tools/pyembed.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -ldl -lpthread -o $@

TEST_EXTRA_DEPS += $(PYEMBED)
