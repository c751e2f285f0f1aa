#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# samples_golden: the sample captures in samples/ (profile, offcpu,
# offwake; recorded by samples/record-samples.sh) report as
# tests/golden/samples_*_folded.out say, line for line (sorted, so only
# content counts), and need nothing of this machine: every user module is
# named from the symbols embedded in the capture (info --symbols says
# "source: embedded symbols", or "source: embedded" for the vDSO, whose
# image the capture holds), kernel frames from the captured kernel
# symbols.  Run as an unprivileged user when the test runs as root, as a
# user trying stkreport without root would; that user runs and reads
# world-readable copies in $tmp, so a clone in a 0700 directory passes
# too (never skipped for it).  No BPF needed.
#
# STK_GOLDEN_UPDATE=1 rewrites the expected files (review the diff).

. "$(dirname "$0")/lib/harness.sh"
need_files "$REP"

# as_user CMD...: CMD as nobody when root (setpriv), else as we are.
as_user() {
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
	else
		"$@"
	fi
}
# The clone may lie in a directory nobody cannot enter (a 0700 home or
# work directory): nobody then runs and reads copies in $tmp, made
# world-readable, never the originals.  The copies are the same bytes, so
# what is checked is still the committed samples and the built stkreport.
chmod 755 "$tmp"
mkdir "$tmp/pub"
cp "$REP" "$tmp/pub/stkreport"
for c in profile offcpu offwake; do
	[ -f "$top/samples/$c.stk" ] && cp "$top/samples/$c.stk" "$tmp/pub/$c.stk"
done
chmod -R a+rX "$tmp/pub"
REP_U=$tmp/pub/stkreport
# ${TMPDIR:-/tmp} itself must let nobody through: say so, never skip.
if ! as_user test -x "$REP_U"; then
	fail "nobody cannot run $REP_U" "set TMPDIR to a directory others may enter"
	finish
fi

for c in profile offcpu offwake; do
	f=$top/samples/$c.stk
	if [ ! -f "$f" ]; then
		fail "samples/$c.stk missing"
		continue
	fi
	size=$(wc -c < "$f")
	check "samples/$c.stk is small ($size bytes)" [ "$size" -le 65536 ]
	as_user "$REP_U" -f folded "$tmp/pub/$c.stk" > "$tmp/$c.raw" 2> "$tmp/$c.err"
	rc=$?
	check "samples/$c.stk: stkreport -f folded exits 0 without root" [ $rc = 0 ]
	sort "$tmp/$c.raw" > "$tmp/$c.folded"
	check "samples/$c.stk: folded report as tests/golden/samples_${c}_folded.out" \
		golden "samples_${c}_folded.out" "$tmp/$c.folded"
	as_user "$REP_U" info --symbols "$tmp/pub/$c.stk" > "$tmp/$c.info" 2>&1
	# Every module but the kernel: its symbols come from the capture.
	awk '/^module: / { m = $2 } /^  source: / && m != "[kernel]" { print m ": " $0 }' \
		"$tmp/$c.info" > "$tmp/$c.sources"
	check "samples/$c.stk: user modules have sources listed" [ -s "$tmp/$c.sources" ]
	if grep -Ev 'source: embedded symbols$|^\[vdso\]: +source: embedded$' "$tmp/$c.sources" > "$tmp/$c.other"; then
		fail "samples/$c.stk: a module named from this machine's files" "$(cat "$tmp/$c.other")"
	else
		pass "samples/$c.stk: every user module from the capture's embedded symbols (or vDSO)"
	fi
	check "samples/$c.stk: kernel names from the capture" \
		grep -q '^  symbols: capture (' "$tmp/$c.info"
	check "samples/$c.stk: sound and closed" grep -q '^verdict: OK' "$tmp/$c.info"
done
finish
