#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_symcache: stkreport's symbol cache (--symbol-cache, symcache.h)
# changes no output and is trusted only when it should be:
#  - reports without the cache, with a cold one and with a warm one are
#    byte-identical (golden fixtures with inline frames and lines, the
#    captures in samples/),
#    whichever options built the cache;
#  - a cache made from some addresses names others as DWARF does (the
#    ranges it keeps are exact): random addresses of binaries with DWARF;
#  - a warm cache is what names the frames: a cache file whose name was
#    rewritten (its CRC fixed) shows that name -- and is not read when
#    the directory or the file is someone else's, nor through a symlink;
#  - a cache is used only for the build-id it was made from: another
#    binary at the same path gets its own names, never the cached ones;
#  - a damaged cache (truncated, a byte flipped, another version, empty,
#    junk) is rebuilt, the output is the cacheless one, and the file
#    rebuilt is the one first written.
# No BPF needed (report_symcache_live.sh: a fresh recording).

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie" "$FX/root/fx/fx_cpp"
need_cmds python3

C=$tmp/cache
R="--sysroot $FX/root --debug-dir $FX/debug"
capture() {
	"$MK" -C "$FX/root" "$GOLD/$1.spec" "$tmp/$1.stk" || { fail "mkcapture $1"; finish; }
}
capture report_basic

# same DESC CAPTURE OPTS...: without a cache, then twice with $C: one output.
same() {
	_d=$1 _c=$2
	shift 2
	"$REP" --symbol-cache none "$@" "$_c" >"$tmp/none.out" 2>"$tmp/none.err"
	_rc=$?
	for _k in cold warm; do
		"$REP" --symbol-cache "$C" "$@" "$_c" >"$tmp/$_k.out" 2>"$tmp/$_k.err"
		if [ $? != $_rc ] || ! cmp -s "$tmp/none.out" "$tmp/$_k.out" ||
		   ! cmp -s "$tmp/none.err" "$tmp/$_k.err"; then
			fail "$_d" "$_k cache differs:"
			diff -u "$tmp/none.out" "$tmp/$_k.out" | head -20
			diff -u "$tmp/none.err" "$tmp/$_k.err" | head -5
			return 1
		fi
	done
	pass "$_d"
}

# ---- identical output, whichever options built the cache ---------------
# The second option set starts from the cache the first left (--lines
# needs what a plain report did not read).
for o in "-f folded" "-f folded --lines" "-f folded --no-inline --lines" "--lines" \
	 "-f folded --no-demangle" "-f folded --short-names --lines" "-f pprof --lines"; do
	# shellcheck disable=SC2086
	same "golden capture, $o: same with and without the cache" "$tmp/report_basic.stk" $o $R
done
bid=$(readelf -n "$FX/root/fx/fx_pie" | awk '/Build ID:/ { print $3 }')
check "the cache holds fx_pie's frames by its build-id" test -s "$C/$bid.sym"
check "the cache directory is 0700" test "$(stat -c %a "$C")" = 700
check "the cache file is 0600" test "$(stat -c %a "$C/$bid.sym")" = 600

# The default place: $XDG_CACHE_HOME/stk/symbols.
"$REP" -f folded $R "$tmp/report_basic.stk" >/dev/null 2>&1
check "default cache in \$XDG_CACHE_HOME/stk/symbols" test -s "$XDG_CACHE_HOME/stk/symbols/$bid.sym"
rm -rf "$XDG_CACHE_HOME"
"$REP" -f folded --symbol-cache none $R "$tmp/report_basic.stk" >/dev/null 2>&1
check "--symbol-cache none writes nothing" test ! -e "$XDG_CACHE_HOME"

# ---- a warm cache names the frames (rewritten: it shows) ----------------
# poison FILE: the cache FILE with "fx_inlined" renamed "fx_POISON_" and
# its CRC (the header's last-but-one u32, over what follows the header)
# made right again.
poison() {
	python3 - "$1" "$top/tests/tools" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[2])
