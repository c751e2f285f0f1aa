#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_locations: the report's table of locations (report/model/report.c
# report__lookup(): the symbolizer's last answer for a module and file
# offset, shared by every process that maps the module) gives a frame the
# answer its own mapping gives.  Separate debuginfo has no segment file
# offsets, so the symbolizer places an address by its mapping's page
# offset alone: process a maps fx_pie (named from a debuginfo-only copy,
# "gone") at offset 0, process b maps that copy itself at another address
# with the same file offset of the frame.  b's frame must be named as in a
# capture of b alone (a table keyed on the file offset only gave it a's
# fx_leaf).
# Exit 77 without objcopy.

. "$(dirname "$0")/lib/harness.sh"

need_files "$REP" "$MK" "$FX/root/fx/fx_pie"
need_cmds objcopy

mkdir -p "$tmp/root/fx"
cp "$FX/root/fx/fx_pie" "$tmp/root/fx/fx_pie"
objcopy --only-keep-debug "$tmp/root/fx/fx_pie" "$tmp/root/fx/gone" ||
	fail "objcopy --only-keep-debug fx_pie"
cat > "$tmp/both.spec" <<'SPEC'
meta mode profile
map 100 a fx/fx_pie 0x555555554000 as=/fx/gone bid=none
stack 1 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf fx/fx_pie:fx_root>fx_mid fx/fx_pie:main>fx_root
special 200 b 0x600000000000 0x600000010000 /fx/gone
stack 2 0x60000000113a
count 100 100 a 1 -EFAULT 0 0 5
count 200 200 b 2 -EFAULT 0 0 7
SPEC
grep -v '^count 100\|^map 100\|^stack 1 ' "$tmp/both.spec" > "$tmp/b.spec"
"$MK" -C "$tmp/root" "$tmp/both.spec" "$tmp/both.stk" || fail "mkcapture both"
"$MK" -C "$tmp/root" "$tmp/b.spec" "$tmp/b.stk" || fail "mkcapture b alone"
rm "$tmp/root/fx/fx_pie"
for f in both b; do
	"$REP" -f folded --addresses --symbol-cache none --sysroot "$tmp/root" "$tmp/$f.stk" \
		> "$tmp/$f.folded" 2> "$tmp/$f.err" || fail "stkreport $f: $(tail -1 "$tmp/$f.err")"
done
alone=$(grep '^b;' "$tmp/b.folded")
with=$(grep '^b;' "$tmp/both.folded")
check "b's frame named as in a capture of b alone ('$with', alone '$alone')" \
	[ -n "$alone" -a "$with" = "$alone" ]
check "a's stack still named (fx_leaf)" grep -q '^a;.*fx_leaf' "$tmp/both.folded"

finish
