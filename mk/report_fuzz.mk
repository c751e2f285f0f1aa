# SPDX-License-Identifier: BSD-2-Clause
#
# What the reporter's fuzz targets read besides their input (tests/fuzz/):
#   fuzz_report, fuzz_diffmerge   the ELF fixtures, as --sysroot, --debug-dir
#                                 and --vmlinux (mk/report.mk, mk/kvmlinux.mk)
#   fuzz_elf                      the same, and $(O)/tests/fuzz/elf.stk, a
#                                 capture of them made by mkcapture from
#                                 tests/fuzz/elf.spec
# Order-only: the rules link $^.

FUZZ_ELF_CAPTURE := $(O)/tests/fuzz/elf.stk

$(FUZZ_ELF_CAPTURE): tests/fuzz/elf.spec $(MKCAPTURE) $(FIXTURES) $(KFIXTURES)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MKCAPTURE) -C $(FX)/root $< $@

$(FUZZ_REPLAY) $(FUZZ_BINS): | $(FIXTURES) $(KFIXTURES) $(FUZZ_ELF_CAPTURE)