from stkread import crc32c
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
hsize = struct.unpack_from("<I", b, 12)[0]
body = bytes(b[hsize:]).replace(b"fx_inlined", b"fx_POISON_")
b[hsize:] = body
struct.pack_into("<I", b, hsize - 8, crc32c(body))
open(p, "wb").write(b)
EOF
}
"$REP" -f folded --symbol-cache none $R "$tmp/report_basic.stk" >"$tmp/clean.out" 2>/dev/null
grep -q fx_inlined "$tmp/clean.out" || fail "fixture: fx_inlined is an inline frame of report_basic"
cp "$C/$bid.sym" "$tmp/good.sym"
poison "$C/$bid.sym"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a warm cache names the inline frames (no DWARF read)" grep -q fx_POISON_ "$tmp/p.out"

# Someone else's: not read (and the poisoned file is left alone).
chown nobody "$C/$bid.sym"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a cache file owned by another user is not read" cmp -s "$tmp/clean.out" "$tmp/p.out"
chown "$(id -u)" "$C/$bid.sym"
poison "$C/$bid.sym"
chmod 0666 "$C/$bid.sym"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a cache file others may write is not read" cmp -s "$tmp/clean.out" "$tmp/p.out"
poison "$C/$bid.sym"
chmod 0600 "$C/$bid.sym"
cp "$C/$bid.sym" "$tmp/poisoned.sym"
chmod 0777 "$C"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a world-writable cache directory is not read" cmp -s "$tmp/clean.out" "$tmp/p.out"
check "... nor written" cmp -s "$C/$bid.sym" "$tmp/poisoned.sym"
chmod 0700 "$C"
mkdir -p "$tmp/elsewhere"
mv "$C/$bid.sym" "$tmp/elsewhere/$bid.sym"
ln -s "$tmp/elsewhere/$bid.sym" "$C/$bid.sym"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a cache file that is a symlink is not followed" cmp -s "$tmp/clean.out" "$tmp/p.out"
rm -f "$C/$bid.sym"
mkdir -p "$tmp/other"
ln -s "$C" "$tmp/other/link"
cp "$tmp/elsewhere/$bid.sym" "$C/$bid.sym"
"$REP" -f folded --symbol-cache "$tmp/other/link" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a cache directory given as a symlink is not used" cmp -s "$tmp/clean.out" "$tmp/p.out"
rm -f "$C/$bid.sym"
# A missing cache directory is not made inside another user's directory
# (sudo stkreport with the user's $HOME must not make ~/.cache root's).
mkdir -p "$tmp/theirs"
chown nobody "$tmp/theirs"
"$REP" -f folded --symbol-cache "$tmp/theirs/cache/stk" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "no cache directory made inside another user's directory" test ! -e "$tmp/theirs/cache"
check "... and the report is the same" cmp -s "$tmp/clean.out" "$tmp/p.out"

# ---- another binary at the same path: its own names ---------------------
# /fx/prog is fx_pie, then fx_cpp (another build-id), with the same mtime.
mkdir -p "$tmp/root/fx"
cp "$FX/root/fx/fx_pie" "$tmp/root/fx/prog"
touch -d @1700000000 "$tmp/root/fx/prog"
cat >"$tmp/a.spec" <<SPEC
meta mode profile
map 100 prog fx/prog 0x555555554000
stack 1 fx/prog:fx_leaf2+1 fx/prog:fx_outer>fx_leaf2 fx/prog:main>fx_outer
count 100 100 prog 1 -EFAULT 0 0 30
SPEC
"$MK" -C "$tmp/root" "$tmp/a.spec" "$tmp/a.stk" || { fail "mkcapture a"; finish; }
same "binary A at /fx/prog: same with and without the cache" "$tmp/a.stk" -f folded --sysroot "$tmp/root"
cp "$FX/root/fx/fx_cpp" "$tmp/root/fx/prog"
touch -d @1700000000 "$tmp/root/fx/prog"
cat >"$tmp/b.spec" <<SPEC
meta mode profile
map 100 prog fx/prog 0x555555554000
stack 1 fx/prog:main+4
count 100 100 prog 1 -EFAULT 0 0 30
SPEC
"$MK" -C "$tmp/root" "$tmp/b.spec" "$tmp/b.stk" || { fail "mkcapture b"; finish; }
same "binary B at the same path: its own names" "$tmp/b.stk" -f folded --sysroot "$tmp/root"
grep -q fx_inlined "$tmp/warm.out" && fail "binary B got binary A's cached names"
same "capture of A with B at its path: no cached names for A" "$tmp/a.stk" -f folded --sysroot "$tmp/root"
grep -q fx_inlined "$tmp/warm.out" && fail "A's cached names used though A's file is gone"

