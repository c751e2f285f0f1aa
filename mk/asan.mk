# SPDX-License-Identifier: BSD-2-Clause
#
# stkrec and stkreport built with ASan+UBSan into $(O)/asan, for
# tests/e2e/asan_e2e.sh (make check records and reports under them).  A
# second build tree made by a sub-make with the same rules: every object,
# BPF programs and skeletons included, with CFLAGS/LDFLAGS plus SAN_FLAGS;
# only vmlinux.h is taken from $(O).  Phony, so the sub-make always looks
# whether the sources changed.

ASAN_O := $(O)/asan

asan-tools: $(O)/vmlinux.h
	$(Q)$(MAKE) O=$(ASAN_O) VMLINUX_H=$(O)/vmlinux.h CFLAGS="$(CFLAGS) $(SAN_FLAGS)" \
		LDFLAGS="$(LDFLAGS) $(SAN_FLAGS)" $(ASAN_O)/stkrec $(ASAN_O)/stkreport
.PHONY: asan-tools

TEST_EXTRA_DEPS += asan-tools
