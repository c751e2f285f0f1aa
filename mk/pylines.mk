# SPDX-License-Identifier: BSD-2-Clause
#
# Python line table fixtures (tests/fixtures/pylines/, committed: the unit
# test check_pylines needs no Python).  make pylines-fixtures regenerates
# them with tests/python/gen_linetables.py, run by every CPython 3.8-3.13
# under $(PYENV_ROOT) (the newest patch release of each) and by the system's
# python3 (PYLINES_SYSTEM_PY); 3.11+ also with -X no_debug_ranges, whose
# tables use the location table's no-column entries.

PYENV_ROOT ?= $(HOME)/.pyenv
PYLINES_SYSTEM_PY ?= /usr/bin/python3
PYLINES_FX := tests/fixtures/pylines
PYLINES_GEN := tests/python/gen_linetables.py

.PHONY: pylines-fixtures
pylines-fixtures:
	$(Q)mkdir -p $(PYLINES_FX)
	$(Q)set -e; for v in 3.8 3.9 3.10 3.11 3.12 3.13; do \
		py=$$(ls -v $(PYENV_ROOT)/versions/$$v.*/bin/python$$v 2>/dev/null | tail -n 1); \
		[ -n "$$py" ] || { echo "pylines-fixtures: no CPython $$v under $(PYENV_ROOT)" >&2; exit 1; }; \
		echo "  GEN      $(PYLINES_FX)/cpython-$$v.txt"; \
		$$py $(PYLINES_GEN) > $(PYLINES_FX)/cpython-$$v.txt; \
		case $$v in 3.8|3.9|3.10) continue ;; esac; \
		echo "  GEN      $(PYLINES_FX)/cpython-$$v-nocolumns.txt"; \
		$$py -X no_debug_ranges $(PYLINES_GEN) > $(PYLINES_FX)/cpython-$$v-nocolumns.txt; \
	done; \
	v=$$($(PYLINES_SYSTEM_PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	echo "  GEN      $(PYLINES_FX)/cpython-$$v-system.txt"; \
	$(PYLINES_SYSTEM_PY) $(PYLINES_GEN) > $(PYLINES_FX)/cpython-$$v-system.txt
