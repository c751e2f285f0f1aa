# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport --vmlinux tests.  No real vmlinux exists for the test machine's
# kernel, so a stand-in is built the way the kernel is: ET_EXEC, -O2 -g with
# an inlined function, linked at 0xffffffff81000000 with _text/_etext and a
# build-id (tests/fixtures/fx_vmlinux.c, fx_vmlinux.lds).
#
# $(KFX)/vmlinux       the stand-in; mkcapture's "kernel" line records its
#                      build-id and points kernel stacks into it, slid by a
#                      KASLR offset (tests/golden/report_kernel*.spec)
# $(KFX)/vmlinux.other the same source built differently: another build-id

KFX := $(O)/tests/fixtures/kernel
KFX_CFLAGS := -g -O2 -fno-pie -no-pie -mcmodel=kernel -ffreestanding -nostdlib -static \
	-fno-optimize-sibling-calls -fno-asynchronous-unwind-tables -Wall -Wextra -Werror $(REPRO)
KFX_LDFLAGS := -Wl,--build-id=sha1 -Wl,-T,tests/fixtures/fx_vmlinux.lds
KFIXTURES := $(KFX)/vmlinux $(KFX)/vmlinux.other

$(KFX)/vmlinux: tests/fixtures/fx_vmlinux.c tests/fixtures/fx_vmlinux.lds
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(KFX_CFLAGS) $(KFX_LDFLAGS) $< -o $@

$(KFX)/vmlinux.other: tests/fixtures/fx_vmlinux.c tests/fixtures/fx_vmlinux.lds
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(KFX_CFLAGS) -DFX_OTHER_BUILD $(KFX_LDFLAGS) $< -o $@

fixtures: $(KFIXTURES)
$(O)/tests/check_kvmlinux: $(KFIXTURES)

TEST_EXTRA_DEPS += $(KFIXTURES)
