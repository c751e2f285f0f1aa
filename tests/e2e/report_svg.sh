#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# report_svg: `stkreport -f svg`, the flame graph.
#  - xmllint --noout accepts it, for a recording of samples/cpuwork and for
#    crafted captures (mkcapture) whose names hold <script>, &, quotes, ESC
#    and invalid UTF-8: those show escaped, and no byte from a capture adds
#    markup;
#  - one <g>/<rect> per frame of the folded output's prefix tree at least
#    0.1 px wide, each as wide as its folded count's share of the width,
#    and the narrower ones said merged; --inverted puts the root on top,
#    --title sets the title; the output is the same in every run;
#  - off-CPU captures get the blue palette and time units; offwake stacks
#    have the waker's stack above the "--" frame;
#  - in a real browser (chromium headless): the graph renders (the
#    screenshot is not one color), and a URL fragment #search=leaf_a&zoom=
#    PATH, read back with --dump-dom, highlights exactly the leaf_a frames
#    with their share, and zooms into PATH (its callees full width, frames
#    outside hidden).
# The cpuwork part needs BPF (root); without it, or without chromium
# (make deps), those checks are skipped, never passed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$REP" "$MK" "$CW" "$FX/root/fx/fx_pie"
need_cmds xmllint python3

# frames_match NAME SVG FOLDED [MIN_PX]: the SVG's frames are the folded
# prefix tree's frames of at least MIN_PX (0.1) px, with widths and values
# proportional to the folded counts (python3: "ok ..." or "bad ...").
frames_match() {
	python3 - "$2" "$3" "${4:-0.1}" <<'PY' >"$tmp/match.out" 2>&1
import re, sys
svg, folded, min_px = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2], float(sys.argv[3])
tree = {}
total = 0
for line in open(folded, encoding="utf-8"):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    # noncharacters XML cannot hold: the svg shows their bytes as \xNN
    stack = stack.replace("\uffff", "\\xef\\xbf\\xbf").replace("\ufffe", "\\xef\\xbf\\xbe")
    n = int(n)
    total += n
    parts = stack.split(";")
    for i in range(1, len(parts) + 1):
        k = ";".join(parts[:i])
        tree[k] = tree.get(k, 0) + n
m = re.search(r"var C=\{W:([0-9.]+),P:([0-9.]+),FH:([0-9.]+),T:([0-9.]+),B:([0-9.]+),inv:(\d)", svg)
W, P, FH, T, B, inv = float(m[1]), float(m[2]), float(m[3]), float(m[4]), float(m[5]), int(m[6])
def unesc(s):
    return (s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
             .replace("&#39;", "'").replace("&amp;", "&"))
stack, got, vals = [], {}, {}
for g in re.finditer(r'<g n="([^"]*)" v="(\d+)" s="(\d+)"[^>]*><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"', svg):
    name, v, x, y, w = unesc(g[1]), int(g[2]), float(g[4]), float(g[5]), float(g[6])
    d = round((y - T) / FH if inv else (B - y) / FH)
    stack[d:] = [name]
    if d == 0:
        root_v = v
        continue
    got[";".join(stack[1:])] = (x, w)
    vals[";".join(stack[1:])] = v
want = {k: c for k, c in tree.items() if c * W / total >= min_px}
bad = []
if set(got) != set(want):
    bad.append("frames differ: only in svg %s, only in folded %s"
               % (sorted(set(got) - set(want))[:3], sorted(set(want) - set(got))[:3]))
for k in set(got) & set(want):
    w = want[k] * W / total
    if abs(got[k][1] - w) > 0.011 + w * 0.002:
        bad.append("%s: width %.2f, folded %d of %d is %.2f" % (k, got[k][1], want[k], total, w))
    if abs(vals[k] / root_v - want[k] / total) > 0.002:
        bad.append("%s: value %d of %d, folded %d of %d" % (k, vals[k], root_v, want[k], total))
merged = sum(1 for c in tree.values() if c * W / total < min_px)
m = re.search(r"(\d+) frames? narrower than ([0-9.]+) px merged", svg)
if (int(m[1]) if m else 0) != merged:
    bad.append("svg says %s merged, folded has %d narrower frames" % (m[1] if m else 0, merged))
