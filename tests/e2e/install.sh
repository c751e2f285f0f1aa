#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make install into a temporary DESTDIR: both tools and both man pages land
# where PREFIX and MANDIR say, the installed tools run (--version names the
# release in format/stk.h, then the versions of the libraries each runs
# with: stkrec libbpf, elfutils and zstd, stkreport elfutils, zstd and zlib,
# as pkg-config knows them on this build machine), the installed man pages are man/*.1 unchanged and
# render with man -l without warnings, and the bash completions land in
# PREFIX/share/bash-completion/completions.  No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$REC" "$REP"
cd "$top" || exit 1

version=$(sed -n 's/^#define STK_VERSION_STRING "\(.*\)"$/\1/p' format/stk.h)
if [ -z "$version" ]; then
	fail "STK_VERSION_STRING not found in format/stk.h"
	finish
fi
pages=$(ls man/*.1 2>/dev/null)
if [ -z "$pages" ]; then
	fail "no man pages in man/"
	finish
fi

# Everything is built already (make check builds first); this only copies.
# --no-print-directory: the parent make may have exported -w.
if make --no-print-directory -C "$top" O="$O" DESTDIR="$tmp/root" PREFIX=/opt/stk \
	install > "$tmp/install.log" 2>&1; then
	pass "make install DESTDIR=... PREFIX=/opt/stk exits 0"
else
	fail "make install failed" "$(tail -3 "$tmp/install.log")"
	finish
fi

bin=$tmp/root/opt/stk/bin
man1=$tmp/root/opt/stk/share/man/man1
for tool in stkrec stkreport; do
	if [ -f "$bin/$tool" ] && [ -x "$bin/$tool" ]; then
		pass "$tool installed executable in PREFIX/bin"
	else
		fail "$bin/$tool missing or not executable"
		continue
	fi
	out=$("$bin/$tool" --version 2>&1)
	rc=$?
	first=$(echo "$out" | head -n 1)
	if [ $rc -eq 0 ] && [ "$first" = "$tool $version" ]; then
		pass "installed $tool --version prints '$first'"
	else
		fail "installed $tool --version" "exit $rc, '$out', want '$tool $version'"
	fi
	# Then one line per library, "NAME VERSION", the runtime's version a
	# prefix of the package's (libbpf says only major.minor).
	if [ $tool = stkrec ]; then libs="libbpf:libbpf elfutils:libdw zstd:libzstd"; else
		libs="elfutils:libdw zstd:libzstd zlib:zlib"; fi
	want_lines=1
	for l in $libs; do
		name=${l%%:*}
		pkgver=$(pkg-config --modversion "${l#*:}")
		got=$(echo "$out" | sed -n "s/^$name //p")
		want_lines=$((want_lines + 1))
		case $pkgver in
		"$got"*) [ -n "$got" ] && pass "$tool --version: $name $got (pkg-config: $pkgver)" ||
			fail "$tool --version names no $name version" "$out" ;;
		*) fail "$tool --version: $name '$got', pkg-config says $pkgver" ;;
		esac
	done
	check "$tool --version: the release and $((want_lines - 1)) libraries, nothing else" \
		[ "$(echo "$out" | wc -l)" -eq $want_lines ]
	if cmp -s "$bin/$tool" "$O/$tool"; then
		pass "installed $tool is $O/$tool"
	else
		fail "installed $tool differs from $O/$tool"
	fi
done

for page in $pages; do
	name=${page##*/}
	if [ ! -f "$man1/$name" ]; then
		fail "$name not installed in PREFIX/share/man/man1"
		continue
	fi
	if cmp -s "$page" "$man1/$name"; then
		pass "$name installed unchanged"
	else
		fail "installed $name differs from $page"
	fi
	mode=$(stat -c %a "$man1/$name")
	if [ "$mode" = 644 ]; then pass "$name mode 644"; else fail "$name mode $mode, want 644"; fi
	if command -v man > /dev/null 2>&1; then
		# man --warnings reports troff's complaints (bad macros, escapes)
		# on stderr; a page that renders cleanly prints none.
		MANWIDTH=80 man --warnings -l "$man1/$name" > "$tmp/$name.txt" 2> "$tmp/$name.err"
		rc=$?
		title=$(echo "${name%.1}" | tr '[:lower:]' '[:upper:]')
		if [ $rc -eq 0 ] && [ ! -s "$tmp/$name.err" ] && grep -q "^$title(1)" "$tmp/$name.txt" &&
			grep -q '^NAME' "$tmp/$name.txt" && grep -q '^SYNOPSIS' "$tmp/$name.txt"; then
			pass "man -l $name renders with NAME and SYNOPSIS, no warnings"
		else
			fail "man -l $name" "exit $rc, $(head -3 "$tmp/$name.err")"
		fi
	else
		skip "man -l $name renders" "no man command (make deps)"
	fi
done

# The bash completions, where bash-completion looks for a command's file.
comp=$tmp/root/opt/stk/share/bash-completion/completions
for tool in stkrec stkreport; do
	if cmp -s "$top/completion/$tool" "$comp/$tool" && [ "$(stat -c %a "$comp/$tool")" = 644 ]; then
		pass "bash completion $tool installed in PREFIX/share/bash-completion/completions, mode 644"
	else
		fail "bash completion $tool not installed as completion/$tool in $comp"
	fi
	if command -v bash > /dev/null 2>&1 &&
		bash -c '. "$1" && complete -p "$2"' - "$comp/$tool" "$tool" > /dev/null 2>&1; then
		pass "installed completion of $tool loads and registers $tool"
	else
		fail "installed completion of $tool does not load"
	fi
done

# DESTDIR alone, with the default PREFIX: the paths the Makefile documents.
if make --no-print-directory -C "$top" O="$O" DESTDIR="$tmp/def" install > "$tmp/def.log" 2>&1 &&
	[ -x "$tmp/def/usr/local/bin/stkrec" ] && [ -x "$tmp/def/usr/local/bin/stkreport" ] &&
	[ -f "$tmp/def/usr/local/share/man/man1/stkrec.1" ] &&
	[ -f "$tmp/def/usr/local/share/man/man1/stkreport.1" ] &&
	[ -f "$tmp/def/usr/local/share/bash-completion/completions/stkrec" ]; then
	pass "default PREFIX installs under DESTDIR/usr/local"
else
	fail "make install DESTDIR=... (default PREFIX)" "$(tail -3 "$tmp/def.log")"
fi

finish
