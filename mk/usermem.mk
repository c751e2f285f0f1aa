# SPDX-License-Identifier: BSD-2-Clause
#
# The memory bound of --user-memory (tests/e2e/record_usermem.sh):
#   libsymbig.so  300,000 function symbols (tests/tools/symbig.s: gas makes
#                 it in about 2.5 s, a 24 MB file)
#   symbigwork    copies it under new build-ids, maps and runs each copy
#   jitbloat      a JIT whose perf map is tens of MB and keeps growing

SYMBIG := $(O)/tests/tools/libsymbig.so
SYMBIGWORK := $(O)/tests/tools/symbigwork
JITBLOAT := $(O)/tests/tools/jitbloat

$(SYMBIG): tests/tools/symbig.s
	$(call msg,AS-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,--build-id=sha1 $(LDFLAGS) $< -o $@

$(SYMBIGWORK): tests/tools/symbigwork.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -ldl -o $@

$(JITBLOAT): tests/tools/jitbloat.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -o $@

TEST_EXTRA_DEPS += $(SYMBIG) $(SYMBIGWORK) $(JITBLOAT)