print(("bad " + "; ".join(bad[:5])) if bad else "ok %d frames, %d merged" % (len(got), merged))
PY
	if grep -q '^ok' "$tmp/match.out"; then
		pass "$1: $(cat "$tmp/match.out")"
	else
		fail "$1" "$(cat "$tmp/match.out")"
	fi
}

# xml_ok NAME FILE
xml_ok() {
	if xmllint --noout "$2" 2>"$tmp/xmllint.err"; then
		pass "$1: xmllint accepts it"
	else
		fail "$1: xmllint" "$(head -5 "$tmp/xmllint.err")"
	fi
}

# report NAME ARGS...: stkreport ARGS into $tmp/NAME (stderr $tmp/NAME.err)
report() {
	_n=$1
	shift
	if ! "$REP" "$@" >"$tmp/$_n" 2>"$tmp/$_n.err"; then
		fail "stkreport $*" "$(cat "$tmp/$_n.err")"
		return 1
	fi
}

# ---- crafted captures: hostile names ---------------------------------------
cat >"$tmp/hostile.spec" <<'SPEC'
meta mode profile
kobj [kernel.kallsyms] 0xffffffff81000000 0x1000000
ksym 0xffffffff81003000 0x100 T <script>alert(1)</script>
ksym 0xffffffff81004000 0x100 T a&b"c'd]]>
ksym 0xffffffff81005000 0x100 T esc\x1b[2Jname
ksym 0xffffffff81006000 0x100 T bad\xff\xfe\xef\xbf\xbfutf8
map 100 <img\x1b> fx/fx_pie 0x555555554000
stack 1 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf
stack 2 fx/fx_pie:fx_mid+1
stack 3 fx/fx_pie:fx_root+1
stack 100 0xffffffff81003010 0xffffffff81004010 0xffffffff81005010 0xffffffff81006010
count 100 100 <img\x1b> 1 100 0 0 20000
count 100 100 <img\x1b> 2 -EFAULT 0 0 299
count 100 100 <img\x1b> 3 -EFAULT 0 0 1
SPEC
cat >"$tmp/offwake.spec" <<'SPEC'
meta mode offwake
kobj [kernel.kallsyms] 0xffffffff81000000 0x1000000
ksym 0xffffffff81006000 0x100 T schedule
ksym 0xffffffff81007000 0x100 T try_to_wake_up
map 700 tgt fx/fx_pie 0x555555554000
map 701 wk fx/fx_pie 0x555555554000
stack 1 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf
stack 2 fx/fx_pie:fx_mid+1
stack 100 0xffffffff81006010
stack 101 0xffffffff81007010
offc 700 700 tgt 1 100 701 702 wk 2 101 3 2500000
offc 700 700 tgt 1 100 701 702 wk -EFAULT 101 1 500000
SPEC
# META max_stack_depth 3: a 3-frame stack is as deep as the recorder took,
# so its root is probably cut off.
cat >"$tmp/trunc.spec" <<'SPEC'
meta mode profile
meta max_stack_depth 3
map 100 app fx/fx_pie 0x555555554000
stack 1 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf fx/fx_pie:fx_root>fx_mid
stack 2 fx/fx_pie:fx_leaf+1 fx/fx_pie:fx_mid>fx_leaf
count 100 100 app 1 -EFAULT 0 0 5
count 100 100 app 2 -EFAULT 0 0 5
SPEC
for s in hostile offwake trunc; do
	"$MK" -C "$FX/root" "$tmp/$s.spec" "$tmp/$s.stk" 2>"$tmp/mk.err" ||
		{ fail "mkcapture $s" "$(cat "$tmp/mk.err")"; finish; }
done

report hostile.svg -f svg --sysroot "$FX/root" "$tmp/hostile.stk" && xml_ok "hostile names" "$tmp/hostile.svg"
report hostile.folded -f folded --sysroot "$FX/root" "$tmp/hostile.stk"
frames_match "hostile names: frames vs folded" "$tmp/hostile.svg" "$tmp/hostile.folded"
if grep -qF 'n="&lt;script&gt;alert(1)&lt;/script&gt;"' "$tmp/hostile.svg" &&
   grep -qF 'n="a&amp;b&quot;c&#39;d]]&gt;"' "$tmp/hostile.svg" &&
   grep -qF 'n="esc\x1b[2Jname"' "$tmp/hostile.svg" &&
   grep -qF 'n="bad\xff\xfe\xef\xbf\xbfutf8"' "$tmp/hostile.svg" &&
   grep -qF 'n="&lt;img\x1b&gt;"' "$tmp/hostile.svg" &&
   [ "$(grep -c '<script' "$tmp/hostile.svg")" = 1 ]; then
	pass "hostile names: shown escaped (entities, \\xNN), one <script> element, ours"
else
	fail "hostile names" "$(grep '<g n=' "$tmp/hostile.svg" | head -8)"
fi
bad=$(LC_ALL=C tr -d '\n -~' <"$tmp/hostile.svg" | wc -c)
if [ "$bad" -eq 0 ]; then
	pass "hostile names: no control or non-ASCII byte in the document"
else
	fail "hostile names: $bad raw bytes outside printable ASCII"
fi

report inv.svg -f svg --inverted --title 'My <title> & more' --sysroot "$FX/root" "$tmp/hostile.stk" &&
	xml_ok "--inverted --title" "$tmp/inv.svg"
frames_match "--inverted: frames vs folded" "$tmp/inv.svg" "$tmp/hostile.folded"
if grep -qF '>My &lt;title&gt; &amp; more</text>' "$tmp/inv.svg" && grep -q 'inv:1,' "$tmp/inv.svg"; then
	pass "--title shown escaped; --inverted marked"
else
	fail "--title/--inverted" "$(grep -m2 'id="title"\|var C=' "$tmp/inv.svg")"
fi
# root on top: the "all" frame has the smallest y of all frames
if python3 -c '
import re, sys
ys = [(m[1], float(m[2])) for m in re.finditer(r"<g n=\"([^\"]*)\"[^>]*><rect x=\"[0-9.]+\" y=\"([0-9.]+)\"", open(sys.argv[1]).read())]
sys.exit(not (ys[0][0] == "all" and ys[0][1] == min(y for _, y in ys) and ys[0][1] < max(y for _, y in ys)))' "$tmp/inv.svg"; then
	pass "--inverted: the root is the top frame"
else
	fail "--inverted: the root is not on top"
fi
report hostile_a.svg -f svg -a --sysroot "$FX/root" "$tmp/hostile.stk"
report hostile_a.folded -f folded -a --sysroot "$FX/root" "$tmp/hostile.stk"
frames_match "-a: frames vs folded" "$tmp/hostile_a.svg" "$tmp/hostile_a.folded"
check "-a: kernel frames carry _[k]" grep -qF 'n="esc\x1b[2Jname_[k]"' "$tmp/hostile_a.svg"
report hostile2.svg -f svg --sysroot "$FX/root" "$tmp/hostile.stk"
if cmp -s "$tmp/hostile.svg" "$tmp/hostile2.svg"; then
	pass "deterministic: two runs give the same file"
else
	fail "two runs differ"
fi

report offwake.svg -f svg --sysroot "$FX/root" "$tmp/offwake.stk" && xml_ok "offwake" "$tmp/offwake.svg"
report offwake.folded -f folded --sysroot "$FX/root" "$tmp/offwake.stk"
frames_match "offwake: frames vs folded" "$tmp/offwake.svg" "$tmp/offwake.folded"
if python3 - "$tmp/offwake.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
C = re.search(r"var C=\{W:[0-9.]+,P:[0-9.]+,FH:([0-9.]+),T:[0-9.]+,B:([0-9.]+),inv:0,unit:1,", svg)
FH, B = float(C[1]), float(C[2])
fr = [(m[1], round((B - float(m[3])) / FH), m[4]) for m in
      re.finditer(r'<g n="([^"]*)" v="(\d+)"[^>]*><rect x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="15" fill="#(\w+)"', svg)]
d = {n: (dep, col) for n, dep, col in fr}
ok = d["--"][0] < d["try_to_wake_up"][0] < d["wk"][0] and d["schedule"][0] < d["--"][0]
# blue palette: target frames have more blue than red
r, g, b = (int(d["fx_leaf"][1][i:i + 2], 16) for i in (0, 2, 4))
ok = ok and b > 200 and r < 110 and "Off-Wake Time Flame Graph" in svg
sys.exit(not ok)
PY
then
	pass "offwake: blue palette, time units, waker's stack (wake leaf, then comm) above the -- frame"
else
	fail "offwake layout" "$(grep '<g n=' "$tmp/offwake.svg" | head -12)"
fi

report trunc.svg -f svg --sysroot "$FX/root" "$tmp/trunc.stk" && xml_ok "truncated" "$tmp/trunc.svg"
if python3 - "$tmp/trunc.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
names = [(m[1], m[2]) for m in re.finditer(r'<g n="([^"]*)" v="(\d+)"', svg)]
# preorder: all, app, [truncated] (5) and its stack, then fx_mid (5) directly under app
i = names.index(("[truncated]", "5"))
sys.exit(not (names[i - 1][0] == "app" and names[i + 1] == ("fx_root", "5")
              and ("fx_mid", "5") in names[i + 2:]))
PY
then
	pass "a stack as deep as max_stack_depth stands on a [truncated] marker; a shorter one does not"
else
	fail "[truncated] marker" "$(grep '<g n=' "$tmp/trunc.svg")"
fi

# ---- cpuwork, recorded --------------------------------------------------
cw=
if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/btf/vmlinux ] &&
   "$REC" -q -F 499 -o "$tmp/cw.stk" -- "$CW" 2 >/dev/null 2>"$tmp/rec.err"; then
	cw=$tmp/cw.stk
	report cw.svg -f svg "$cw" && xml_ok "cpuwork" "$tmp/cw.svg"
	report cw.folded -f folded "$cw"
	frames_match "cpuwork: frames vs folded" "$tmp/cw.svg" "$tmp/cw.folded"
	# a minimum width that merges some frames, said so
	report cw_a.svg -f svg -a "$cw"
	report cw_a.folded -f folded -a "$cw"
	frames_match "cpuwork -a: frames vs folded" "$tmp/cw_a.svg" "$tmp/cw_a.folded"
