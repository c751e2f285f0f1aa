#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The build changes nothing on the system.  With a package missing (a name
# no distribution has, added with STK_DEPS_EXTRA; or bpftool, hidden by a
# dpkg-query wrapper), plain make and every goal but deps, demo and check stop
# with one line naming it and 'make deps', and never run apt-get (a fake one
# on PATH logs every call); make deps, make demo and make check do ask
# apt-get to install it, before building anything.  With nothing missing,
# make deps says so.  A build host without kernel BTF and no VMLINUX_H is one
# clear error, and a failed llvm-strip fails the BPF object.  Debian only
# (dpkg-query); no BPF needed.

# Every make here runs in a copy of the source tree, building (were a goal
# to get that far) into that copy's build/: never into the tree the tests
# run from, whose build/ the tests running alongside use.  Only the real
# build's vmlinux.h is read (for the llvm-strip check).

. "$(dirname "$0")/lib/harness.sh"

# This script runs make check; were that to get past the install, it would
# run this script again: the inner one stops here.
[ -n "$STK_BUILD_DEPS_OUTER" ] && skip_test "inside its own make check"
export STK_BUILD_DEPS_OUTER=1

need_cmds dpkg-query tar
need_files "$O/vmlinux.h"
real_dpkg_query=$(command -v dpkg-query)

# The tree as the user has it (work in progress included), without .git
# and without the build directories.
src=$tmp/src
mkdir "$src" &&
	(cd "$top" && tar -cf - --exclude=./.git --exclude=./build --exclude="./${O#"$top"/}" .) |
	tar -xf - -C "$src" || { fail "copy the source tree to $src"; finish; }
cd "$src" || exit 1
B=build

# apt-get that installs nothing: it logs its arguments, "update" succeeds,
# anything else fails, so a make that asks for an install stops right there.
mkdir -p "$tmp/bin" "$tmp/hide" "$tmp/badstrip"
cat > "$tmp/bin/apt-get" <<EOF
#!/bin/sh
echo "\$*" >> "$tmp/apt.log"
[ "\$1" = update ]
EOF
# dpkg-query that does not see bpftool installed.
cat > "$tmp/hide/dpkg-query" <<EOF
#!/bin/sh
"$real_dpkg_query" "\$@" | grep -v '^bpftool '
EOF
printf '#!/bin/sh\nexit 1\n' > "$tmp/badstrip/llvm-strip"
chmod +x "$tmp/bin/apt-get" "$tmp/hide/dpkg-query" "$tmp/badstrip/llvm-strip"

fake=stk-test-no-such-package
path=$tmp/bin:$PATH
extra=$fake

# mk NAME ARGS...: make ARGS as a user would type it (none of the parent
# make's variables), output in $tmp/NAME.out and .err; returns its status.
mk() {
	name=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u STK_DEPS_CHECKED PATH="$path" \
		STK_DEPS_EXTRA="$extra" make O="$B" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
}

# stopped NAME PKG: nothing on stdout, one line on stderr naming PKG and
# 'make deps', and apt-get never ran.
stopped() {
	[ ! -s "$tmp/$1.out" ] && [ "$(wc -l < "$tmp/$1.err")" -eq 1 ] &&
		grep -q "missing .*dependencies: .*$2.*'make deps' as root" "$tmp/$1.err" &&
		[ ! -e "$tmp/apt.log" ]
}

# Goals that must not install.  bench and fuzz with -n: were they to get past
# the check, they would only print what they would run.
n=0
for goal in "" all install "-n bench" "-n fuzz" "$B/stkrec"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	mk goal$n DESTDIR="$tmp/root" $goal
	rc=$?
	if [ $rc -ne 0 ] && stopped goal$n $fake && [ ! -e "$tmp/root" ]; then
		pass "make ${goal:-(no goal)} with $fake missing stops with one line, installs nothing"
	else
		fail "make ${goal:-(no goal)} with $fake missing" \
			"exit $rc, $(wc -l < "$tmp/goal$n.err") lines: $(head -c 300 "$tmp/goal$n.err"), apt-get: $(cat "$tmp/apt.log" 2>/dev/null)"
	fi
	rm -f "$tmp/apt.log"
done

