# SPDX-License-Identifier: BSD-2-Clause
#
# Reporter test rules: ELF fixtures for the golden and symbolizer tests, and
# the capture-writing test tool.
#
# $(FX)/root/fx/       what --sysroot $(FX)/root finds for capture paths /fx/...
#   fx_pie, fx_nopie    PIE and non-PIE executables (tests/fixtures/fx_app.c)
#   fx_pie_v2           the same source rebuilt differently: another build-id
#   libfx.so            shared library
#   fx_cpp              C++ executable (mangled names)
#   libfxpy.so          a stand-in for libpython: _PyEval_EvalFrameDefault and
#                       its .cold part (tests/fixtures/fx_py.c)
#   fx_stripped         stripped of everything, with a .gnu_debuglink
#   fx_dbglink          stripped; its debuginfo only in .debug/fx_dbglink.debug,
#                       found by its .gnu_debuglink name (not by build-id)
# $(FX)/debug/.build-id/xx/rest.debug   fx_stripped's separate debuginfo
# $(FX)/bid/.build-id/xx/rest           a copy of fx_pie_v2, as a debug dir
#                                       made on "another machine" holds it
# $(FX)/syms/fx_stripped                 fx_stripped before stripping, where
#                                       mkcapture finds its addresses

FX := $(O)/tests/fixtures
FX_ROOT := $(FX)/root/fx
# Frame pointers everywhere, like the samples; -O1 with inlining allowed
# (fx_inlined must really be inlined) but no tail calls, so every caller
# frame is a real call.
FX_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -Wall -Wextra -Werror $(REPRO)
FX_BUILDID = $$(readelf -n $(1) | awk '/Build ID:/ { print $$3 }')

FIXTURES := $(FX_ROOT)/fx_pie $(FX_ROOT)/fx_nopie $(FX_ROOT)/fx_pie_v2 $(FX_ROOT)/libfx.so \
	$(FX_ROOT)/fx_cpp $(FX_ROOT)/fx_stripped $(FX_ROOT)/fx_dbglink $(FX)/bid.stamp $(FX)/fx_exec \
	$(FX_ROOT)/libfxpy.so
MKCAPTURE := $(O)/tests/tools/mkcapture

# Images that exec while busy (tests/e2e/record_exec_maps.sh).
$(FX)/fx_exec: tests/fixtures/fx_exec.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -fPIE -pie $< -o $@

$(FX_ROOT)/fx_pie: tests/fixtures/fx_app.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -fPIE -pie $< -o $@

$(FX_ROOT)/fx_pie_v2: tests/fixtures/fx_app.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -DFX_VARIANT=7 -fPIE -pie $< -o $@

$(FX_ROOT)/fx_nopie: tests/fixtures/fx_app.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -fno-pie -no-pie $< -o $@

$(FX_ROOT)/libfx.so: tests/fixtures/fx_lib.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -fPIC -shared $< -o $@

$(FX_ROOT)/libfxpy.so: tests/fixtures/fx_py.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -fPIC -shared $< -o $@

$(FX_ROOT)/fx_cpp: tests/fixtures/fx_cpp.cpp
	$(call msg,CXX-FX,$@)
	$(Q)mkdir -p $(@D) && $(CXX) $(FX_CFLAGS) -fPIE -pie $< -o $@

# Stripped of symbols and DWARF: every name must come from the separate
# debuginfo, found by build-id under a debug dir.
$(FX_ROOT)/fx_stripped: tests/fixtures/fx_app.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(FX_CFLAGS) -DFX_VARIANT=3 -fPIE -pie $< -o $@.full
	$(Q)mkdir -p $(FX)/syms && cp $@.full $(FX)/syms/fx_stripped
	$(Q)objcopy --only-keep-debug $@.full $@.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$@.debug $@.full $@
	$(Q)id=$(call FX_BUILDID,$@); d=$(FX)/debug/.build-id/$$(echo $$id | cut -c1-2); \
		mkdir -p $$d && mv $@.debug $$d/$$(echo $$id | cut -c3-).debug && rm -f $@.full

$(FX_ROOT)/fx_dbglink: tests/fixtures/fx_app.c
	$(call msg,CC-FX,$@)
	$(Q)mkdir -p $(@D)/.debug && $(CC) $(FX_CFLAGS) -DFX_VARIANT=5 -fPIE -pie $< -o $@.full
	$(Q)objcopy --only-keep-debug $@.full $(@D)/.debug/fx_dbglink.debug
	$(Q)objcopy --strip-all --add-gnu-debuglink=$(@D)/.debug/fx_dbglink.debug $@.full $@
	$(Q)rm -f $@.full

$(FX)/bid.stamp: $(FX_ROOT)/fx_pie_v2
	$(Q)id=$(call FX_BUILDID,$<); d=$(FX)/bid/.build-id/$$(echo $$id | cut -c1-2); \
		mkdir -p $$d && cp $< $$d/$$(echo $$id | cut -c3-) && touch $@

$(MKCAPTURE): tests/tools/mkcapture.c $(LIBSTK)
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(LIBSTK) $(PKG_LIBS) -o $@

# The inputs of tests/e2e/report_bounds.sh, made by the test itself.
MKBOUNDS := $(O)/tests/tools/mkbounds

$(MKBOUNDS): tests/tools/mkbounds.c $(LIBSTK)
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(LIBSTK) $(PKG_LIBS) -lz -o $@

TEST_EXTRA_DEPS += $(MKBOUNDS)

fixtures: $(FIXTURES) $(MKCAPTURE)
.PHONY: fixtures

# Unit suites that read the fixtures.
$(O)/tests/check_symbolize $(O)/tests/check_report: $(FIXTURES) $(MKCAPTURE)
$(O)/tests/check_symbolize: $(O)/tests/unwind/uwholes

TEST_EXTRA_DEPS += $(FIXTURES) $(MKCAPTURE)

# The alias rule is shared: its suite checks both tables that use it.
$(O)/tests/check_util_symalias: private ALL_CFLAGS += $(RECORD_INCLUDES)
