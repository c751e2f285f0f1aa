#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Regenerate the seed corpus of fuzz_pylines, tests/fuzz/corpus/pylines/:
# from each fixture of tests/fixtures/pylines/ (one per CPython), its
# largest table and a small one, as fuzz_pylines.c reads an input (the
# version's minor byte, firstlineno, offset 0, the table).
#
#   sh tests/fuzz/make-corpus-pylines.sh
#
# The files are committed; crashes found by `make fuzz` are added to the
# same directory by hand.
set -e
D=tests/fuzz/corpus/pylines
mkdir -p "$D"
for fx in tests/fixtures/pylines/*.txt; do
	name=$(basename "$fx" .txt)
	# "code VER FIRST NAME" then "table HEX": the largest and the 4th table.
	awk '$1 == "code" { ver = $2; first = $3 }
	     $1 == "table" && $2 != "-" { n++; print length($2), n, ver, first, $2 }' "$fx" |
		sort -k1,1nr -k2,2n | awk 'NR == 1 || $2 == 4' |
		while read -r len n ver first hex; do
			printf '%02x%08x%08x%s' $((0x$ver & 0xff)) "$first" 0 "$hex" |
				# firstlineno little-endian: swap the 4 bytes.
				sed 's/^\(..\)\(..\)\(..\)\(..\)\(..\)/\1\5\4\3\2/' |
				xxd -r -p > "$D/$name-$n"
		done
done
