# SPDX-License-Identifier: BSD-2-Clause
#
# stk: stkrec (BPF recorder), stkreport (offline reporter), libstk (format).
#
#   make            build everything into $(O) (default build/)
#   make check      install missing packages, build and run every test
#                   (BPF tests need root); T=PATTERN only the tests whose
#                   name matches (make check T=unwind_nofp), REPEAT=N each
#                   of them N times with each one's failure count
#   make demo       install missing packages, record the bundled sample
#                   workload and print its report (needs root)
#   make bench      compare stkrec/stkreport against perf, printed as ratios;
#                   SOAK_SECONDS=N the length of its soak (default 600)
#   make fuzz       run each libFuzzer target (tests/fuzz/) for FUZZ_SECONDS;
#                   FUZZ_TARGETS='writers zelf' only those
#   make install    PREFIX=/usr/local DESTDIR= MANDIR=$(PREFIX)/share/man
#                   BASHCOMPDIR=$(PREFIX)/share/bash-completion/completions
#   make deps       install missing Debian packages (as root)
#   make pylines-fixtures  remake tests/fixtures/pylines/ with the CPythons
#                   3.8-3.13 under PYENV_ROOT (default ~/.pyenv) and python3
#   V=1             show the commands
#   CFLAGS= CPPFLAGS= LDFLAGS=   honoured by the host compiles and links, but
#                   not the BPF programs' or the test fixtures' (the samples
#                   keep their own -O and frame-pointer flags)
#   VMLINUX_H=FILE  use this vmlinux.h instead of one generated from
#                   VMLINUX_BTF (default /sys/kernel/btf/vmlinux)
#
# Only make deps, make demo and make check install packages; every other
# goal stops with one line naming what is missing.

O ?= build
PREFIX ?= /usr/local
DESTDIR ?=
FUZZ_SECONDS ?= 60

# ---- dependencies -------------------------------------------------------
# The build changes nothing on the system.  make demo and make check install
# what they need first (README's two commands for a new user), here, before
# anything below asks pkg-config or looks for a tool; make -n only checks.
# Every other goal checks (one dpkg-query) and stops with one line naming
# the missing packages.  scripts/install-deps.sh holds the package lists:
# building needs the build set, the test goals the test tools too.
# Sub-makes inherit STK_DEPS_CHECKED and do not check again.
NODEPS_GOALS := clean deps help
TEST_GOALS := check unit e2e bench bench-report fuzz fixtures $(O)/tests/% $(O)/fuzz/%
DEPS_GOALS := $(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all))
ifeq ($(STK_DEPS_CHECKED),)
ifneq ($(DEPS_GOALS),)
DEPS_MODE := $(if $(filter demo check,$(DEPS_GOALS)),--ensure,--check)
DEPS_MODE := $(if $(findstring n,$(firstword -$(MAKEFLAGS))),--check,$(DEPS_MODE))
DEPS_SET := $(if $(filter $(TEST_GOALS),$(DEPS_GOALS)),,--build)
DEPS_MSG := $(shell scripts/install-deps.sh $(DEPS_MODE) $(DEPS_SET))
ifneq ($(.SHELLSTATUS),0)
$(error $(or $(DEPS_MSG),could not install the missing packages (see above)))
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
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' -e 's/s390x/s390/')

