#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# docs/ and the man pages say what --help says: every option of
# `stkrec --help`, `stkrec offcpu --help`, `stkrec offwake --help`,
# `stkreport --help`, `stkreport diff --help` and `stkreport info --help` is in the option table of
# its section of docs/recording.md or docs/reporting.md and in the OPTIONS of its man page, and
# every option those list is one the tool's help names.  Also: the README quick start is
# exactly the two commands `make demo` and `make check`.  No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$REC" "$REP"
need_cmds man
cd "$top" || exit 1

# opts FILE: the option names (-X, --long) on the option lines of a --help
# text (indented by 2 to 6 spaces, starting with '-'), one per line.
opts() {
	grep -E '^ {2,6}-' "$1" | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' |
		sed 's/^[ ,]*//' | sort -u
}

# section FILE HEADING: the lines of FILE from the line that starts with
# HEADING ('## Recording: stkrec', hashes included) to the next heading of
# any level; nothing (so an empty table) when no line starts with HEADING.
section() {
	awk -v h="$2" 'index($0, h) == 1 { on = 1; next } /^#/ { on = 0 } on' "$1"
}

# table_opts FILE: the option names in the first cell of markdown table rows.
table_opts() {
	grep -E '^\| `' "$1" | cut -d'|' -f2 | grep -oE '(^|[ ,`])--?[A-Za-z][A-Za-z-]*' |
		sed 's/^[ ,`]*//' | sort -u
}

# man_opts FILE: the option names of a rendered man page's OPTIONS section
# (tagged paragraphs: 7 spaces, then '-').
man_opts() {
	awk '/^OPTIONS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' "$1" | grep -E '^ {7}-' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed 's/^[ ,]*//' | sort -u
}

# same WHAT HELP_OPTS DOC_OPTS: every option of HELP_OPTS is in DOC_OPTS and
# the other way round.
same() {
	missing=$(comm -23 "$2" "$3" | tr '\n' ' ')
	extra=$(comm -13 "$2" "$3" | tr '\n' ' ')
	n=$(wc -l < "$2")
	if [ "$n" -lt 5 ]; then
		fail "$1: only $n options found in --help (parsing broke?)"
	elif [ -z "$missing" ] && [ -z "$extra" ]; then
		pass "$1: the same $n options as --help"
	else
		fail "$1" "${missing:+missing: $missing}${extra:+ not in --help: $extra}"
	fi
}

"$REC" --help > "$tmp/profile.help"
"$REC" offcpu --help > "$tmp/offcpu.help"
"$REC" offwake --help > "$tmp/offwake.help"
"$REC" trace --help > "$tmp/trace.help"
"$REP" --help > "$tmp/report.help"
"$REP" info --help > "$tmp/info.help"
"$REP" diff --help > "$tmp/diff.help"
for h in profile offcpu offwake trace report info diff; do
	opts "$tmp/$h.help" > "$tmp/$h.opts"
done
if cmp -s "$tmp/offcpu.opts" "$tmp/offwake.opts"; then
	pass "offcpu and offwake --help list the same options"
else
	fail "offcpu and offwake --help differ; docs/recording.md documents them in one table"
fi

# docs/: one table per tool and mode, right under its section's heading.
need_files docs/recording.md docs/reporting.md
section docs/recording.md "## Recording: stkrec" > "$tmp/doc.profile"
section docs/recording.md "## Off-CPU time: stkrec offcpu" > "$tmp/doc.offcpu"
section docs/recording.md "## Events: stkrec trace" > "$tmp/doc.trace"
section docs/reporting.md "## Reporting: stkreport" > "$tmp/doc.report"
section docs/reporting.md "## Inspecting a capture: stkreport info" > "$tmp/doc.info"
section docs/reporting.md "## Comparing captures: stkreport diff" > "$tmp/doc.diff"
for h in profile offcpu trace report info diff; do
	table_opts "$tmp/doc.$h" > "$tmp/doc.$h.opts"
done
same "docs/recording.md stkrec profile table" "$tmp/profile.opts" "$tmp/doc.profile.opts"
same "docs/recording.md stkrec offcpu/offwake table" "$tmp/offcpu.opts" "$tmp/doc.offcpu.opts"
same "docs/recording.md stkrec trace table" "$tmp/trace.opts" "$tmp/doc.trace.opts"
same "docs/reporting.md stkreport table" "$tmp/report.opts" "$tmp/doc.report.opts"
same "docs/reporting.md stkreport diff table" "$tmp/diff.opts" "$tmp/doc.diff.opts"
# info's --help names --sysroot and --debug-dir in the text of --symbols,
# not on option lines of their own.
for o in --sysroot --debug-dir; do
	if grep -qF -- "$o DIR" "$tmp/info.help"; then
		echo "$o" >> "$tmp/info.opts"
	fi
done
sort -u -o "$tmp/info.opts" "$tmp/info.opts"
n=$(wc -l < "$tmp/info.opts")
missing=$(comm -23 "$tmp/info.opts" "$tmp/doc.info.opts" | tr '\n' ' ')
extra=$(comm -13 "$tmp/info.opts" "$tmp/doc.info.opts" | tr '\n' ' ')
if [ "$n" -ge 4 ] && [ -z "$missing" ] && [ -z "$extra" ]; then
	pass "docs/reporting.md stkreport info table: the same $n options as --help"
else
	fail "docs/reporting.md stkreport info table" "missing: $missing not in --help: $extra"
fi

# Man pages: stkrec.1 covers every mode, stkreport.1 the report, diff and info.
MANWIDTH=200 man -l man/stkrec.1 2> /dev/null > "$tmp/stkrec.man"
MANWIDTH=200 man -l man/stkreport.1 2> /dev/null > "$tmp/stkreport.man"
man_opts "$tmp/stkrec.man" > "$tmp/stkrec.man.opts"
man_opts "$tmp/stkreport.man" > "$tmp/stkreport.man.opts"
sort -u "$tmp/profile.opts" "$tmp/offcpu.opts" "$tmp/offwake.opts" "$tmp/trace.opts" > "$tmp/stkrec.opts"
sort -u "$tmp/report.opts" "$tmp/info.opts" "$tmp/diff.opts" > "$tmp/stkreport.opts"
same "man/stkrec.1 OPTIONS" "$tmp/stkrec.opts" "$tmp/stkrec.man.opts"
same "man/stkreport.1 OPTIONS" "$tmp/stkreport.opts" "$tmp/stkreport.man.opts"

# The quick start: exactly two commands.
awk '/^## Quick start/ { on = 1; next } /^##/ { on = 0 } on && /^    [^ ]/' README.md |
	sed 's/ *#.*//; s/^ *//' > "$tmp/quick"
if [ "$(tr '\n' ';' < "$tmp/quick")" = "make demo;make check;" ]; then
	pass "README quick start is 'make demo' and 'make check'"
else
	fail "README quick start" "$(tr '\n' ';' < "$tmp/quick")"
fi

# The versions the man pages name are the release's.
version=$(sed -n 's/^#define STK_VERSION_STRING "\(.*\)"$/\1/p' format/stk.h)
for page in man/stkrec.1 man/stkreport.1; do
	if grep -q "^\.TH .* \"stk $version\"" "$page"; then
		pass "$page is for stk $version"
	else
		fail "$page .TH does not name stk $version"
	fi
done

finish
