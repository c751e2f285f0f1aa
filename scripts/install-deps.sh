#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Check for, or install, the Debian packages stk needs to build and test.
#
#   scripts/install-deps.sh [--build]            install whatever is missing
#   scripts/install-deps.sh --ensure [--build]   the same, silent when nothing is
#                                                missing (make demo, make check)
#   scripts/install-deps.sh --check [--build]    install nothing: print one line
#                                                naming what is missing, exit 1
#                                                (every other make goal)
#   scripts/install-deps.sh --list [--build]     print the package list
#
# --build: only what building needs (make, make demo), not the test tools.
# STK_DEPS_EXTRA="pkg..." adds packages to the list (tests/e2e/build_deps.sh
# uses it to fake a missing one).
#
# Not Debian: the missing commands and pkg-config modules are named, for the
# user to install, exit 1.  Not root: one line with the apt-get command to
# run, exit 1.

# The lists are split into words on purpose (one package a word).
# shellcheck disable=SC2086,SC2116

# Build: compilers, BPF toolchain and libraries.
BUILD_PKGS="gcc make clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev
libzstd-dev zlib1g-dev liblzma-dev libdebuginfod-dev"
# Tests and benchmarks: the unit test framework, reference tools, sanitizers, fuzzer runtime.
TEST_PKGS="check zstd binutils linux-perf golang-go protobuf-compiler
golang-github-google-pprof-dev libclang-rt-14-dev python3 libpython3.11 man-db libxml2-utils chromium"
# The same needs as commands and pkg-config modules, for systems without dpkg.
BUILD_CMDS="cc clang llvm-strip pkg-config bpftool"
BUILD_MODS="libbpf libelf libdw libzstd zlib"
TEST_MODS="check"

mode=install
set=all
for arg in "$@"; do
	case "$arg" in
	--ensure|--check|--list) mode=${arg#--} ;;
	--build) set=build ;;
	*) echo "install-deps: unknown option '$arg'" >&2; exit 2 ;;
	esac
done

if [ "$set" = build ]; then
	PKGS=$(echo $BUILD_PKGS $STK_DEPS_EXTRA)
	MODS=$BUILD_MODS
	what="build dependencies"
else
	PKGS=$(echo $BUILD_PKGS $TEST_PKGS $STK_DEPS_EXTRA)
	MODS="$BUILD_MODS $TEST_MODS"
	what="build and test dependencies"
fi

if [ "$mode" = list ]; then
	echo "$PKGS"
	exit 0
fi

missing_debian() {
	# One dpkg-query for all packages; a package missing from its output, or
	# not "install ok installed", is missing.
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
		    awk '$2 == "install" && $3 == "ok" && $4 == "installed" { print $1 }')
	printf '%s\n' $PKGS | awk -v installed="$installed" '
		BEGIN { n = split(installed, p, "\n"); for (i = 1; i <= n; i++) ok[p[i]] = 1 }
		!ok[$1] { printf "%s ", $1 }'
}

missing_other() {
	PATH=$PATH:/usr/sbin:/sbin	# where bpftool lives, also for non-root
	for c in $BUILD_CMDS; do
		command -v "$c" >/dev/null 2>&1 || printf '%s ' "$c"
	done
	for m in $MODS; do
		pkg-config --exists "$m" 2>/dev/null || printf '%s ' "$m.pc"
	done
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	MISSING=$(missing_other)
	[ -z "$MISSING" ] && exit 0
	if [ "$mode" = check ]; then
		echo "missing $what: ${MISSING% } (not a Debian system: install them by hand)"
	else
		echo "install-deps: not a Debian system; install by hand: ${MISSING% }" >&2
	fi
	exit 1
fi

MISSING=$(missing_debian)
MISSING=${MISSING% }
if [ -z "$MISSING" ]; then
	[ "$mode" = install ] && echo "install-deps: all dependencies are installed"
	exit 0
fi

if [ "$mode" = check ]; then
	echo "missing $what: $MISSING; run 'make deps' as root to install them"
	exit 1
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages; as root run: apt-get install $MISSING" >&2
	exit 1
fi

echo "install-deps: installing missing packages: $MISSING" >&2
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists once if they were never fetched or are over a day old.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n 1)" ]; then
	apt-get update -qq >&2 || { echo "install-deps: apt-get update failed" >&2; exit 1; }
fi
if ! apt-get install -y -qq --no-install-recommends $MISSING >&2; then
	echo "install-deps: apt-get install failed for: $MISSING" >&2
	exit 1
fi
exit 0
