#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_confine: --sysroot and --debug-dir are confinement.  A capture's
# recorded paths (with "../.." components) and a sysroot's symlinks (to
# absolute paths outside it) must not reach a matching binary outside the
# directory, though the binary has the recorded build-id; a symlink to an
# absolute path inside the root works (read inside it); a FIFO at the
# mapping path does not hang; a directory there is skipped.  With strace,
# no file outside is opened at all.  No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie"

# The binary the capture names, by build-id, outside every root.
S=$tmp/sysroot
D=$tmp/debug
mkdir -p "$tmp/outside" "$S/inroot" "$S/usr/lib" "$S/opt/real" "$S/fifo" "$S/dir/fx_pie" "$D/inroot"
cp "$FX/root/fx/fx_pie" "$tmp/outside/fx_pie"
cp "$FX/root/fx/fx_pie" "$S/opt/real/fx_pie"
ln -s "$tmp/outside/fx_pie" "$S/usr/lib/abs_out"
ln -s ../../../../../../../../../../../.."$tmp/outside/fx_pie" "$S/usr/lib/rel_out"
ln -s /opt/real/fx_pie "$S/usr/lib/abs_in"
mkfifo "$S/fifo/fx_pie"
up=/inroot/../../../../../../../../../..

# mk NAME PATH: a capture of one process mapping fx_pie as PATH (modules
# are keyed by build-id: one capture per recorded path).
mk() {
	cat >"$tmp/$1.spec" <<SPEC
meta mode profile
map 100 $1 fx/fx_pie 0x555555554000 as=$2
stack 1 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf
count 100 100 $1 1 -EFAULT 0 0 7
SPEC
	"$MK" -C "$FX/root" "$tmp/$1.spec" "$tmp/$1.stk" || { fail "mkcapture $1"; finish; }
}
# case_ NAME OPTS WANT: stkreport -f folded OPTS NAME.stk, within 60 s,
# prints the line WANT; info --symbols never names the outside file.
case_() {
	name=$1 opts=$2 want=$3
	timeout 60 "$REP" -f folded --no-debuginfod $opts "$tmp/$name.stk" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: exit $rc (124: hung): $(cat "$tmp/$name.err")"
		return
	fi
	if grep -qxF -- "$want" "$tmp/$name.out"; then pass "$name: $want"; else
		fail "$name: expected '$want', got: $(cat "$tmp/$name.out")"; fi
	timeout 60 "$REP" info --symbols $opts "$tmp/$name.stk" >"$tmp/$name.info" 2>&1
	if grep -F "$tmp/outside" "$tmp/$name.info" | grep -qv '^module:'; then
		fail "$name: info --symbols names the outside file: $(cat "$tmp/$name.info")"
	fi
}
NOSYM='[unknown];[unknown] 7'
SYM='fx_mid;fx_leaf 7'

mk dotdot "$up$tmp/outside/fx_pie"
mk abs_out /usr/lib/abs_out
mk rel_out /usr/lib/rel_out
mk abs_in /usr/lib/abs_in
mk fifo /fifo/fx_pie
mk dir /dir/fx_pie
case_ dotdot "--sysroot $S" "dotdot;$NOSYM"
case_ abs_out "--sysroot $S" "abs_out;$NOSYM"
case_ rel_out "--sysroot $S" "rel_out;$NOSYM"
case_ abs_in "--sysroot $S" "abs_in;$SYM"
case_ fifo "--sysroot $S" "fifo;$NOSYM"
case_ dir "--sysroot $S" "dir;$NOSYM"
for n in dotdot abs_out rel_out fifo dir; do
	if grep -qxF '  symbols: no file found' "$tmp/$n.info"; then pass "$n: info --symbols: no file found"; else
		fail "$n: info --symbols: $(sed -n '/^\[symbols\]/,$p' "$tmp/$n.info")"; fi
done
# Where abs_in's file really is: the link read inside the root.
if grep -qxF "  elf: $S/opt/real/fx_pie (sysroot)" "$tmp/abs_in.info"; then
	pass "abs_in: info --symbols: elf: $S/opt/real/fx_pie (sysroot)"
else
	fail "abs_in: info --symbols: $(sed -n '/^\[symbols\]/,$p' "$tmp/abs_in.info")"
fi

# --debug-dir: DIR + recorded path, and the DIR/.build-id links, both
# resolved inside DIR.
hex=$(sed -n 's/^  build-id: //p' "$tmp/abs_in.info")
b=$D/.build-id/$(echo "$hex" | cut -c1-2)
mkdir -p "$b"
ln -s "$tmp/outside/fx_pie" "$b/$(echo "$hex" | cut -c3-)"
ln -s ../../../../../../../../../../..$tmp/outside/fx_pie "$b/$(echo "$hex" | cut -c3-).debug"
mkdir -p "$D/usr/lib"
ln -s "$tmp/outside/fx_pie" "$D/usr/lib/abs_out"
case_ dotdot "--debug-dir $D" "dotdot;$NOSYM"
case_ abs_out "--debug-dir $D" "abs_out;$NOSYM"
# The same links, in-root targets: used.
rm "$b/$(echo "$hex" | cut -c3-)" && ln -s /opt/fx_pie "$b/$(echo "$hex" | cut -c3-)" &&
	mkdir -p "$D/opt" && cp "$FX/root/fx/fx_pie" "$D/opt/fx_pie"
case_ fifo "--debug-dir $D" "fifo;$SYM"

# No open of anything under $tmp/outside succeeds (strace: the confined
# opens name it in paths that then resolve inside the roots).
if command -v strace >/dev/null 2>&1; then
	: >"$tmp/trace.all"
	for n in dotdot abs_out rel_out abs_in fifo dir; do
		strace -f -qq -e trace=open,openat,openat2,creat -o "$tmp/trace" \
			timeout 60 "$REP" -f folded --no-debuginfod --sysroot "$S" "$tmp/$n.stk" \
			>/dev/null 2>&1
		cat "$tmp/trace" >>"$tmp/trace.all"
	done
	opened=$(grep -F "$tmp/outside" "$tmp/trace.all" | grep -v '= -1 ')
	if grep -q 'openat' "$tmp/trace.all" && [ -z "$opened" ]; then
		pass "strace: no file outside the root opened"
	else
		fail "strace: opened outside: ${opened:-no trace}"
	fi
else
	skip "strace: no file outside the root opened" "no strace"
fi


finish