else
	skip "cpuwork recording" "BPF not usable here: $(cat "$tmp/rec.err" 2>/dev/null)"
fi

# ---- in a browser -------------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || true)
chrome() {
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/chrome" "$@" 2>>"$tmp/chrome.err"
}
if [ -z "$CHROME" ]; then
	skip "browser checks" "no chromium (make deps)"
	finish
fi
svg=$tmp/hostile.svg
[ -n "$cw" ] && svg=$tmp/cw.svg
if ! chrome --screenshot="$tmp/shot.png" --window-size=1200,500 "file://$svg" >/dev/null ||
   [ ! -s "$tmp/shot.png" ]; then
	skip "browser checks" "chromium cannot run here: $(tail -3 "$tmp/chrome.err")"
	finish
fi
# PNG decoded by hand (zlib, filters): how many different colors.
colors=$(python3 - "$tmp/shot.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, t = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if t == b"IHDR": hdr = struct.unpack(">IIBBBBB", body)
    if t == b"IDAT": idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
bpp = {2: 3, 6: 4}[ctype]
raw, stride = zlib.decompress(idat), w * bpp
prev, seen, i = bytearray(stride), set(), 0
for y in range(h):
    f, row = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + b) & 255
        elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 4):
        seen.add(bytes(row[x:x + 3]))
    prev = row
