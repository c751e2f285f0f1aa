#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_python: python3 (Debian's, built without frame pointers) running
# a json/re/zlib loop, recorded at the same moment by stkrec (default
# --unwind=auto) and by `perf record --call-graph dwarf` (8 KiB of stack
# per sample, unwound offline): stkrec's samples reach Py_BytesMain as
# often as perf's (within 3 points, and >= 97%), with frame-pointer file
# sizes.  --unwind=fp on the same kind of run reaches it (almost) never,
# which is what this guards.  The shares are compared within 4.5 binomial
# standard deviations of the two sample counts (at least 3 points).
# python3 loops until the test stops it, and is recorded (-p) only once it
# has loaded every module it uses (its ready file).  No fixed run time
# that a busy machine's start-ups could eat: both recorders are known to
# be sampling (stkrec's -o file; perf started disabled and enabled through
# --control, which acknowledges) before the measured stretch, which ends
# once python3 has used 200 more ticks (2 s) of CPU time, ~200 samples at
# 99 Hz however long a busy machine takes to give them; then both get
# SIGINT.  The same for the --unwind=fp run.
# Skipped (77) without root/BTF, python3 or perf.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
need_cmds python3 perf

PY=$(command -v python3)
PERF=$(command -v perf)
cat >"$tmp/loop.py" <<'PYEOF'
import json, re, sys, time, zlib
d = {"k%d" % i: [i, str(i) * 5, {"x": i}] for i in range(200)}
pat = re.compile(r"(\d+)x(\w+)")
ready = sys.argv[1]
while True:
    s = json.dumps(d)
    json.loads(s)
    pat.findall(s)
    zlib.compress(s.encode())
    if ready:
        open(ready, "w").close()
        ready = ""
PYEOF

# reach FOLDED: "samples reaching-Py_BytesMain" of python3's samples.
reach() {
	awk '$0 ~ /^python3;/ { n = $NF; t += n; if ($0 ~ /;Py_BytesMain;/) m += n }
	     END { printf "%d %d\n", t, m }' "$1"
}

# ran_past PID N: PID has used N ticks of CPU time or more.
ran_past() {
	[ "$(cpu_ticks "$1")" -ge "$2" ]
}

# Recording starts once python3 has loaded every module it uses (a loaded
# machine can take seconds): a library mapped after the start is
# unwound by table only after the recorder reloads the process's maps.
bg "$PY" "$tmp/loop.py" "$tmp/ready"
py=$bg_pid
wait_until test -e "$tmp/ready"
bg "$REC" -q -F 99 -p "$py" -o "$tmp/py.stk"
s=$bg_pid
if ! wait_sampling "$tmp/py.stk" "$s"; then
	fail "stkrec -p python3 starts sampling"
	finish
fi
mkfifo "$tmp/perf.ctl" "$tmp/perf.ack"
exec 8<>"$tmp/perf.ctl" 9<>"$tmp/perf.ack"
bg "$PERF" record -q --call-graph dwarf -F 99 -p "$py" -o "$tmp/py.perf" \
	-D -1 --control "fifo:$tmp/perf.ctl,$tmp/perf.ack" >"$tmp/perf.log" 2>&1
p=$bg_pid
echo enable >&8
# The bound only stops a perf that died without acknowledging.
if ! timeout 120 sh -c 'read a && [ "$a" = ack ]' <&9; then
	fail "perf record --control: no ack" "$(cat "$tmp/perf.log")"
	finish
fi
k0=$(cpu_ticks "$py")
check "python3 uses 200 ticks of CPU time while both record" wait_until ran_past "$py" $((k0 + 200))
kill -INT "$s" "$p"
wait "$s"
rc=$?
wait "$p"
exec 8>&- 9>&-
check "stkrec -p python3 exits 0 after SIGINT (got $rc)" [ "$rc" -eq 0 ]
"$REP" -f folded "$tmp/py.stk" >"$tmp/py.folded" 2>/dev/null
set -- $(reach "$tmp/py.folded")
st=$1 sm=$2
set -- $("$PERF" script -i "$tmp/py.perf" -F comm,ip,sym 2>/dev/null |
	awk 'BEGIN { RS = "" } /^python3/ { t++; if ($0 ~ /Py_BytesMain/) m++ } END { printf "%d %d\n", t, m }')
pt=$1 pm=$2
ssz=$(wc -c <"$tmp/py.stk")
psz=$(wc -c <"$tmp/py.perf")
echo "     stk: $sm of $st samples reach Py_BytesMain ($ssz bytes); perf --call-graph dwarf: $pm of $pt ($psz bytes)"
# 200 ticks at 99 Hz: ~200 samples each, from python3's work; at least half.
check "stk: >= 97% of $st python3 samples (>= 99) reach Py_BytesMain ($sm)" \
	[ "$st" -ge 99 -a $((sm * 100)) -ge $((st * 97)) ]
# tol: 4.5 standard deviations of the difference of two binomial shares
# (perf's share as p), at least 3 points.
tol=$(awk -v b="$st" -v c="$pm" -v d="$pt" 'BEGIN {
	if (b <= 0 || d <= 0) { print 3; exit }
	p = c / d; t = 100 * 4.5 * sqrt(p * (1 - p) * (1 / b + 1 / d)); printf "%.1f\n", t < 3 ? 3 : t }')
check "stk's share reaching Py_BytesMain is within $tol points of perf's, or above" \
	awk -v a="$sm" -v b="$st" -v c="$pm" -v d="$pt" -v t="$tol" 'BEGIN { exit !(b > 0 && d > 0 && 100 * a / b >= 100 * c / d - t) }'
check "stk's file is at most 1/50 of perf's ($ssz vs $psz bytes)" [ $((ssz * 50)) -le "$psz" ]
stop "$py"

rm -f "$tmp/ready"
bg "$PY" "$tmp/loop.py" "$tmp/ready"
py=$bg_pid
wait_until test -e "$tmp/ready"
bg "$REC" -q --unwind=fp -F 99 -p "$py" -o "$tmp/fp.stk"
s=$bg_pid
if ! wait_sampling "$tmp/fp.stk" "$s"; then
	fail "stkrec --unwind=fp -p python3 starts sampling"
	finish
fi
k0=$(cpu_ticks "$py")
check "python3 uses 200 ticks of CPU time while stkrec --unwind=fp records" \
	wait_until ran_past "$py" $((k0 + 200))
kill -INT "$s"
wait "$s"
rc=$?
check "stkrec --unwind=fp -p python3 exits 0 after SIGINT (got $rc)" [ "$rc" -eq 0 ]
"$REP" -f folded "$tmp/fp.stk" >"$tmp/fp.folded" 2>/dev/null
set -- $(reach "$tmp/fp.folded")
echo "     fp: $2 of $1 samples reach Py_BytesMain"
check "fp: frame pointers reach Py_BytesMain in under half the samples ($2 of $1, >= 99 samples)" \
	[ "$1" -ge 99 -a $(($2 * 2)) -lt "$1" ]
stop "$py"
finish