# ---- a damaged cache is rebuilt ------------------------------------------
"$REP" -f folded --lines --symbol-cache "$C" $R "$tmp/report_basic.stk" >/dev/null 2>&1
cp "$C/$bid.sym" "$tmp/good.sym"
size=$(stat -c %s "$tmp/good.sym")
"$REP" -f folded --lines --symbol-cache none $R "$tmp/report_basic.stk" >"$tmp/clean.out" 2>/dev/null
# flip FILE OFFSET: one byte of FILE inverted.
flip() {
	python3 -c 'import sys
p, o = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[o] ^= 0xff; open(p, "wb").write(b)' "$1" "$2"
}
grep -q fx_inlined "$tmp/good.sym" || fail "fixture: the cache names fx_inlined"
for damage in truncated flipped_body flipped_last flipped_version flipped_bid empty junk; do
	cp "$tmp/good.sym" "$C/$bid.sym"
	case $damage in
	truncated) truncate -s $((size / 2)) "$C/$bid.sym" ;;
	flipped_body) flip "$C/$bid.sym" "$(grep -abo fx_inlined "$C/$bid.sym" | head -1 | cut -d: -f1)" ;;
	flipped_last) flip "$C/$bid.sym" $((size - 1)) ;;
	flipped_version) flip "$C/$bid.sym" 8 ;;
	flipped_bid) flip "$C/$bid.sym" 20 ;;
	empty) : >"$C/$bid.sym" ;;
	junk) head -c "$size" /dev/urandom >"$C/$bid.sym" ;;
	esac
	"$REP" -f folded --lines --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/d.out" 2>/dev/null
	if ! cmp -s "$tmp/clean.out" "$tmp/d.out"; then
		fail "damaged cache ($damage): output differs from a cacheless report"
		diff -u "$tmp/clean.out" "$tmp/d.out" | head -10
	elif ! cmp -s "$tmp/good.sym" "$C/$bid.sym"; then
		fail "damaged cache ($damage): not rebuilt as first written"
	else
		pass "damaged cache ($damage): cacheless output, rebuilt"
	fi
done

# ---- the binaries' symbol tables (<build-id>.stab) -----------------------
# Kept beside the frames: a warm report reads no ELF symbol table (a name
# rewritten in the cached table shows), and a damaged table is rebuilt.
rm -rf "$C"
"$REP" -f folded --symbol-cache none $R "$tmp/report_basic.stk" >"$tmp/clean.out" 2>/dev/null
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >/dev/null 2>&1
check "the cache holds fx_pie's symbol table by its build-id" test -s "$C/$bid.stab"
check "the symbol table's file is 0600" test "$(stat -c %a "$C/$bid.stab")" = 600
grep -q ';fx_root;' "$tmp/clean.out" || fail "fixture: fx_root is named by fx_pie's symbol table"
cp "$C/$bid.stab" "$tmp/good.stab"
# Same length: fx_root renamed fx_RooT, the CRC made right again.
python3 - "$C/$bid.stab" "$top/tests/tools" <<'EOF'
import struct, sys
sys.path.insert(0, sys.argv[2])
from stkread import crc32c
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
hsize = struct.unpack_from("<I", b, 12)[0]
body = bytes(b[hsize:]).replace(b"fx_root\0", b"fx_RooT\0")
b[hsize:] = body
struct.pack_into("<I", b, hsize - 8, crc32c(body))
open(p, "wb").write(b)
EOF
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a warm cache's symbol table names the functions (no ELF table read)" grep -q ';fx_RooT;' "$tmp/p.out"
chmod 0666 "$C/$bid.stab"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a symbol table others may write is not read" cmp -s "$tmp/clean.out" "$tmp/p.out"
rm -f "$C/$bid.stab"
chmod 0777 "$C"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/p.out" 2>/dev/null
check "a world-writable cache directory gets no symbol table" test ! -e "$C/$bid.stab"
chmod 0700 "$C"
size=$(stat -c %s "$tmp/good.stab")
for damage in truncated flipped_body flipped_last flipped_version flipped_bid empty junk; do
	cp "$tmp/good.stab" "$C/$bid.stab"
	case $damage in
	truncated) truncate -s $((size / 2)) "$C/$bid.stab" ;;
	flipped_body) flip "$C/$bid.stab" "$(grep -abo fx_root "$C/$bid.stab" | head -1 | cut -d: -f1)" ;;
	flipped_last) flip "$C/$bid.stab" $((size - 1)) ;;
	flipped_version) flip "$C/$bid.stab" 8 ;;
	flipped_bid) flip "$C/$bid.stab" 20 ;;
	empty) : >"$C/$bid.stab" ;;
	junk) head -c "$size" /dev/urandom >"$C/$bid.stab" ;;
	esac
	"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/d.out" 2>/dev/null
	if ! cmp -s "$tmp/clean.out" "$tmp/d.out"; then
		fail "damaged symbol table ($damage): output differs from a cacheless report"
		diff -u "$tmp/clean.out" "$tmp/d.out" | head -10
	elif ! cmp -s "$tmp/good.stab" "$C/$bid.stab"; then
		fail "damaged symbol table ($damage): not rebuilt as first written"
	else
		pass "damaged symbol table ($damage): cacheless output, rebuilt"
	fi
