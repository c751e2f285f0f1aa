#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# stkreport -f pprof labels for backends that hold many machines' profiles
# (Pyroscope, Parca): every sample carries the capture's hostname and
# kernel_release (META), and each --label KEY=VALUE; a --label of a
# default key replaces it, KEY= drops it, the last of one key wins.  Read
# back by go tool pprof -raw and protoc --decode.  Bad keys, keys that
# stkreport sets per sample, and --label without -f pprof are usage errors
# (exit 2, one line).  No BPF: a mkcapture fixture.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/pprof.sh"
need_files "$MK" "$REP" "$FX/root/fx/fx_pie"
need_pprof_tools

{
	sed 's/^meta hostname fxhost$/meta hostname fxhost\nmeta kernel_release 6.1.0-fx/' \
		"$GOLD/pprof_report.spec"
} >"$tmp/l.spec"
"$MK" -C "$FX/root" "$tmp/l.spec" "$tmp/l.stk" || { fail "mkcapture"; finish; }

# raw OUT ARGS: the -raw view's sample label lines of a profile made with ARGS.
raw() {
	out=$1
	shift
	"$REP" -f pprof --sysroot "$FX/root" "$@" -o "$tmp/$out.pb.gz" "$tmp/l.stk" 2>"$tmp/$out.err" ||
		fail "stkreport -f pprof $*" "$(cat "$tmp/$out.err")"
	gopprof -raw "$tmp/$out.pb.gz" 2>&1 | grep 'comm:\[' >"$tmp/$out.raw"
}

# every_sample FILE PATTERN: every sample line of FILE matches PATTERN.
every_sample() { test -s "$1" && ! grep -v -- "$2" "$1" | grep -q .; }

raw def
check "default: every sample has hostname:[fxhost]" every_sample "$tmp/def.raw" 'hostname:\[fxhost\]'
check "default: every sample has kernel_release:[6.1.0-fx]" every_sample "$tmp/def.raw" 'kernel_release:\[6.1.0-fx\]'

raw lab --label service=api --label version=1.2 --label service=web
check "--label: every sample has service (the last one given) and version" \
	every_sample "$tmp/lab.raw" 'hostname:\[fxhost\] kernel_release:\[6.1.0-fx\] pid:\[[0-9]*\] service:\[web\] tid:\[[0-9]*\] version:\[1.2\]'
check "--label: the first service value is not there" sh -c "! grep -q 'service:\[api\]' '$tmp/lab.raw'"

raw ovr --label hostname=web-1 --label kernel_release=
check "--label hostname=: replaces the capture's" every_sample "$tmp/ovr.raw" 'hostname:\[web-1\]'
check "--label KEY=: drops the default" sh -c "! grep -q kernel_release '$tmp/ovr.raw'"

# protoc: the label is a string label on every sample.
decode "$tmp/lab.pb.gz" >"$tmp/lab.txt" 2>&1
samples=$(grep -c '^sample {' "$tmp/lab.txt")
key=$(awk '/^string_table: "service"$/ { print n } /^string_table:/ { n++ }' "$tmp/lab.txt")
withkey=$(grep -c "^    key: $key\$" "$tmp/lab.txt")
check "protoc: one service label per sample ($withkey of $samples)" test "$samples" -gt 0 -a "$withkey" = "$samples"

# ---- usage errors -------------------------------------------------------------
# usage NAME ARGS: exit 2 and one line on stderr.
usage() {
	name=$1
	shift
	"$REP" "$@" "$tmp/l.stk" >/dev/null 2>"$tmp/u.err"
	st=$?
	check "$name: exit 2 ($st), one line: $(head -n 1 "$tmp/u.err")" \
		sh -c "test $st = 2 && test \$(wc -l <'$tmp/u.err') = 1 && grep -q '^stkreport: ' '$tmp/u.err'"
}
usage "no '='" -f pprof -o "$tmp/x.pb.gz" --label service
usage "empty key" -f pprof -o "$tmp/x.pb.gz" --label =x
usage "key with '-'" -f pprof -o "$tmp/x.pb.gz" --label my-key=x
usage "per-sample key pid" -f pprof -o "$tmp/x.pb.gz" --label pid=1
usage "text output" --label service=api

finish
