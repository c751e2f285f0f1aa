# SPDX-License-Identifier: BSD-2-Clause
#
# Reporter performance work: the scope-index test reads the fixtures and
# the tools themselves (built -O2 -g: full of inlined code).
$(O)/tests/check_scopes: $(FIXTURES) $(O)/stkreport $(O)/stkrec