# A real package seen as missing, without STK_DEPS_EXTRA.
path=$tmp/hide:$tmp/bin:$PATH
extra=''
mk hidden
rc=$?
path=$tmp/bin:$PATH
extra=$fake
if [ $rc -ne 0 ] && stopped hidden bpftool; then
	pass "make with bpftool not installed stops with one line naming it, installs nothing"
else
	fail "make with bpftool not installed" \
		"exit $rc: $(head -c 300 "$tmp/hidden.err"), apt-get: $(cat "$tmp/apt.log" 2>/dev/null)"
fi
rm -f "$tmp/apt.log"

# make -n check only checks.
mk dry -n check
rc=$?
if [ $rc -ne 0 ] && stopped dry $fake; then
	pass "make -n check with $fake missing stops with one line, installs nothing"
else
	fail "make -n check" "exit $rc: $(head -c 300 "$tmp/dry.err"), apt-get: $(cat "$tmp/apt.log" 2>/dev/null)"
fi
rm -f "$tmp/apt.log"

# Goals that install first: the (fake) install fails, so they stop before
# building or running anything.  Only root installs; others are told the
# apt-get command.
for goal in deps demo check; do
	mk $goal $goal
	rc=$?
	if [ "$(id -u)" = 0 ]; then
		if [ $rc -ne 0 ] && grep -q "^install .*$fake" "$tmp/apt.log" 2>/dev/null &&
			! grep -q '^==' "$tmp/$goal.out"; then
			pass "make $goal with $fake missing runs apt-get install $fake first"
		else
			fail "make $goal with $fake missing" \
				"exit $rc, apt-get: $(cat "$tmp/apt.log" 2>/dev/null), $(head -c 300 "$tmp/$goal.err")"
		fi
	else
		if [ $rc -ne 0 ] && grep -q "as root run: apt-get install .*$fake" "$tmp/$goal.err" &&
			[ ! -e "$tmp/apt.log" ]; then
			pass "make $goal with $fake missing, not root: names the apt-get command"
		else
			fail "make $goal with $fake missing, not root" "exit $rc, $(head -c 300 "$tmp/$goal.err")"
		fi
	fi
	rm -f "$tmp/apt.log"
done

extra=''
if ! scripts/install-deps.sh --check > "$tmp/real.txt" 2>&1; then
	why="packages missing on this host: $(cat "$tmp/real.txt")"
	skip "make deps with nothing missing says so" "$why"
	skip "no kernel BTF and no VMLINUX_H: one error" "$why"
	skip "a failed llvm-strip fails the build" "$why"
	finish
fi

mk alldeps deps
rc=$?
if [ $rc -eq 0 ] && grep -qx 'install-deps: all dependencies are installed' "$tmp/alldeps.out" &&
	[ ! -e "$tmp/apt.log" ]; then
	pass "make deps with nothing missing says so and runs no apt-get"
else
	fail "make deps with nothing missing" "exit $rc, $(cat "$tmp/alldeps.out" "$tmp/alldeps.err" | head -c 300)"
fi

# No BTF to generate vmlinux.h from: the error says what to set.
mk nobtf O="$tmp/o" VMLINUX_BTF="$tmp/no-btf" "$tmp/o/vmlinux.h"
rc=$?
if [ $rc -ne 0 ] && grep -q "no kernel BTF at $tmp/no-btf.*VMLINUX_H=" "$tmp/nobtf.err" &&
	[ ! -e "$tmp/o/vmlinux.h" ]; then
	pass "no kernel BTF and no VMLINUX_H: one error naming VMLINUX_BTF and VMLINUX_H"
else
	fail "vmlinux.h without BTF" "exit $rc, $(head -c 300 "$tmp/nobtf.err")"
fi

# A failing llvm-strip fails the BPF object and leaves none behind.
path=$tmp/badstrip:$tmp/bin:$PATH
mk strip O="$tmp/o" VMLINUX_H="$O/vmlinux.h" "$tmp/o/bpf/profile.bpf.o"
rc=$?
if [ $rc -ne 0 ] && grep -q 'profile\.bpf\.o\] Error' "$tmp/strip.err" &&
	[ ! -e "$tmp/o/bpf/profile.bpf.o" ]; then
	pass "a failed llvm-strip fails the build, no profile.bpf.o left"
else
	fail "failed llvm-strip" "exit $rc, $(ls "$tmp/o/bpf" 2>&1), $(head -c 300 "$tmp/strip.err")"
fi

finish
