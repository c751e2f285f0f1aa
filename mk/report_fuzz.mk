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

# fuzz_writers reads elf.stk too, for its addresses, mappings and kernel
# symbols.  fuzz_zelf builds its ELF images from the fx_pie fixture with
# fxelf.h and zlib, and runs under SPEC.md §7.3's bound for its largest
# capture: 256 MiB + 128 x S, S < 64 KiB (-max_len 4096 edits a 19 KB
# image), so 264 MiB resident and for one allocation; ASan's quarantine
# is cut to 16 MiB so that the bound measures the reporter, not it.
FUZZ_ZELF := $(O)/tests/fuzz_zelf_replay $(O)/fuzz/fuzz_zelf
$(FUZZ_ZELF): FUZZ_INCLUDES += -Itests/tools
$(FUZZ_ZELF): PKG_LIBS += -lz
FUZZ_OPTS_zelf := -max_len=4096 -rss_limit_mb=264 -malloc_limit_mb=264
FUZZ_ENV_zelf := ASAN_OPTIONS=quarantine_size_mb=16