print(len(seen))
PY
)
if [ "${colors:-0}" -ge 8 ]; then
	pass "chromium renders it: $colors colors in the screenshot"
else
	fail "chromium screenshot nearly uniform: ${colors:-?} colors"
fi

# The hostile capture in the browser: no element from a name.
chrome --dump-dom "file://$tmp/hostile.svg" >"$tmp/hostile.dom"
if [ "$(grep -o '<script' "$tmp/hostile.dom" | wc -l)" = 1 ] &&
   grep -q '<g n="&lt;script&gt;alert(1)&lt;/script&gt;"' "$tmp/hostile.dom" &&
   ! grep -q '<img' "$tmp/hostile.dom"; then
	pass "chromium: hostile names stay attribute text, one script"
else
	fail "chromium: hostile DOM" "$(grep -o '<script[^>]*>\|<img[^>]*>' "$tmp/hostile.dom" | head -3)"
fi

if [ -z "$cw" ]; then
	skip "search and zoom in chromium" "no cpuwork recording (BPF)"
	finish
fi
# The hottest path to work_b, as folded has it; leaf_a's share of all.
zpath=$(awk '{ c = $NF; sub(/ [0-9]+$/, ""); if (match($0, /^.*;work_b/)) s[substr($0, 1, RLENGTH)] += c }
	END { for (k in s) if (s[k] > best) { best = s[k]; p = k } print p }' "$tmp/cw.folded")
share=$(awk '{ t += $NF; n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ /^leaf_a( |$)/) { a += $NF; break } }
	END { printf "%.2f%%\n", 100 * a / t }' "$tmp/cw.folded")
# the fragment's own '&' and '=' stay, the values are encoded
frag="search=leaf_a&zoom=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$zpath")"
chrome --dump-dom "file://$tmp/cw.svg#$frag" >"$tmp/cw.dom"
if python3 - "$tmp/cw.dom" "$zpath" "$share" <<'PY' >"$tmp/dom.out" 2>&1
import re, sys
dom, zpath, share = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
svg = re.search(r"<svg[^>]*>", dom)[0]
C = re.search(r"var C=\{W:([0-9.]+),P:([0-9.]+),FH:([0-9.]+),T:[0-9.]+,B:([0-9.]+)", dom)
W, P, FH, B = float(C[1]), float(C[2]), float(C[3]), float(C[4])
bad, stack, zd = [], [], zpath.count(";") + 1
for g in re.finditer(r'<g n="([^"]*)" v="\d+" s="\d+"(?: class="([^"]*)")?><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="15" fill="(#\w+)"', dom):
    name, cls, x, y, w, fill = g[1], (g[2] or "").split(), float(g[3]), float(g[4]), float(g[5]), g[6]
    d = round((B - y) / FH)
    stack[d:] = [name]
    path = ";".join(stack[1:])
    inside = path == zpath or path.startswith(zpath + ";")
    above = zpath == path or zpath.startswith(path + ";") or d == 0
    if (name == "leaf_a") != ("m" in cls) or (name == "leaf_a") != (fill == "#e600e6"):
        bad.append("%s: search mark %s fill %s" % (path, cls, fill))
    if inside or above:
        if "h" in cls: bad.append("%s hidden" % path)
        if d <= zd and abs(w - W) > 0.02: bad.append("%s width %.2f, not full" % (path, w))
        # nearly full: a sample in mid_b's own code between two calls
        # takes a sliver of the zoomed width from leaf_b
        if name == "leaf_b" and w < 0.9 * W: bad.append("leaf_b width %.2f of %.2f" % (w, W))
    elif "h" not in cls:
        bad.append("%s outside the zoom, not hidden" % path)
if 'data-zoom="%s"' % zpath.replace("&", "&amp;") not in svg: bad.append("data-zoom: " + svg)
if 'data-matched="%s"' % share not in svg: bad.append("data-matched %s, want %s" % (svg, share))
if "Matched: " + share not in dom: bad.append("no 'Matched: %s'" % share)
print("; ".join(bad[:6]) if bad else "ok")
PY
then
	if [ "$(cat "$tmp/dom.out")" = ok ]; then
		pass "chromium #search=leaf_a: exactly the leaf_a frames highlighted, matched $share"
		pass "chromium #zoom=$zpath: it and its callees full width, frames outside hidden"
	else
		fail "chromium search/zoom" "$(cat "$tmp/dom.out")"
	fi
else
	fail "chromium search/zoom: checker failed" "$(cat "$tmp/dom.out")"
fi

finish
