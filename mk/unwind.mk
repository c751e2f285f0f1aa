# SPDX-License-Identifier: BSD-2-Clause
#
# .eh_frame unwinding: workloads built as distributions build (no frame
# pointers), for check_record_unwind_table and tests/e2e/unwind_*.sh.
#   $(UW)/nofpwork         -O2 -fomit-frame-pointer -g, a known call tree
#   $(UW)/nofpwork_nohdr   the same linked without .eh_frame_hdr (FDEs scanned)
#   $(UW)/nofpwork_static  the same linked -static, as GCC links those: no
#                          .eh_frame_hdr, and glibc's own FDEs (_start,
#                          __libc_start_main, ...) in the binary
#   $(UW)/nofpwork_static_hdr  the same with --eh-frame-hdr (the same table)
#   $(UW)/nofpwork_dbgframe  -fno-unwind-tables -g: the program's CFI in
#                          .debug_frame only (crt1.o's in .eh_frame)
#   $(UW)/nofpwork_dbgsplit  the same with its .debug_frame stripped into
#                          $(UW)/debug/.build-id/xx/yyyy.debug
#   $(UW)/nofpwork_nocfi   no CFI at all: -fno-unwind-tables, crt1.o's
#                          .eh_frame and -g's .debug_frame removed (no
#                          table: frame pointers)
#   $(UW)/stackfan         16384 distinct stacks, frame pointers (make bench)
#   $(UW)/uwholes          frame pointers and CFI, as Node.js is built: the
#                          holes real programs showed (tests/unwind/uwholes.c),
#                          with $(UW)/libuwctor.so (its constructor, uwctor.c)
#   $(UW)/cfi_bigreg, cfi_remember, cfi_aligned, cfi_hiddencie  hostile CFI (tests/unwind/cfi_*.s)
#                          (ld warns that cfi_aligned gets no .eh_frame_hdr: meant)
#                          the table builder must refuse before libdw runs it
# -fno-optimize-sibling-calls keeps every function of the call tree on the
# stack (a tail call would leave no frame to find, by any unwinder).

UW := $(O)/tests/unwind
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls $(REPRO)
NOCFI_CFLAGS := -fno-asynchronous-unwind-tables -fno-unwind-tables
UW_PROGS := $(UW)/nofpwork $(UW)/nofpwork_nohdr $(UW)/nofpwork_static $(UW)/nofpwork_static_hdr \
	$(UW)/nofpwork_nocfi $(UW)/nofpwork_dbgframe $(UW)/nofpwork_dbgsplit \
	$(UW)/cfi_bigreg $(UW)/cfi_remember $(UW)/cfi_aligned $(UW)/cfi_hiddencie

$(UW)/cfi_bigreg $(UW)/cfi_remember: $(UW)/cfi_%: tests/unwind/cfi_%.s
	$(call msg,AS-CFI,$@)
	$(Q)mkdir -p $(@D) && $(CC) -nostdlib -static -Wl,--eh-frame-hdr $< -o $@

$(UW)/cfi_aligned $(UW)/cfi_hiddencie: $(UW)/cfi_%: tests/unwind/cfi_%.s
	$(call msg,AS-CFI,$@)
	$(Q)mkdir -p $(@D) && $(CC) -nostdlib -static -Wl,--no-eh-frame-hdr $< -o $@

$(UW)/nofpwork: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror $< -o $@

$(UW)/nofpwork_nohdr: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror -Wl,--no-eh-frame-hdr $< -o $@

$(UW)/nofpwork_static: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror -static $< -o $@

$(UW)/nofpwork_static_hdr: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror -static \
		-Wl,--eh-frame-hdr $< -o $@

$(UW)/nofpwork_nocfi: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(NOCFI_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror \
		-Wl,--no-eh-frame-hdr $< -o $@.full
	$(Q)objcopy --remove-section=.eh_frame --remove-section=.debug_frame $@.full $@
	$(Q)rm -f $@.full

$(UW)/nofpwork_dbgframe: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(NOCFI_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror $< -o $@

$(UW)/nofpwork_dbgsplit: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(NOFP_CFLAGS) $(NOCFI_CFLAGS) $(LDFLAGS) -Wall -Wextra -Werror \
		-Wl,--build-id=sha1 $< -o $@.full
	$(Q)id=$$(readelf -n $@.full | sed -n 's/^ *Build ID: *//p'); \
		dir=$(UW)/debug/.build-id/$$(echo $$id | cut -c1-2); \
		mkdir -p $$dir && \
		objcopy --only-keep-debug $@.full $$dir/$$(echo $$id | cut -c3-).debug
	$(Q)objcopy --strip-debug $@.full $@
	$(Q)rm -f $@.full

$(UW)/stackfan: tests/unwind/stackfan.c
	$(call msg,CC-FP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(FP_CFLAGS) -Wall -Wextra -Werror -pthread $(LDFLAGS) $< -o $@

# -mno-omit-leaf-frame-pointer: burn() is a leaf, and the frame-pointer
# stacks the test compares with must not lose its caller.
UWHOLES_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls $(REPRO) -Wall -Wextra -Werror

$(UW)/libuwctor.so: tests/unwind/uwctor.c
	$(call msg,CC-FP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(UWHOLES_CFLAGS) -fPIC -shared $(LDFLAGS) $< -o $@

$(UW)/uwholes: tests/unwind/uwholes.c $(UW)/libuwctor.so
	$(call msg,CC-FP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(UWHOLES_CFLAGS) $(LDFLAGS) $< -L$(UW) -luwctor \
		-Wl,-rpath,'$$ORIGIN' -Wl,-z,lazy -o $@

$(O)/tests/check_record_unwind_table $(O)/tests/check_record_unwinder: $(UW_PROGS)

TEST_EXTRA_DEPS += $(UW_PROGS) $(UW)/stackfan $(UW)/uwholes

# The oracle (tests/tools/uworacle.c): the same BPF unwinder, plus a copy
# of registers and stack per sample that libdwfl unwinds to compare.
UWORACLE := $(O)/tests/tools/uworacle

$(O)/tests/tools/uworacle.bpf.o: tests/tools/uworacle.bpf.c $(O)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 --target=bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wextra -Werror \
		-MMD -MP -MT $@ -I$(O) -Ibpf $(shell pkg-config --cflags libbpf) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(O)/tests/tools/uworacle.skel.h: $(O)/tests/tools/uworacle.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(UWORACLE): tests/tools/uworacle.c $(O)/tests/tools/uworacle.skel.h $(LIBRECORD) $(LIBSTK) $(LIBUTIL)
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(RECORD_INCLUDES) -I$(O)/tests/tools $< $(LIBRECORD) $(LIBSTK) \
		$(LIBUTIL) $(PKG_LIBS) -o $@

TEST_EXTRA_DEPS += $(UWORACLE)

# The builder's fuzz target (tests/fuzz/fuzz_unwind_table.c): the generic
# rules link the reporter's libraries; this one needs the builder instead,
# and the fixtures it edits.
FUZZ_UW_TARGETS := $(O)/tests/fuzz_unwind_table_replay $(O)/fuzz/fuzz_unwind_table
$(O)/tests/fuzz_unwind_table_replay: $(O)/san/record/unwind/unwind_table.o $(O)/san/record/unwind/cfi.o
$(O)/fuzz/fuzz_unwind_table: $(O)/fuzz/obj/record/unwind/unwind_table.o $(O)/fuzz/obj/record/unwind/cfi.o
$(FUZZ_UW_TARGETS): FUZZ_INCLUDES += $(RECORD_INCLUDES)
$(FUZZ_UW_TARGETS): | $(UW_PROGS)
