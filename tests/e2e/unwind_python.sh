#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# unwind_python: python3 (Debian's, built without frame pointers) running
# a json/re/zlib loop, recorded at the same moment by stkrec (default
# --unwind=auto) and by `perf record --call-graph dwarf` (8 KiB of stack
# per sample, unwound offline): stkrec's samples reach Py_BytesMain as
# often as perf's (within 3 points, and >= 97%), with frame-pointer file
# sizes.  --unwind=fp on the same kind of run reaches it (almost) never,
# which is what this guards.
# Skipped (77) without root/BTF, python3 or perf.

. "$(dirname "$0")/lib/harness.sh"
. "$top/tests/e2e/lib/record.sh"
need_cmds python3 perf

PY=$(command -v python3)
PERF=$(command -v perf)
cat >"$tmp/loop.py" <<'PYEOF'
import json, re, sys, time, zlib
end = time.time() + float(sys.argv[1])
d = {"k%d" % i: [i, str(i) * 5, {"x": i}] for i in range(200)}
pat = re.compile(r"(\d+)x(\w+)")
ready = sys.argv[2] if len(sys.argv) > 2 else ""
while time.time() < end:
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

# Recording starts once python3 has loaded every module it uses (a loaded
# machine can take seconds): a library mapped after the start is
# unwound by table only after the recorder reloads the process's maps.
bg "$PY" "$tmp/loop.py" 10 "$tmp/ready"
py=$bg_pid
i=0
while [ ! -e "$tmp/ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
bg "$REC" -q -F 99 -p "$py" -o "$tmp/py.stk" 3
s=$bg_pid
bg "$PERF" record -q --call-graph dwarf -F 99 -p "$py" -o "$tmp/py.perf" -- sleep 3 >/dev/null 2>&1
p=$bg_pid
wait "$s"
rc=$?
wait "$p"
check "stkrec -p python3 exits 0 (got $rc)" [ "$rc" -eq 0 ]
"$REP" -f folded "$tmp/py.stk" >"$tmp/py.folded" 2>/dev/null
set -- $(reach "$tmp/py.folded")
st=$1 sm=$2
set -- $("$PERF" script -i "$tmp/py.perf" -F comm,ip,sym 2>/dev/null |
	awk 'BEGIN { RS = "" } /^python3/ { t++; if ($0 ~ /Py_BytesMain/) m++ } END { printf "%d %d\n", t, m }')
pt=$1 pm=$2
ssz=$(wc -c <"$tmp/py.stk")
psz=$(wc -c <"$tmp/py.perf")
echo "     stk: $sm of $st samples reach Py_BytesMain ($ssz bytes); perf --call-graph dwarf: $pm of $pt ($psz bytes)"
check "stk: >= 97% of $st python3 samples reach Py_BytesMain ($sm)" \
	[ "$st" -ge 20 -a $((sm * 100)) -ge $((st * 97)) ]
check "stk's share reaching Py_BytesMain is within 3 points of perf's, or above" \
	awk -v a="$sm" -v b="$st" -v c="$pm" -v d="$pt" 'BEGIN { exit !(d > 0 && 100 * a / b >= 100 * c / d - 3) }'
check "stk's file is at most 1/50 of perf's ($ssz vs $psz bytes)" [ $((ssz * 50)) -le "$psz" ]
stop "$py"

bg "$PY" "$tmp/loop.py" 2
py=$bg_pid
sleep 0.2
"$REC" -q --unwind=fp -F 99 -p "$py" -o "$tmp/fp.stk" 1.5
"$REP" -f folded "$tmp/fp.stk" >"$tmp/fp.folded" 2>/dev/null
set -- $(reach "$tmp/fp.folded")
echo "     fp: $2 of $1 samples reach Py_BytesMain"
check "fp: frame pointers reach Py_BytesMain in under half the samples ($2 of $1)" \
	[ "$1" -gt 0 -a $(($2 * 2)) -lt "$1" ]
wait "$py"
finish
