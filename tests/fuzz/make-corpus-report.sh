#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Regenerate the seed corpora of the reporter's fuzz targets (fuzz_report.c,
# fuzz_diffmerge.c, fuzz_elf.c; their headers say what an input is):
# captures of the ELF fixtures made by mkcapture from tests/golden/*.spec,
# stkwrite-sample's captures of every chunk type, and (as root, where BPF
# works) short real recordings of samples/cpuwork and samples/offwork.
#
#   make fixtures build/tests/tools/stkwrite-sample && sh tests/fuzz/make-corpus-report.sh
#
# The files are committed.  Their build-ids are those of the fixtures built
# here: on another machine the replay still runs them, with fewer names
# found.  Inputs that crashed are added to the same directories by hand.
set -e
O=${O:-build}
FX=$O/tests/fixtures
T=$(mktemp -d "${TMPDIR:-/tmp}/stk-corpus.XXXXXX")
trap 'rm -rf "$T"' EXIT
R=tests/fuzz/corpus/report
DM=tests/fuzz/corpus/diffmerge
E=tests/fuzz/corpus/elf
mkdir -p "$R" "$DM" "$E"

# byte N as a printf escape
b() { printf "\\$(printf %03o "$(($1 & 255))")"; }

for spec in tests/golden/*.spec; do
	n=$(basename "$spec" .spec)
	"$O/tests/tools/mkcapture" -C "$FX/root" "$spec" "$T/$n.stk"
done
"$O/tests/tools/stkwrite-sample" --seed 1 --small "$T/every-type.stk"
"$O/tests/tools/stkwrite-sample" --empty --esym-tables "$T/esym-tables.stk"
if "$O/stkrec" -q -F 199 -o "$T/rec-profile.stk" -- "$O/samples/cpuwork" 1 >/dev/null 2>&1 &&
   "$O/stkrec" offwake -q -o "$T/rec-offwake.stk" -- "$O/samples/offwork" 1 >/dev/null 2>&1 &&
   "$O/stkrec" offcpu -q -o "$T/rec-offcpu.stk" -- "$O/samples/offwork" 1 >/dev/null 2>&1 &&
   "$O/stkrec" trace -q t:syscalls:sys_enter_write page-faults -o "$T/rec-trace.stk" -- \
	"$O/tests/tools/eventwork" 30 20 10 0 >/dev/null 2>&1; then
	:
else
	echo "make-corpus-report: no BPF recording here: corpus without real captures" >&2
	rm -f "$T"/rec-*.stk
fi

# fuzz_report: FLAGS SLICE CAPTURE
for f in "$T"/*.stk; do
	n=$(basename "$f" .stk)
	{ b 1; b 0; cat "$f"; } > "$R/$n"
done
{ b 7; b 0; cat "$T/report_basic.stk"; } > "$R/report_basic-addresses-lines"
{ b 0x39; b 0; cat "$T/report_basic.stk"; } > "$R/report_basic-U-noinline"
{ b 0x51; b 0; cat "$T/report_basic.stk"; } > "$R/report_basic-K-decorated"
{ b 0x81; b 0; cat "$T/report_kernel.stk"; } > "$R/report_kernel-vmlinux"
{ b 0x85; b 0; cat "$T/report_kernel.stk"; } > "$R/report_kernel-vmlinux-lines"
{ b 1; b 0x12; cat "$T/report_basic.stk"; } > "$R/report_basic-slice"
[ -f "$T/rec-profile.stk" ] && { b 1; b 0x10; cat "$T/rec-profile.stk"; } > "$R/rec-profile-slice"

# fuzz_diffmerge: FLAGS LEN16 BASE NEW
pair() {
	s=$(wc -c < "$T/$2.stk")
	{ b "$1"; b "$s"; b "$((s >> 8))"; cat "$T/$2.stk" "$T/$3.stk"; } > "$DM/$2+$3${4:+-$4}"
}
pair 1 report_basic report_rebuilt
pair 1 report_basic report_basic
pair 0x41 report_basic report_kernel self
pair 3 offcpu_offcpu offcpu_offwake time
pair 1 report_offwake offcpu_offwake
pair 0x15 pprof_report report_basic lines
if [ -f "$T/rec-profile.stk" ]; then
	pair 1 rec-profile report_basic
	pair 3 rec-offcpu rec-offwake time
	pair 0x41 rec-offwake rec-offwake self
	pair 1 rec-trace rec-trace
fi

# fuzz_elf: BINARY (OP OFFSET32 BYTES)...  Binaries are numbered in the
# order of tests/fuzz/elf.spec's maps; 6 is past the last: the kernel.
for i in 0 1 2 3 4 5 6; do
	b "$i" > "$E/bin$i"
	b "$((i | 128))" > "$E/bin$i-sysroot"
	# e_shoff (0x28) and e_phoff (0x20) far away; e_shnum (0x3c) huge
	{ b "$i"; b 7; b 0x28; b 0; b 0; b 0; printf '\377\377\377\377\0\0\0\0'; } > "$E/bin$i-shoff"
	{ b "$((i | 128))"; b 7; b 0x20; b 0; b 0; b 0; printf '\0\0\0\200\0\0\0\0'; } \
		> "$E/bin$i-phoff"
	{ b "$i"; b 1; b 0x3c; b 0; b 0; b 0; printf '\377\177'; } > "$E/bin$i-shnum"
	# cut in the middle
	{ b "$i"; b 128; b 0; b 0x20; b 0; b 0; } > "$E/bin$i-cut"
	# a few bytes scattered over the sections, DWARF included
	{ b "$i"; for o in 0x1000 0x2000 0x3000 0x3800 0x4000 0x4400; do
		b 3; b "$o"; b "$((o >> 8))"; b 0; b 0; printf '\377\000\377\000'; done; } > "$E/bin$i-scattered"
done
