# SPDX-License-Identifier: BSD-2-Clause
#
# A plugin reload (tests/e2e/report_plugins.sh): pluginwork loads
# libplugin1.so ... libplugin5.so in turn at one address.  The plugins
# are one source (tests/tools/plugin.c) built with a different function
# name of the same length each: the same code at the same offsets, other
# names and build-ids.  Frame pointers, as the samples.

PLUGINWORK := $(O)/tests/tools/pluginwork
PLUGINS := $(foreach k,1 2 3 4 5,$(O)/tests/tools/plugins/libplugin$(k).so)

$(O)/tests/tools/plugins/libplugin%.so: tests/tools/plugin.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) -fPIC -shared -DPLUGIN_FUNC=plugin$*_spin \
		-Wl,--build-id=sha1 $(LDFLAGS) $< -o $@

$(PLUGINWORK): tests/tools/pluginwork.c
	$(call msg,CC-TOOL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(FP_CFLAGS) $(LDFLAGS) $< -ldl -o $@

TEST_EXTRA_DEPS += $(PLUGINWORK) $(PLUGINS)
