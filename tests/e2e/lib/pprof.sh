# SPDX-License-Identifier: BSD-2-Clause
#
# Sourced by tests/e2e/pprof_*.sh (and report_vmlinux.sh) after
# lib/harness.sh: the pprof readers (protoc with pprof's own profile.proto
# from Debian's golang-github-google-pprof-dev, read where the package
# installed it and never copied here; go tool pprof) and share comparisons
# between a profile and the folded report of the same capture.

# Without the harness there is no $tmp: a test would write into the
# current directory or /.  Refuse instead.
[ -n "${tmp:-}" ] && [ -d "$tmp" ] || { echo "$0: source tests/e2e/lib/harness.sh first"; exit 1; }

# pprof_tools: 0 if the readers are installed, else 1.
pprof_tools() {
	proto=$(dpkg -L golang-github-google-pprof-dev 2>/dev/null | grep '/proto/profile.proto$' | head -n 1)
	if [ -z "$proto" ] || ! command -v protoc >/dev/null || ! command -v go >/dev/null; then
		return 1
	fi
	proto_dir=${proto%/*}
	# go tool pprof wants a home and a cache: keep both in $tmp.  UTC makes
	# printed times stable.
	export HOME="$tmp" GOCACHE="$tmp/gocache" GOFLAGS='' TZ=UTC PPROF_TMPDIR="$tmp"
	return 0
}
PPROF_TOOLS="protoc, go and golang-github-google-pprof-dev (make deps)"

# need_pprof_tools: the test cannot run without the readers: skipped.
need_pprof_tools() {
	pprof_tools || skip_test "needs $PPROF_TOOLS"
}

# decode FILE: the profile as protoc's text format.
decode() { gzip -dc "$1" | protoc --decode=perftools.profiles.Profile -I"$proto_dir" profile.proto; }

# gopprof ARGS: go tool pprof, never looking for binaries or symbol servers.
gopprof() { go tool pprof -symbolize=none "$@"; }

# Build-ids of the fixtures depend on where they were built: "X" instead.
no_bids() { sed -E 's/[0-9a-f]{40}/X/g'; }

# top_shares INDEX FILE: "name<TAB>flat%<TAB>cum%" of every named function
# in go tool pprof -top for sample type INDEX, sorted by name.  Unnamed
# locations ("[mapping]", addresses) and pseudo-frames ("--", "[Missed
# ...]") are left out: folded names them differently ("[unknown]").
top_shares() {
	gopprof -top -sample_index="$1" -nodecount=100000 -nodefraction=0 -edgefraction=0 "$2" |
	awk '
	/^ *flat +flat%/ { on = 1; next }
	on && NF >= 6 {
		name = $6
		for (i = 7; i <= NF; i++) name = name " " $i
		sub(/ \((partial-)?inline\)$/, "", name)
		# Unnamed: [module], addresses, and <unknown> (a location in no
		# mapping: folded calls it [unknown], which folded_shares skips).
		if (name ~ /^\[/ || name ~ /^-+$/ || name ~ /^0x[0-9a-f]+$/ || name == "<unknown>") next
		f = $2; c = $5; sub(/%$/, "", f); sub(/%$/, "", c)
		printf "%s\t%.2f\t%.2f\n", name, f, c
	}' | sort
}

# folded_shares WAKER FILE: the same from a folded report (WAKER 1: offwake
# lines, whose last element is the waker comm).  flat: the line's last
# frame; cum: lines with the frame anywhere, once per line.
folded_shares() {
	awk -v waker="$1" '
	{
		v = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		total += v
		k = split(line, f, ";")
		last = waker ? k - 1 : k
		if (last < 2) next
		delete seen
		for (i = 2; i <= last; i++) {
			if (f[i] in seen) continue
			seen[f[i]] = 1; cum[f[i]] += v
		}
		flat[f[last]] += v
	}
	END {
		for (n in cum) {
			if (n ~ /^\[/ || n ~ /^-+$/) continue
			printf "%s\t%.2f\t%.2f\n", n, 100 * flat[n] / total, 100 * cum[n] / total
		}
	}' "$2" | sort
}

# same_shares A B: the two share lists name the same functions, with flat
# and cum shares equal within rounding (0.01 points).  Prints differences.
same_shares() {
	awk -F'\t' '
	FNR == NR { f[$1] = $2; c[$1] = $3; next }
	{
		seen[$1] = 1
		if (!($1 in f)) { print "only in pprof: " $0; bad = 1; next }
		d1 = f[$1] - $2; d2 = c[$1] - $3
		if (d1 < -0.011 || d1 > 0.011 || d2 < -0.011 || d2 > 0.011) {
			print "differs: " $1 ": folded " f[$1] "/" c[$1] ", pprof " $2 "/" $3; bad = 1
		}
	}
	END {
		for (n in f) if (!(n in seen)) { print "only in folded: " n; bad = 1 }
		exit bad
	}' "$1" "$2"
}