done
# A table made from another file of the build-id (its size differs): not
# used, and replaced by this file's.
cp "$tmp/good.stab" "$C/$bid.stab"
python3 - "$C/$bid.stab" <<'EOF'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
# elf_size: after magic, version, header_size, bid_size, bid[64], dbg_path_size
struct.pack_into("<Q", b, 8 + 4 + 4 + 4 + 64 + 4, 12345)
open(p, "wb").write(b)
EOF
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >"$tmp/d.out" 2>/dev/null
check "a symbol table of another file (its size) is not used" cmp -s "$tmp/clean.out" "$tmp/d.out"
check "... and is replaced by this file's" cmp -s "$tmp/good.stab" "$C/$bid.stab"
# Tables past 64 MiB: the oldest go when a report writes one (two sparse
# 40 MiB old ones; the frames' files are not counted with them).
truncate -s 40M "$C/00.stab" "$C/01.stab"
touch -d @1000000000 "$C/00.stab"
touch -d @1000000100 "$C/01.stab"
rm -f "$C/$bid.stab"
"$REP" -f folded --symbol-cache "$C" $R "$tmp/report_basic.stk" >/dev/null 2>&1
check "symbol tables past 64 MiB: the oldest removed" test ! -e "$C/00.stab"
check "... the newer ones kept" test -s "$C/$bid.stab"
check "... the frames' files kept" test -s "$C/$bid.sym"
rm -f "$C/00.stab" "$C/01.stab"

# ---- ranges: a cache made from some addresses names others exactly ------
# Two synthetic captures (mkcapture --synthetic, different seeds: 30000
# random addresses each) over binaries with DWARF: the second reported with
# the cache the first left is the second reported without one.
L=/usr/lib/x86_64-linux-gnu
files="$REP $O/tests/tools/mkcapture $CW $FX/root/fx/fx_pie $FX/root/fx/fx_cpp"
[ -e "$L/libc.so.6" ] && files="$files $(readlink -f "$L/libc.so.6")"
# shellcheck disable=SC2086
"$MK" --synthetic 5000 --seed 1 "$tmp/s1.stk" $files && "$MK" --synthetic 5000 --seed 2 "$tmp/s2.stk" $files ||
	{ fail "mkcapture --synthetic"; finish; }
for o in "-f folded" "-f folded --lines"; do
	rm -rf "$tmp/rc"
	# shellcheck disable=SC2086
	"$REP" --symbol-cache none $o "$tmp/s2.stk" >"$tmp/s2.none" 2>&1
	# shellcheck disable=SC2086
	"$REP" --symbol-cache "$tmp/rc" $o "$tmp/s1.stk" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$REP" --symbol-cache "$tmp/rc" $o "$tmp/s2.stk" >"$tmp/s2.warm" 2>&1
	if cmp -s "$tmp/s2.none" "$tmp/s2.warm"; then
		pass "ranges cached from 30000 addresses name 30000 others as DWARF does ($o)"
	else
		fail "ranges cached from other addresses ($o): output differs"
		diff -u "$tmp/s2.none" "$tmp/s2.warm" | head -20
	fi
done
grep -q ';' "$tmp/s2.none" || fail "the synthetic report has stacks"

# ---- real captures -----------------------------------------------------
for f in "$top"/samples/*.stk; do
	for o in "-f folded" "-f folded --lines"; do
		# shellcheck disable=SC2086
		same "$(basename "$f") $o: same with and without the cache" "$f" $o
	done
done
finish
