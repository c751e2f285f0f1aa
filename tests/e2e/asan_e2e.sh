#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkrec and stkreport under ASan+UBSan ($O/asan, mk/asan.mk) on real
# recordings: a profile of samples/cpuwork and an offwake recording of
# samples/offwork, each reported in text, folded, pprof and svg, with info
# and info --chunks, then diff and merge of the two profiles and of the two
# offwake captures, and the merged captures reported.  Every run must exit
# 0 with no sanitizer report (leaks included: detect_leaks=1).
#
# Exit 77 (skipped) when BPF cannot be used here.

. "$(dirname "$0")/lib/harness.sh"

AREC=$O/asan/stkrec
AREP=$O/asan/stkreport
need_files "$AREC" "$AREP" "$CW" "$OW"
need_bpf

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=99
n=0

# san DESC CMD...: CMD exits 0 and its stderr holds no sanitizer report.
san() {
	_d=$1
	shift
	n=$((n + 1))
	"$@" > "$tmp/out.$n" 2> "$tmp/err.$n"
	_rc=$?
	if [ "$_rc" -eq 0 ] && ! grep -q "Sanitizer\|runtime error:" "$tmp/err.$n"; then
		pass "$_d"
	else
		fail "$_d" "exit $_rc"
		grep -m 20 "ERROR\|SUMMARY\|runtime error\|#[0-9]" "$tmp/err.$n" | head -n 20
	fi
}

# cpuwork -n: a fixed amount of work (about 0.5 s of CPU here), so the
# profiles have samples however loaded the machine is.
san "record profile of cpuwork" "$AREC" -q -F 199 -o "$tmp/p1.stk" -- "$CW" -n 500
san "record a second profile" "$AREC" -q -F 199 -o "$tmp/p2.stk" -- "$CW" -n 500
san "record offwake of offwork" "$AREC" offwake -q -o "$tmp/w1.stk" -- "$OW" 1
san "record a second offwake" "$AREC" offwake -q -o "$tmp/w2.stk" -- "$OW" 1
for c in p1 w1; do
	san "$c: text" "$AREP" "$tmp/$c.stk"
	san "$c: folded" "$AREP" -f folded --lines --addresses "$tmp/$c.stk"
	san "$c: pprof" "$AREP" -f pprof -o "$tmp/$c.pb.gz" "$tmp/$c.stk"
	san "$c: svg" "$AREP" -f svg -o "$tmp/$c.svg" "$tmp/$c.stk"
	san "$c: info" "$AREP" info "$tmp/$c.stk"
	san "$c: info --chunks --symbols" "$AREP" info --chunks --symbols "$tmp/$c.stk"
done
check "the profile has samples" grep -q "^samples: [1-9]" "$tmp/out.9"
san "diff of the profiles" "$AREP" diff "$tmp/p1.stk" "$tmp/p2.stk"
san "diff of the offwake captures, svg" \
	"$AREP" diff -f svg -o "$tmp/dw.svg" "$tmp/w1.stk" "$tmp/w2.stk"
san "merge of the profiles" "$AREP" merge -o "$tmp/pm.stk" "$tmp/p1.stk" "$tmp/p2.stk"
san "merge of the offwake captures" "$AREP" merge -o "$tmp/wm.stk" "$tmp/w1.stk" "$tmp/w2.stk"
san "merged profile: folded" "$AREP" -f folded "$tmp/pm.stk"
san "merged offwake: text" "$AREP" "$tmp/wm.stk"
finish
