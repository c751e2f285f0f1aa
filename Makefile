# SPDX-License-Identifier: BSD-2-Clause
#
# stk: stkrec (BPF recorder), stkreport (offline reporter), libstk (format).
#
#   make            build everything into $(O) (default build/)
#   make check      build and run every test (BPF tests need root)
#   make demo       record the bundled sample workload and print its report
#   make bench      compare stkrec/stkreport against perf, printed as ratios
#   make fuzz       run the reader's libFuzzer target for FUZZ_SECONDS
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       install missing Debian packages
#   V=1             show the commands

O ?= build
PREFIX ?= /usr/local
DESTDIR ?=
FUZZ_SECONDS ?= 60

# Build dependencies are installed on demand (scripts/install-deps.sh says
# what it installs), except for targets that need nothing.
NODEPS_GOALS := clean deps help
ifeq ($(filter $(NODEPS_GOALS),$(MAKECMDGOALS)),)
ifneq ($(STK_DEPS_CHECKED),1)
DEPS_STATUS := $(shell scripts/install-deps.sh --ensure 1>&2; echo $$?)
ifneq ($(DEPS_STATUS),0)
$(error missing build dependencies (see the line above); run 'make deps' as root)
endif
export STK_DEPS_CHECKED := 1
endif
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' -e 's/s390x/s390/')

