# SPDX-License-Identifier: BSD-2-Clause
#
# Reporter performance work.
#
# check_scopes reads the fixtures and the tools themselves (built -O2 -g:
# full of inlined code).  check_dwarfload needs DWARF in zlib-compressed
# sections, as distributions ship it:
#   $(ZD)/stkreport_z          stkreport with its own DWARF compressed
#   $(ZD)/root/stkreport_s     stkreport stripped of symbols and DWARF, whose
#   $(ZD)/debug/.build-id/xx/rest.debug   separate debuginfo is compressed

ZD := $(O)/tests/fixtures/zdebug
ZD_FIXTURES := $(ZD)/stkreport_z $(ZD)/root/stkreport_s

$(ZD)/stkreport_z: $(O)/stkreport
	$(call msg,GEN-FX,$@)
	$(Q)mkdir -p $(@D) && objcopy --compress-debug-sections=zlib $< $@

$(ZD)/root/stkreport_s: $(O)/stkreport
	$(call msg,GEN-FX,$@)
	$(Q)mkdir -p $(@D) && objcopy --only-keep-debug --compress-debug-sections=zlib $< $@.debug
	$(Q)objcopy --strip-all $< $@
	$(Q)id=$$(readelf -n $@ | awk '/Build ID:/ { print $$3 }'); \
		d=$(ZD)/debug/.build-id/$$(echo $$id | cut -c1-2); \
		mkdir -p $$d && mv $@.debug $$d/$$(echo $$id | cut -c3-).debug

$(O)/tests/check_scopes: $(FIXTURES) $(O)/stkreport $(O)/stkrec
$(O)/tests/check_dwarfload: $(ZD_FIXTURES)

# make bench runs stkreport's part too (tests/bench/bench.sh is stkrec's).
bench: bench-report
bench-report: all $(TEST_EXTRA_DEPS)
	$(Q)O=$(O) sh tests/bench/bench_report.sh
.PHONY: bench-report
