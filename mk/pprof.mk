# SPDX-License-Identifier: BSD-2-Clause
#
# pprof encoder tests: mkpprof writes profiles with report/output/pprof.c so that
# tests/e2e/pprof_encoder.sh can read them back with protoc and go tool pprof.
# It links the two objects it needs (and libstkutil, for their hash table)
# rather than libreport.a, so it does not depend on the rest of the reporter.

MKPPROF := $(O)/tests/tools/mkpprof
PPROF_OBJS := $(O)/report/output/pb.o $(O)/report/output/pprof.o

$(MKPPROF): tests/tools/mkpprof.c $(PPROF_OBJS) $(LIBUTIL)
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(REPORT_INCLUDES) $< $(PPROF_OBJS) $(LIBUTIL) $(PKG_LIBS) -o $@

TEST_EXTRA_DEPS += $(MKPPROF)

# The suites include report/output/pb.h and report/output/pprof.h by name, as
# every suite does (check_pprof_intern builds report/output/pprof.c itself,
# with a colliding hash).