PKGS := libbpf libelf libdw libzstd zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=gnu11 $(WARN) -MMD -MP -D_GNU_SOURCE
INCLUDES := -Iformat -Iutil -Ibpf -I$(O) -I$(O)/bpf $(PKG_CFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(INCLUDES) $(CFLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Sample workloads and test fixtures keep frame pointers everywhere, so FP
# stacks are complete (GCC drops them in leaf functions without the second flag).
FP_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all check demo bench fuzz install clean deps help unit e2e

FORMAT_SRCS := $(wildcard format/*.c)
UTIL_SRCS := $(wildcard util/*.c)
RECORD_SRCS := $(filter-out record/main.c,$(wildcard record/*.c))
REPORT_SRCS := $(filter-out report/main.c,$(wildcard report/*.c))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SAMPLE_SRCS := $(wildcard samples/*.c)
UNIT_SRCS := $(wildcard tests/unit/check_*.c)

FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(O)/%.o)
UTIL_OBJS := $(UTIL_SRCS:%.c=$(O)/%.o)
RECORD_OBJS := $(RECORD_SRCS:%.c=$(O)/%.o)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(O)/%.o)
BPF_OBJS := $(BPF_SRCS:%.c=$(O)/%.o)
SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(O)/bpf/%.skel.h)
SAMPLES := $(SAMPLE_SRCS:samples/%.c=$(O)/samples/%)
UNIT_TESTS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)

LIBSTK := $(O)/libstk.a
LIBUTIL := $(O)/libstkutil.a
LIBRECORD := $(O)/librecord.a
LIBREPORT := $(O)/libreport.a

all: $(O)/stkrec $(O)/stkreport $(LIBSTK) $(LIBUTIL) $(SAMPLES)

# ---- format (libstk) ----------------------------------------------------
$(LIBSTK): $(FORMAT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- util (libstkutil): hash table and keyed hashes ----------------------
# Beside libstk, not in it: record/ and report/ share it, but it is not part
# of the file format.  It links libc only.
$(LIBUTIL): $(UTIL_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# ---- BPF ------------------------------------------------------------------
# vmlinux.h from the running kernel's BTF, else the checked-in one; VMLINUX_H= overrides.
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ifneq ($(VMLINUX_H),)
$(O)/vmlinux.h: $(VMLINUX_H)
	$(Q)mkdir -p $(@D) && cp $< $@
else ifneq ($(wildcard $(VMLINUX_BTF)),)
$(O)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
else
$(O)/vmlinux.h: bpf/vmlinux/vmlinux_$(ARCH).h
	$(Q)mkdir -p $(@D) && cp $< $@
endif

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 --target=bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wextra -Werror \
		-MMD -MP -MT $@ -I$(O) -Ibpf $(shell pkg-config --cflags libbpf) -c $< -o $@.tmp
	$(Q)llvm-strip -g $@.tmp -o $@ 2>/dev/null || mv $@.tmp $@
	$(Q)rm -f $@.tmp

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- stkrec -------------------------------------------------------------
$(RECORD_OBJS) $(O)/record/main.o: $(SKELS)

$(LIBRECORD): $(RECORD_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/stkrec: $(O)/record/main.o $(LIBRECORD) $(LIBSTK) $(LIBUTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(PKG_LIBS) -o $@

# ---- stkreport ----------------------------------------------------------
$(LIBREPORT): $(REPORT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/stkreport: $(O)/report/main.o $(LIBREPORT) $(LIBSTK) $(LIBUTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(PKG_LIBS) -o $@

# ---- samples (frame pointers everywhere) ----------------------------------
$(O)/samples/%: samples/%.c
	$(call msg,CC-FP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FP_CFLAGS) -Wall -Wextra -Werror -MMD -MP -pthread $< -o $@

# ---- tests --------------------------------------------------------------
# Every tests/unit/check_<module>.c is one Check suite binary linked against
# all four libraries.  Suites listed in SAN_UNIT run under ASan+UBSan, with
# their own sanitized build of libstk.
SAN_UNIT := check_damage
SAN_FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(O)/san/%.o)

$(O)/san/%.o: %.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(O)/san/libstk.a: $(SAN_FORMAT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/tests/check_%: tests/unit/check_%.c $(LIBREPORT) $(LIBRECORD) $(LIBSTK) $(LIBUTIL)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $< $(LIBREPORT) $(LIBRECORD) $(LIBSTK) $(LIBUTIL) \
		$(CHECK_LIBS) $(PKG_LIBS) -o $@

# A static pattern rule: an explicit rule, so it wins over check_% above.
$(SAN_UNIT:%=$(O)/tests/%): $(O)/tests/%: tests/unit/%.c $(O)/san/libstk.a
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(CHECK_CFLAGS) $< $(O)/san/libstk.a \
		$(CHECK_LIBS) $(PKG_LIBS) -o $@

# Fuzz targets: tests/fuzz/fuzz_<name>.c.  make check replays each corpus
# tests/fuzz/corpus/<name>/ through a plain main (ASan+UBSan, no libFuzzer).
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/tests/%_replay)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/fuzz/%)

$(O)/tests/fuzz_%_replay: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(O)/san/libstk.a
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $^ $(PKG_LIBS) -o $@

$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FORMAT_SRCS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE $(INCLUDES) -fsanitize=fuzzer,address,undefined \
		$^ $(PKG_LIBS) -o $@

fuzz: $(FUZZ_BINS)
	$(Q)for f in $(FUZZ_BINS); do n=$${f##*/fuzz_}; mkdir -p $(O)/fuzz/corpus-$$n; \
		$$f -max_total_time=$(FUZZ_SECONDS) $(O)/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; done

# Extra rules from mk/*.mk (fixtures, bench, ...), so each piece owns its rules.
include $(wildcard mk/*.mk)

TEST_PROGS := $(UNIT_TESTS) $(FUZZ_REPLAY) $(TEST_EXTRA_DEPS)

unit: all $(UNIT_TESTS) $(FUZZ_REPLAY)
	$(Q)O=$(O) tests/run-tests.sh $(UNIT_TESTS) $(FUZZ_REPLAY)

e2e: all $(TEST_EXTRA_DEPS)
	$(Q)O=$(O) tests/run-tests.sh $(wildcard tests/e2e/*.sh)

check: all $(TEST_PROGS)
	$(Q)O=$(O) tests/run-tests.sh $(UNIT_TESTS) $(FUZZ_REPLAY) $(wildcard tests/e2e/*.sh)

demo: all
	$(Q)O=$(O) samples/demo.sh

bench: all $(TEST_EXTRA_DEPS)
	$(Q)O=$(O) tests/bench/bench.sh

# The tools and their man pages (man/*.1); tests/e2e/install.sh checks it.
MAN_PAGES := $(wildcard man/*.1)
MANDIR ?= $(PREFIX)/share/man

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(O)/stkrec $(O)/stkreport $(DESTDIR)$(PREFIX)/bin/
	$(if $(MAN_PAGES),install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/)

deps:
	$(Q)scripts/install-deps.sh

clean:
	$(call msg,CLEAN,$(O))
	$(Q)rm -rf $(O)

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'

-include $(shell find $(O) -name '*.d' 2>/dev/null)
