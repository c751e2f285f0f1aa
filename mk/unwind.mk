# SPDX-License-Identifier: BSD-2-Clause
#
# .eh_frame unwinding: workloads built as distributions build (no frame
# pointers), for check_record_unwind_table and tests/e2e/unwind_*.sh.
#   $(UW)/nofpwork         -O2 -fomit-frame-pointer -g, a known call tree
#   $(UW)/nofpwork_nohdr   the same linked without .eh_frame_hdr (no table)
# -fno-optimize-sibling-calls keeps every function of the call tree on the
# stack (a tail call would leave no frame to find, by any unwinder).

UW := $(O)/tests/unwind
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls
UW_PROGS := $(UW)/nofpwork $(UW)/nofpwork_nohdr

$(UW)/nofpwork: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_CFLAGS) -Wall -Wextra -Werror $< -o $@

$(UW)/nofpwork_nohdr: tests/unwind/nofpwork.c
	$(call msg,CC-NOFP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NOFP_CFLAGS) -Wall -Wextra -Werror -Wl,--no-eh-frame-hdr $< -o $@

$(O)/tests/check_record_unwind_table: $(UW_PROGS)

TEST_EXTRA_DEPS += $(UW_PROGS)
