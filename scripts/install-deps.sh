#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Install the Debian packages stk needs to build and test.
#
#   scripts/install-deps.sh            install whatever is missing
#   scripts/install-deps.sh --ensure   silent when nothing is missing (used by make)
#   scripts/install-deps.sh --list     print the package list
#
# Not Debian, or not root: one line naming the packages, exit 1.

# Build: compilers, BPF toolchain and libraries.
BUILD_PKGS="gcc make clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev
libzstd-dev zlib1g-dev libdebuginfod-dev"
# Tests and benchmarks: the unit test framework, reference tools, sanitizers, fuzzer runtime.
TEST_PKGS="check zstd binutils linux-perf golang-go protobuf-compiler
golang-github-google-pprof-dev libclang-rt-14-dev python3 man-db"

PKGS=$(echo $BUILD_PKGS $TEST_PKGS)

if [ "$1" = "--list" ]; then
	echo "$PKGS"
	exit 0
fi

missing_debian() {
	# One dpkg-query for all packages; a package missing from its output, or
	# not "install ok installed", is missing.
	installed=$(dpkg-query -W -f='${Package} ${Status}\n' $PKGS 2>/dev/null |
		    awk '$2 == "install" && $3 == "ok" && $4 == "installed" { print $1 }')
	for p in $PKGS; do
		echo "$installed" | grep -qx "$p" || printf '%s ' "$p"
	done
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	# Not Debian: fine if the tools and libraries are already there.
	if command -v clang >/dev/null && command -v bpftool >/dev/null &&
	   pkg-config --exists libbpf libelf libdw libzstd zlib check 2>/dev/null; then
		exit 0
	fi
	echo "install-deps: not a Debian system; install the equivalents of: $PKGS" >&2
	exit 1
fi

MISSING=$(missing_debian)
if [ -z "$MISSING" ]; then
	[ "$1" = "--ensure" ] || echo "install-deps: all dependencies are installed"
	exit 0
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
# shellcheck disable=SC2086
if ! apt-get install -y -qq --no-install-recommends $MISSING >&2; then
	echo "install-deps: apt-get install failed for: $MISSING" >&2
	exit 1
fi
exit 0