PKGS := libbpf libelf libdw libzstd zlib liblzma
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror
# The same bytes from every checkout: debug info names the tree as "."
# (the fixtures' build-ids, and so the fuzz corpus's edits of them, would
# otherwise depend on where the clone is).
REPRO := -ffile-prefix-map=$(CURDIR)=.
BASE_CFLAGS := -std=gnu11 $(WARN) -MMD -MP -D_GNU_SOURCE $(REPRO)
INCLUDES := -Iformat -Iutil -Ibpf -I$(O) -I$(O)/bpf $(PKG_CFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(INCLUDES) $(CPPFLAGS) $(CFLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Sample workloads and test fixtures keep frame pointers everywhere, so FP
# stacks are complete (GCC drops them in leaf functions without the second flag).
FP_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline $(REPRO)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all check demo bench fuzz install clean deps help unit e2e

FORMAT_SRCS := $(wildcard format/*.c)
UTIL_SRCS := $(wildcard util/*.c)
# record/ and report/ are a front-end (main.c and its option parsing) over
# one folder per layer (record/*/README.md, report/*/README.md).  Sources are
# taken folder by folder; a tree's headers are found by name through one -I
# per folder of that tree, given to that tree's objects only (and to the
# tests that open them), so record/ and report/ still meet only in format/.
RECORD_DIRS := record $(patsubst %/,%,$(wildcard record/*/))
REPORT_DIRS := report $(patsubst %/,%,$(wildcard report/*/))
RECORD_INCLUDES := $(RECORD_DIRS:%=-I%)
REPORT_INCLUDES := $(REPORT_DIRS:%=-I%)
RECORD_SRCS := $(filter-out record/main.c,$(foreach d,$(RECORD_DIRS),$(wildcard $(d)/*.c)))
REPORT_SRCS := $(filter-out report/main.c,$(foreach d,$(REPORT_DIRS),$(wildcard $(d)/*.c)))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SAMPLE_SRCS := $(wildcard samples/*.c)
UNIT_SRCS := $(wildcard tests/unit/check_*.c)

FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(O)/%.o)
UTIL_OBJS := $(UTIL_SRCS:%.c=$(O)/%.o)
RECORD_OBJS := $(RECORD_SRCS:%.c=$(O)/%.o)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(O)/%.o)
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

$(O)/record/%.o $(O)/san/record/%.o $(O)/fuzz/obj/record/%.o: INCLUDES += $(RECORD_INCLUDES)
$(O)/report/%.o $(O)/san/report/%.o $(O)/fuzz/obj/report/%.o: INCLUDES += $(REPORT_INCLUDES)

$(O)/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# ---- BPF ------------------------------------------------------------------
# vmlinux.h is generated from the BTF in VMLINUX_BTF: the running kernel's,
# which stkrec's CO-RE programs need at run time anyway (a vmlinux image or
# a .btf file of another kernel works too); VMLINUX_H=FILE copies one made
# elsewhere.  Nothing is checked in (one per architecture, megabytes each):
# a build host without BTF sets one of the two, and the error says so.
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ifneq ($(VMLINUX_H),)
$(O)/vmlinux.h: $(VMLINUX_H)
	$(call msg,CP,$@)
	$(Q)mkdir -p $(@D) && cp $< $@
else
$(O)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)test -r $(VMLINUX_BTF) || { echo "no kernel BTF at $(VMLINUX_BTF) to generate $@" \
		"from; set VMLINUX_BTF=FILE (a vmlinux or BTF file) or VMLINUX_H=FILE" >&2; exit 1; }
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
endif

# The skeleton embeds the object: strip its DWARF (BTF stays).  A failed
# strip fails the build (.DELETE_ON_ERROR removes the object).
$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 --target=bpf -D__TARGET_ARCH_$(ARCH) -Wall -Wextra -Werror \
		-MMD -MP -MT $@ -I$(O) -Ibpf $(shell pkg-config --cflags libbpf) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(O)/bpf/%.skel.h: $(O)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# ---- stkrec -------------------------------------------------------------
# Only the objects that include a skeleton wait for it: -MMD records the
# include once they are built, but a first build needs the order.  Which
# objects those are is read from the sources ('#include "x.skel.h"').
SKEL_DEPS := $(shell grep -o '^.include "[a-z0-9_]*\.skel\.h"' $(RECORD_SRCS) | \
	sed 's|^\(.*\)\.c:.include "\(.*\)"$$|$(O)/\1.o:$(O)/bpf/\2|')
$(foreach d,$(SKEL_DEPS),$(eval $(d)))

$(LIBRECORD): $(RECORD_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/stkrec: $(O)/record/main.o $(LIBRECORD) $(LIBSTK) $(LIBUTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@

# ---- stkreport ----------------------------------------------------------
$(LIBREPORT): $(REPORT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/stkreport: $(O)/report/main.o $(LIBREPORT) $(LIBSTK) $(LIBUTIL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@

# ---- samples (frame pointers everywhere) ----------------------------------
# Their own optimisation flags, not CFLAGS: the tests rely on their stacks.
$(O)/samples/%: samples/%.c
	$(call msg,CC-FP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(FP_CFLAGS) -Wall -Wextra -Werror -MMD -MP -pthread $(LDFLAGS) $< -o $@

# ---- tests --------------------------------------------------------------
# Every tests/unit/check_<module>.c is one Check suite binary linked against
# all four libraries.  Suites listed in SAN_UNIT run under ASan+UBSan, with
# their own sanitized builds of libstk, libreport and libstkutil (the fuzz
# replays' $(O)/san/ ones).
SAN_UNIT := check_damage check_pylines check_symcache
SAN_FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(O)/san/%.o)
SAN_LIBS := $(O)/san/libreport.a $(O)/san/libstk.a $(O)/san/libstkutil.a

$(O)/san/%.o: %.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(O)/san/libstk.a: $(SAN_FORMAT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The suites include the headers they test by name.
$(O)/tests/check_%: private ALL_CFLAGS += $(REPORT_INCLUDES)

$(O)/tests/check_%: tests/unit/check_%.c $(LIBREPORT) $(LIBRECORD) $(LIBSTK) $(LIBUTIL)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) $< $(LIBREPORT) $(LIBRECORD) $(LIBSTK) $(LIBUTIL) \
		$(CHECK_LIBS) $(PKG_LIBS) -o $@

# A static pattern rule: an explicit rule, so it wins over check_% above.
$(SAN_UNIT:%=$(O)/tests/%): $(O)/tests/%: tests/unit/%.c $(SAN_LIBS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(CHECK_CFLAGS) $(LDFLAGS) $< $(SAN_LIBS) \
		$(CHECK_LIBS) $(PKG_LIBS) -o $@

# Fuzz targets: tests/fuzz/fuzz_<name>.c.  make check replays each corpus
# tests/fuzz/corpus/<name>/ through a plain main (ASan+UBSan, no libFuzzer).
# Both link the three libraries built the same way: $(O)/san/ with GCC for
# the replay, $(O)/fuzz/obj/ with clang's fuzzer instrumentation.  What the
# targets read besides their input is in mk/report_fuzz.mk (mk/unwind.mk for
# fuzz_unwind_table).
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/tests/%_replay)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(O)/fuzz/%)
FUZZ_INCLUDES := $(REPORT_INCLUDES) -Itests/fuzz -DFUZZ_BUILD='"$(O)"'
FUZZ_LIBS := $(O)/fuzz/libreport.a $(O)/fuzz/libstk.a $(O)/fuzz/libstkutil.a

$(O)/san/libreport.a: $(REPORT_SRCS:%.c=$(O)/san/%.o)
$(O)/san/libstkutil.a: $(UTIL_SRCS:%.c=$(O)/san/%.o)
$(O)/fuzz/libreport.a: $(REPORT_SRCS:%.c=$(O)/fuzz/obj/%.o)
$(O)/fuzz/libstk.a: $(FORMAT_SRCS:%.c=$(O)/fuzz/obj/%.o)
$(O)/fuzz/libstkutil.a: $(UTIL_SRCS:%.c=$(O)/fuzz/obj/%.o)
$(filter-out $(O)/san/libstk.a,$(SAN_LIBS)) $(FUZZ_LIBS):
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/fuzz/obj/%.o: %.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE -MMD -MP $(INCLUDES) $(CPPFLAGS) \
		-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -c $< -o $@

# The targets' own headers (fuzz_common.h, fuzz_reporting.h) are
# prerequisites too, left out of the link line.
FUZZ_HDRS := $(wildcard tests/fuzz/*.h)

$(O)/tests/fuzz_%_replay: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/common.c $(SAN_LIBS) \
			  $(FUZZ_HDRS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(FUZZ_INCLUDES) $(SAN_FLAGS) $(LDFLAGS) $(filter-out %.h,$^) \
		$(PKG_LIBS) -o $@

$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/common.c $(FUZZ_LIBS) $(FUZZ_HDRS)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -std=gnu11 -D_GNU_SOURCE $(INCLUDES) $(FUZZ_INCLUDES) $(CPPFLAGS) \
		-DFUZZ_LIBFUZZER -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(LDFLAGS) $(filter-out %.h,$^) $(PKG_LIBS) -o $@

# -entropic=0: libFuzzer 14's entropic schedule spends most of the time in
# its own bookkeeping on the report targets' many features.
# -close_fd_mask=2: the targets' messages dropped, sanitizer reports kept.
# FUZZ_OPTS_<name>, FUZZ_ENV_<name>: a target's own flags and environment
# (mk/report_fuzz.mk).  FUZZ_TARGETS: the names to run, one after the
# other (default: every tests/fuzz/fuzz_<name>.c).
FUZZ_TARGETS ?= $(FUZZ_SRCS:tests/fuzz/fuzz_%.c=%)

fuzz: $(FUZZ_TARGETS:%=$(O)/fuzz/fuzz_%)
	$(Q)$(foreach f,$(FUZZ_TARGETS),$(call fuzz_run,$(f)))

fuzz_run = mkdir -p $(O)/fuzz/corpus-$(1) && $(FUZZ_ENV_$(1)) $(O)/fuzz/fuzz_$(1) -entropic=0 -close_fd_mask=2 \
	-max_total_time=$(FUZZ_SECONDS) $(FUZZ_OPTS_$(1)) $(O)/fuzz/corpus-$(1) \
	tests/fuzz/corpus/$(1) || exit 1;

# Extra rules from mk/*.mk (fixtures, bench, ...), so each piece owns its rules.
include $(wildcard mk/*.mk)

TEST_PROGS := $(UNIT_TESTS) $(FUZZ_REPLAY) $(TEST_EXTRA_DEPS)

# T=PATTERN runs only the tests whose name matches (an extended regular
# expression: make check T=unwind_nofp, T='^check_|record_'); REPEAT=N
# runs them N times and prints each one's failure count.
RUN_TESTS = O=$(O) tests/run-tests.sh $(if $(value T),-m '$(value T)') $(if $(REPEAT),--repeat $(REPEAT))

unit: all $(UNIT_TESTS) $(FUZZ_REPLAY)
	$(Q)$(RUN_TESTS) $(UNIT_TESTS) $(FUZZ_REPLAY)

e2e: all $(TEST_EXTRA_DEPS)
	$(Q)$(RUN_TESTS) $(wildcard tests/e2e/*.sh)

check: all $(TEST_PROGS)
	$(Q)$(RUN_TESTS) $(UNIT_TESTS) $(FUZZ_REPLAY) $(wildcard tests/e2e/*.sh)

demo: all
	$(Q)O=$(O) samples/demo.sh

bench: all $(TEST_EXTRA_DEPS)
	$(Q)O=$(O) tests/bench/bench.sh

# The tools, their man pages (man/*.1) and bash completions (completion/,
# one file per tool, named as bash-completion loads them on first use);
# tests/e2e/install.sh checks it.
MAN_PAGES := $(wildcard man/*.1)
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(O)/stkrec $(O)/stkreport $(DESTDIR)$(PREFIX)/bin/
	$(if $(MAN_PAGES),install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/)
	install -m 0644 completion/stkrec completion/stkreport $(DESTDIR)$(BASHCOMPDIR)/

deps:
	$(Q)scripts/install-deps.sh

clean:
	$(call msg,CLEAN,$(O))
	$(Q)rm -rf $(O)

# The comment block at the top of this file, from its third line.
help:
	@sed -n '3,/^[^#]/{/^#/s/^# \{0,1\}//p}' Makefile

-include $(shell find $(O) -name '*.d' 2>/dev/null)
