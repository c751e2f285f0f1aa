#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make bench, last part: the soak (issue 22).  stkrec records every CPU for
# SOAK_SECONDS (default 600) at SOAK_HZ (default 99) while the machine runs
# a busy mix, all of it started here and stopped by pid (its process group
# for the loops) at the end:
#  - a parallel C build: a generated project (40 files x 60 static
#    functions, in $O/bench/soak/proj), "make clean; make -j2 all" in a loop;
#  - a python3 service: /usr/bin/python3 alternating CPU work and short sleeps;
#  - node --perf-basic-prof compiling new functions all the time (its
#    /tmp/perf-PID.map grows), when node is installed;
#  - an exec loop: sh running /bin/true;
#  - hostile processes, as nobody, from a 711 directory: cfiload running
#    in SOAK_CFI_COPIES (default 6) copies of the CFI bomb
#    (tests/tools/cfibomb.S), each under a new random build-id and owned by
#    nobody (as an attacker's own files are), started
#    again every SOAK_CFI_EVERY (default 30) s; and mapgrow
#    (tests/tools/mapgrow.c), whose SOAK_MAP_MB (default 48) MB perf map
#    gains a line at a new code address every 0.5 s.
# On the same run: perf record -g -a at the same frequency (started 1 s
# after stkrec, since two recorders started at the same moment lose
# samples), and perf record --call-graph dwarf -a for SOAK_DWARF_SECONDS
# (default 20) in the middle.  Both with --no-buildid: perf 6.1 aborted in
# its build-id pass at exit on this mix (util/build-id.c:1010 assertions,
# then "buffer overflow detected"), leaving files it cannot read; so perf's
# CPU here is its recording alone, without that pass.  Printed:
#  - recorder CPU (user+sys, time(1)) of stkrec against perf -g -a, with
#    stkrec's threads' shares (/proc/PID/task), and the file sizes;
#  - stkrec's RSS, read every 10 s (/proc/PID/status): the peak (time(1)'s
#    maximum), at 1 min and at the end, and one value per minute;
#  - flush punctuality, from the capture's CNTS chunks (t0/t1, SPEC.md):
#    the longest gap between consecutive flushes, the longest interval one
#    chunk covers, and how many flush intervals have no chunk of their own
#    (a gap of n intervals between two flushes leaves n - 1);
#  - when DURATION ended the recording, against its launch;
#  - SIGINT latency, from two more recordings under the same mix: one sent
#    SIGINT after SOAK_SIGNAL_SECONDS (default 30), one right after fresh
#    CFI bomb copies were loaded (once stkrec holds one open, when it does
#    within 10 s);
#  - per command name, the share of samples with user frames whose user
#    stack is rooted (reaches _start, __libc_start_main, _dl_start,
#    start_thread or clone, and carries no "[unwind stopped" marker):
#    stkrec in the perf dwarf window (stkreport --since/--until, whole
#    flush intervals) and over the whole run, perf --call-graph dwarf in
#    its window (perf script: perf report asserts on some recordings with
#    perf 6.1, and perf script too on some, then it says so);
#  - STAT lines of interest (deferred unwinding, table errors and budget,
#    the worker, perf maps, losses).
# The recordings and perf's files stay in $O/bench/soak for a closer look.
# Needs root, perf, /usr/bin/time, gcc, make, /usr/bin/python3, setpriv and
# a user nobody.  Environment: O, PERF, SOAK_SECONDS, SOAK_HZ,
# SOAK_DWARF_SECONDS, SOAK_SIGNAL_SECONDS, SOAK_CFI_COPIES, SOAK_CFI_EVERY,
# SOAK_MAP_MB.
# Each piece of the mix and each recorder runs in a session of its own
# (setsid): with the kernel's autogroup scheduling
# (kernel.sched_autogroup_enabled) a session shares one CPU share, so a
# recorder in the script's session would share its share with the
# python3, node and mapgrow started from there, as a recorder started from
# its own terminal or as a service does not.

O=${O:-build}
REC=$O/stkrec
REP=$O/stkreport
DUMP=$O/tests/tools/stkdump
BOMB=$O/tests/tools/libcfibomb.so
CFILOAD=$O/tests/tools/cfiload
SETID=$O/tests/tools/setbuildid
MAPGROW=$O/tests/tools/mapgrow
PERF=${PERF:-perf}
SOAK_S=${SOAK_SECONDS:-600}
HZ=${SOAK_HZ:-99}
DW_S=${SOAK_DWARF_SECONDS:-20}
SIG_S=${SOAK_SIGNAL_SECONDS:-30}
CFI_N=${SOAK_CFI_COPIES:-6}
CFI_EVERY=${SOAK_CFI_EVERY:-30}
MAP_MB=${SOAK_MAP_MB:-48}
PY=/usr/bin/python3
# The command names whose rooted share is printed.
COMMS="cc1 as gcc collect2 ld make sh python3 node true cfiload mapgrow"

die() {
	echo "soak: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (BPF, system-wide perf)"
for f in "$REC" "$REP" "$DUMP" "$BOMB" "$CFILOAD" "$SETID" "$MAPGROW"; do
	[ -x "$f" ] || [ -f "$f" ] || die "$f missing; run make bench (or make $f)"
done
command -v "$PERF" > /dev/null || die "perf not found (apt-get install linux-perf)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
[ -x "$PY" ] || die "$PY not found"
for c in gcc make setpriv setsid od; do
	command -v $c > /dev/null || die "$c not found"
done
id nobody > /dev/null 2>&1 || die "needs a user nobody"
[ "$SOAK_S" -ge 30 ] 2>/dev/null || die "SOAK_SECONDS must be at least 30"
[ $((DW_S * 3)) -le "$SOAK_S" ] || DW_S=$((SOAK_S / 3))
NODE=$(command -v node)

work=$O/bench/soak
mkdir -p "$work" || die "cannot create $work"
work=$(cd "$work" && pwd)
rm -f "$work"/*.stk "$work"/*.data "$work"/*.time "$work"/*.txt "$work"/*.err "$work"/isolate-*-v8.log
hostile=$(mktemp -d) || die "mktemp failed"
chmod 711 "$hostile"
NOBODY="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"

groups=	# process groups of the loops (setsid: the group's id is the leader's pid)
pids=	# single processes of the mix
maps=	# perf maps the mix writes
recs=	# recorders running
sampler=
cleanup() {
	for p in $recs; do kill -INT "$p" 2>/dev/null; done
	for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
	for p in $pids $sampler; do kill -TERM "$p" 2>/dev/null; done
	sleep 1
	for p in $recs; do kill -KILL "$p" 2>/dev/null; done
	for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	for m in $maps; do rm -f "$m"; done
	rm -rf "$hostile"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# group SCRIPT ARGS...: run sh SCRIPT in a process group of its own.
group() {
	setsid sh "$@" < /dev/null > /dev/null 2>&1 &
	groups="$groups $!"
}

now_ns() {
	date +%s%N
}

# ---- the mix -----------------------------------------------------------------

# The C project: 40 files of 60 static functions each, calling one another.
proj=$work/proj
if [ ! -f "$proj/Makefile" ]; then
	mkdir -p "$proj"
	awk -v dir="$proj" 'BEGIN {
		for (f = 0; f < 40; f++) {
			out = sprintf("%s/f%02d.c", dir, f)
			for (i = 0; i < 60; i++) {
				printf "static int f%d_%d(int x)\n{\n\tint s = x;\n\n", f, i > out
				printf "\tfor (int k = 0; k < x %% %d + 3; k++)\n", i + 7 > out
				printf "\t\ts = (s * %d) ^ (s >> %d) ^ k;\n", 2 * i + 3, i % 13 + 1 > out
				if (i)
					printf "\treturn s + f%d_%d(s & 15);\n}\n\n", f, i - 1 > out
				else
					printf "\treturn s;\n}\n\n" > out
			}
			printf "int f%d(int x)\n{\n\treturn f%d_59(x);\n}\n", f, f > out
			close(out)
		}
		out = dir "/main.c"
		for (f = 0; f < 40; f++)
			printf "int f%d(int x);\n", f > out
		printf "\nint main(int argc, char **argv)\n{\n\tint s = argc;\n\n\t(void)argv;\n" > out
		for (f = 0; f < 40; f++)
			printf "\ts += f%d(s);\n", f > out
		printf "\treturn s & 1;\n}\n" > out
		close(out)
	}'
	printf 'CC = gcc\nCFLAGS = -O2 -g\nOBJS = $(patsubst %%.c,%%.o,$(wildcard *.c))\n\nall: prog\nprog: $(OBJS)\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\nclean:\n\trm -f *.o prog\n' \
		> "$proj/Makefile"
fi
cat > "$work/build-loop.sh" << EOF
cd "$proj" || exit 1
while :; do
	make -s clean
	make -s -j2 all
done
EOF
cat > "$work/exec-loop.sh" << 'EOF'
while :; do
	/bin/true
done
EOF
# bomb-loop.sh DIR N EVERY: as nobody, cfiload in N fresh copies of the
# bomb (each its own random build-id), again every EVERY seconds, the
# previous loader stopped and its copies removed.
cat > "$work/bomb-loop.sh" << EOF
n=0
old=
while :; do
	n=\$((n + 1))
	d=$hostile/cfi\$n
	mkdir "\$d"
	set --
	i=0
	while [ \$i -lt $CFI_N ]; do
		i=\$((i + 1))
		cp "$BOMB" "\$d/c\$i.so"
		"$SETID" "\$d/c\$i.so" "\$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')"
		chmod 755 "\$d/c\$i.so"
		chown nobody "\$d/c\$i.so"
		set -- "\$@" "\$d/c\$i.so"
	done
	$NOBODY "$hostile/cfiload" "\$@" > /dev/null 2>&1 &
	new=\$!
	if [ -n "\$old" ]; then
		kill "\$old"
		wait "\$old"
		rm -rf "\$olddir"
	fi
	old=\$new
	olddir=\$d
	sleep $CFI_EVERY
done
EOF
cat > "$work/service.py" << 'EOF'
# A small service: requests of CPU work (JSON, compression, sorting,
# hashing) with short pauses between them.
import hashlib, json, random, time, zlib

rng = random.Random(1)
while True:
    doc = [{"id": i, "name": "item%d" % rng.randrange(10**6), "v": rng.random()} for i in range(300)]
    blob = json.dumps(doc).encode()
    z = zlib.compress(blob)
    back = json.loads(zlib.decompress(z))
    back.sort(key=lambda d: d["name"])
    hashlib.sha256(blob).hexdigest()
    time.sleep(0.005)
EOF
cat > "$work/jit.js" << 'EOF'
// A service that keeps compiling: new functions all the time, each called
// until V8 tiers it up, with short pauses.
let n = 0;
function batch() {
	const end = Date.now() + 40;
	while (Date.now() < end) {
		const f = new Function('a', 'let s = ' + n + '; for (let j = 0; j < a; j++) s = (s * 31 + j) | 0; return s;');
		for (let k = 0; k < 400; k++)
			f(200);
		n++;
	}
	setTimeout(batch, 10);
}
batch();
EOF

cp "$CFILOAD" "$MAPGROW" "$hostile/" && chmod 755 "$hostile/cfiload" "$hostile/mapgrow" ||
	die "cannot copy the hostile tools to $hostile"

group "$work/build-loop.sh"
setsid "$PY" "$work/service.py" &
pids="$pids $!"
if [ -n "$NODE" ]; then
	# In $work: V8 leaves an isolate-*-v8.log where it runs.
	(cd "$work" && exec setsid "$NODE" --perf-basic-prof "$work/jit.js") &
	pids="$pids $!"
	maps="$maps /tmp/perf-$!.map"
	mix_node="node --perf-basic-prof (new functions all the time)"
else
	mix_node="no node (not installed)"
fi
group "$work/exec-loop.sh"
group "$work/bomb-loop.sh"
# shellcheck disable=SC2086
setsid $NOBODY "$hostile/mapgrow" "$MAP_MB" > "$hostile/mapgrow.out" 2>&1 &
mg=$!
pids="$pids $mg"
maps="$maps /tmp/perf-$mg.map"
i=0
until [ -s "$hostile/mapgrow.out" ]; do
	kill -0 "$mg" 2>/dev/null || die "mapgrow failed: $(cat "$hostile/mapgrow.out")"
	i=$((i + 1))
	[ $i -gt 1200 ] && die "mapgrow wrote no map in 120 s"
	sleep 0.1
done
sleep 5 # the loops under way
for g in $groups; do
	[ "$(ps -o pgid= -p "$g" | tr -d ' ')" = "$g" ] || die "setsid forked: pid $g leads no group"
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the soak ------------------------------------------------------------------

clk=$(getconf CLK_TCK)
# sample PID T0_NS: every 10 s until PID ends, "ms_since_T0 VmRSS_kB
# VmHWM_kB cpu_ticks" to rss.txt, and each thread's "tid ticks" to
# threads.txt.
sample() {
	while kill -0 "$1" 2>/dev/null; do
		_l=$(awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r + 0, h + 0 }' "/proc/$1/status" 2>/dev/null)
		_c=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null)
		[ -n "$_c" ] && echo "$((($(now_ns) - $2) / 1000000)) $_l $_c" >> "$work/rss.txt"
		for _t in /proc/"$1"/task/*; do
			echo "${_t##*/} $(awk '{ print $14 + $15 }' "$_t/stat" 2>/dev/null)"
		done >> "$work/threads.txt" 2>/dev/null
		sleep 10
	done
}

# child_of PID: PID's only child (time(1)'s recorder), waiting for it.
child_of() {
	_i=0
	until _c=$(pgrep -P "$1"); do
		_i=$((_i + 1))
		[ $_i -gt 100 ] && return 1
		sleep 0.05
	done
	echo "$_c"
}

echo
echo "soak (issue 22): $SOAK_S s, every CPU at $HZ Hz, $(nproc) CPUs, load average $load0 at the start"
echo "  mix: make -j2 of 40 files x 60 functions in a loop; python3 service; $mix_node;"
echo "       exec loop (/bin/true); as nobody: cfiload in $CFI_N CFI-bomb copies under new build-ids every $CFI_EVERY s,"
echo "       mapgrow ($MAP_MB MB perf map, a line at a new code address every 0.5 s)"

t0=$(now_ns)
/usr/bin/time -f '%e %U %S %M' -o "$work/stkrec.time" \
	setsid "$REC" -q -F "$HZ" -o "$work/soak.stk" "$SOAK_S" 2> "$work/stkrec.err" &
st=$!
sr=$(child_of "$st") || die "stkrec did not start"
recs=$sr
sample "$sr" "$t0" &
sampler=$!
sleep 1
/usr/bin/time -f '%e %U %S %M' -o "$work/perf-g.time" \
	setsid "$PERF" record -q -B -F "$HZ" -g -a -o "$work/perf-g.data" -- sleep "$SOAK_S" > "$work/perf-g.err" 2>&1 &
pt=$!
pr=$(child_of "$pt") || die "perf did not start"
recs="$recs $pr"
# perf --call-graph dwarf in the middle of the run.
sleep $(((SOAK_S - DW_S) / 2 - 1))
dw0=$(now_ns)
setsid "$PERF" record -q -B -F "$HZ" --call-graph dwarf -a -o "$work/perf-dwarf.data" -- sleep "$DW_S" \
	> "$work/perf-dwarf.err" 2>&1
dw_rc=$?
dw1=$(now_ns)
wait "$st"
st_rc=$?
wait "$pt"
pt_rc=$?
recs=
kill "$sampler" 2>/dev/null
sampler=

# ---- SIGINT latency, the mix still running ---------------------------------------

# sigrun NAME WAIT_S BOMB: record into NAME.stk; once sampling, wait
# WAIT_S s; with BOMB, load fresh bomb copies as nobody and wait (at most
# 10 s) until stkrec holds one open; then SIGINT.  Sets sig_ms (SIGINT to
# exit), sig_rc and sig_held (yes when stkrec held a copy at the signal).
sigrun() {
	rm -f "$work/$1.stk"
	setsid "$REC" -q -F "$HZ" -o "$work/$1.stk" 2> "$work/$1.err" &
	_r=$!
	recs=$_r
	_i=0
	until [ -e "$work/$1.stk" ] || ! kill -0 $_r 2>/dev/null || [ $_i -gt 1200 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	sleep "$2"
	sig_held=-
	_l=
	if [ "$3" = bomb ]; then
		_d=$hostile/sig
		mkdir -p "$_d"
		set --
		_k=0
		while [ $_k -lt "$CFI_N" ]; do
			_k=$((_k + 1))
			cp "$BOMB" "$_d/c$_k.so"
			"$SETID" "$_d/c$_k.so" "$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')"
			chmod 755 "$_d/c$_k.so"
			chown nobody "$_d/c$_k.so"
			set -- "$@" "$_d/c$_k.so"
		done
		$NOBODY "$hostile/cfiload" "$@" > /dev/null 2>&1 &
		_l=$!
		pids="$pids $_l"
		sig_held=no
		_i=0
		while [ $_i -lt 1000 ] && [ $sig_held = no ] && kill -0 $_r 2>/dev/null; do
			for _f in /proc/$_r/task/*/fd/*; do
				case $(readlink "$_f" 2>/dev/null) in
				"$_d"/c*.so) sig_held=yes ;;
				esac
			done
			[ $sig_held = no ] && sleep 0.01
			_i=$((_i + 1))
		done
	fi
	_a=$(now_ns)
	kill -INT $_r
	wait $_r
	sig_rc=$?
	sig_ms=$((($(now_ns) - _a) / 1000000))
	recs=
	if [ -n "$_l" ]; then
		kill "$_l" 2>/dev/null
		wait "$_l" 2>/dev/null
	fi
}
sigrun sig "$SIG_S" plain
sigp_ms=$sig_ms sigp_rc=$sig_rc
sigrun sigbomb 5 bomb
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the mix stops -----------------------------------------------------------------

for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
for p in $pids; do kill -TERM "$p" 2>/dev/null; done
for g in $groups; do wait "$g" 2>/dev/null; done
for p in $pids; do wait "$p" 2>/dev/null; done
sleep 1
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
for p in $pids; do kill -KILL "$p" 2>/dev/null; done
for m in $maps; do rm -f "$m"; done
groups=
pids=
maps=

# ---- figures -------------------------------------------------------------------------

# cpu_ms FILE: user+sys ms of time(1)'s last line.
cpu_ms() {
	tail -1 "$1" | awk '{ printf "%d\n", ($2 + $3) * 1000 }'
}
stat_of() {
	"$REP" info "$1" 2>/dev/null | awk -v k="$2" '$1 == "stat" && $2 == k":" { v = $3 } END { print v + 0 }'
}
meta_of() {
	"$REP" info "$1" 2>/dev/null | awk -v k="$2" '$1 == "meta" && $2 == k":" { print $3; exit }'
}

[ "$pt_rc" = 0 ] || echo "  perf -g -a failed (exit $pt_rc): $(grep -v '^assertion failed' "$work/perf-g.err" | tail -1)"
[ "$dw_rc" = 0 ] || echo "  perf --call-graph dwarf failed (exit $dw_rc): $(grep -v '^assertion failed' "$work/perf-dwarf.err" | tail -1)"
sc=$(cpu_ms "$work/stkrec.time")
pc=$(cpu_ms "$work/perf-g.time")
ss=$(stat -c %s "$work/soak.stk" 2>/dev/null || echo 0)
ps=$(stat -c %s "$work/perf-g.data" 2>/dev/null || echo 0)
threads=$(awk -v clk="$clk" -v main="$sr" 'NF == 2 && $2 > t[$1] { t[$1] = $2 }
	END { for (k in t) { if (k == main) m = t[k]; else { o += t[k]; n++ } }
		printf "main thread %.1f s, %d other thread(s) %.1f s", m / clk, n, o / clk }' "$work/threads.txt" 2>/dev/null)
awk -v sc="$sc" -v pc="$pc" -v ss="$ss" -v ps="$ps" -v th="$threads" 'BEGIN {
	printf "  recorder CPU:   stkrec %8.3f s   perf -g -a %8.3f s   ratio %.3f   (stkrec threads, read every 10 s: %s)\n",
		sc / 1000, pc / 1000, pc ? sc / pc : 0, th
	printf "  file size:      stkrec %8.1f MiB perf -g -a %8.1f MiB ratio %.3f\n", ss / 1048576, ps / 1048576, ps ? ss / ps : 0
}'
tail -1 "$work/stkrec.time" | awk -v pm="$(tail -1 "$work/perf-g.time" | awk '{ print $4 }')" \
	-v f="$work/rss.txt" 'BEGIN {
	while ((getline l < f) > 0) {
		split(l, v, " ")
		n++; ms[n] = v[1]; rss[n] = v[2]; hwm[n] = v[3]
	}
}
{
	at1 = 1
	for (i = 1; i <= n; i++)
		if (ms[i] <= 60000 + 5000)
			at1 = i
	printf "  RSS:            peak %.1f MiB (time(1)); %.1f MiB at %.0f s, %.1f MiB at %.0f s (the last reading); perf -g -a peak %.1f MiB\n",
		$4 / 1024, rss[at1] / 1024, ms[at1] / 1000, rss[n] / 1024, ms[n] / 1000, pm / 1024
	line = ""
	for (i = 1; i <= n; i++)
		if (i == 1 || int(ms[i] / 60000) != int(ms[i - 1] / 60000))
			line = line sprintf(" %.1f", rss[i] / 1024)
	printf "  RSS by minute:  %s MiB (the first reading of each minute)\n", line
}'

# Flushes: the CNTS chunks' intervals, one per flush (chunks of one flush
# share an end; those of images an exec replaced may start earlier).
fi_ns=$(meta_of "$work/soak.stk" flush_interval_ns)
"$DUMP" "$work/soak.stk" 2>/dev/null | awk -F'\t' '$1 == "CHUNK" && $3 == "CNTS" { print $4, $5 }' |
	sort -n -k2 > "$work/cnts.txt"
# A gap of n intervals between two flushes leaves n - 1 intervals without
# a chunk of their own (n: the gap in intervals, rounded up from .7 on: a
# flush may come a little late, and the next one early).
awk -v fi="${fi_ns:-1000000000}" '
	!seen[$2]++ { n++; t1[n] = $2 }
	{ if (!start || $1 < start) start = $1; if ($2 - $1 > span) span = $2 - $1 }
	END {
		prev = start
		for (i = 1; i <= n; i++) {
			g = t1[i] - prev
			if (g > gap) gap = g
			if (g > 1.5 * fi) late++
			k = int(g / fi + 0.3)
			if (k > 1) miss += k - 1
			prev = t1[i]
		}
		printf "  flushes:        %d counts chunk ends over %.0f s (flush interval %.0f s): %d intervals without a chunk of their own\n",
			n, n ? (t1[n] - start) / 1e9 : 0, fi / 1e9, miss
		printf "                  longest gap between flushes %.2f s, %d gaps over 1.5 intervals; longest interval one counts chunk covers %.2f s\n",
			gap / 1e9, late, span / 1e9
	}' "$work/cnts.txt"
awk -v t="$(tail -1 "$work/stkrec.time" | awk '{ print $1 }')" -v s="$SOAK_S" -v rc="$st_rc" \
	-v why="$(meta_of "$work/soak.stk" end_reason)" -v d="$(meta_of "$work/soak.stk" duration_ns)" \
	-v setup="$(meta_of "$work/soak.stk" setup_ns)" 'BEGIN {
	printf "  end:            DURATION %d: stkrec ran %.1f s from its launch (setup %.2f s, META duration %.2f s, end_reason %s), exit %d\n",
		s, t, setup / 1e9, d / 1e9, why, rc
}'
echo "  SIGINT latency: $sigp_ms ms after $SIG_S s (exit $sigp_rc); $sig_ms ms right after $CFI_N fresh CFI-bomb copies were loaded (stkrec holding one open: $sig_held; exit $sig_rc)"

# ---- rooted share per command name ---------------------------------------------------
ROOT='^(_start|_dl_start|_dl_start_user|__libc_start_main.*|__libc_start_call_main|start_thread|clone|clone3|__clone|__clone3)$'

# rooted_stk [stkreport options]: "comm samples_with_user_frames rooted" per comm.
rooted_stk() {
	"$REP" -f folded -a "$@" "$work/soak.stk" 2> /dev/null | awk -v root="$ROOT" '{
		n = $NF
		sub(/ [0-9]+$/, "")
		k = split($0, f, ";")
		user = 0; r = 0; stop = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/)
				continue
			user = 1
			if (f[i] ~ /^\[unwind stopped/)
				stop = 1
			if (f[i] ~ root)
				r = 1
		}
		if (!user)
			next
		tot[f[1]] += n
		if (r && !stop)
			ok[f[1]] += n
	}
	END { for (c in tot) print c, tot[c], ok[c] + 0 }'
}
# rooted_perf: the same from perf script of the dwarf window.
# perf script's exit status goes to perf-script.rc (perf 6.1 aborted on
# some recordings of this mix after a part of them: util/build-id.c:1010).
rooted_perf() {
	{
		"$PERF" script -i "$work/perf-dwarf.data" --comms "$(echo "$COMMS" | tr ' ' ',')" \
			-F comm,ip,sym,dso 2> "$work/perf-script.err"
		echo $? > "$work/perf-script.rc"
	} | awk -v root="$ROOT" '
	function done() {
		if (comm != "" && user) {
			tot[comm]++
			if (r)
				ok[comm]++
		}
		comm = ""
	}
	/^[^ \t]/ { done(); comm = $1; user = 0; r = 0; next }
	/^[ \t]+[0-9a-f]+ / {
		if ($NF == "([kernel.kallsyms])")
			next
		user = 1
		s = $2
		sub(/\+0x[0-9a-f]+$/, "", s)
		if (s ~ root)
			r = 1
		next
	}
	/^$/ { done() }
	END { done(); for (c in tot) print c, tot[c], ok[c] + 0 }'
}

wall0=$(meta_of "$work/soak.stk" wall_start_ns)
since=$(awk -v a="$dw0" -v w="$wall0" 'BEGIN { printf "%.3f\n", (a - w) / 1e9 }')
until=$(awk -v b="$dw1" -v w="$wall0" 'BEGIN { printf "%.3f\n", (b - w) / 1e9 }')
rooted_stk --since "$since" --until "$until" > "$work/rooted-stk-window.txt"
rooted_stk > "$work/rooted-stk-all.txt"
rooted_perf > "$work/rooted-perf.txt" 2> /dev/null
echo "  rooted (samples with user frames whose user stack reaches _start, __libc_start_main, _dl_start,"
echo "  start_thread or clone without an [unwind stopped] marker), per command name; perf --call-graph dwarf"
echo "  for $DW_S s from $since s, stkrec in the flush intervals of that window and over the whole run:"
printf '    %-10s %17s %17s %19s\n' comm "stkrec (window)" "perf dwarf" "stkrec (whole run)"
for c in $COMMS; do
	awk -v c="$c" -v sw="$work/rooted-stk-window.txt" -v pd="$work/rooted-perf.txt" \
		-v sa="$work/rooted-stk-all.txt" '
	function cell(f,   l, v, s) {
		s = sprintf("%17s", "-")
		while ((getline l < f) > 0) {
			split(l, v, " ")
			if (v[1] == c)
				s = sprintf("%7d %7.1f %%", v[2], 100 * v[3] / v[2])
		}
		close(f)
		return s
	}
	BEGIN { printf "    %-10s %17s %17s %19s\n", c, cell(sw), cell(pd), cell(sa) }'
done
awk -v c="$COMMS" 'BEGIN { n = split(c, v, " "); for (i = 1; i <= n; i++) want[v[i]] = 1 }
	FILENAME ~ /window/ && want[$1] { sw += $2; swr += $3 }
	FILENAME ~ /perf/ && want[$1] { pd += $2; pdr += $3 }
	FILENAME ~ /all/ && want[$1] { sa += $2; sar += $3 }
	END {
		printf "    %-10s %7d %7.1f %% %7d %7.1f %% %9d %7.1f %%\n", "all these", sw, sw ? 100 * swr / sw : 0,
			pd, pd ? 100 * pdr / pd : 0, sa, sa ? 100 * sar / sa : 0
	}' "$work/rooted-stk-window.txt" "$work/rooted-perf.txt" "$work/rooted-stk-all.txt"

rc=$(cat "$work/perf-script.rc" 2>/dev/null)
[ "$rc" = 0 ] || echo "    perf script failed (exit $rc: $(grep -v '^assertion failed' "$work/perf-script.err" | tail -1)), $(grep -c '^assertion failed' "$work/perf-script.err") assertions: perf's column holds the samples it printed before"

# ---- STAT -------------------------------------------------------------------------
echo "  STAT (stkrec, the soak):"
"$REP" info "$work/soak.stk" 2>/dev/null | awk '$1 == "stat" {
	k = $2; sub(/:$/, "", k)
	if (k ~ /^(samples|flushes|unwind_stacks|unwind_deferred.*|unwind_defer_lost|unwind_table_err_.*|unwind_tables(_built|_evicted|_reloaded|_cached|_queued)?|unwind_bytes|unwind_build_ns|unwind_fallback_.*|unwind_mappings_pending|unwind_table_pending|worker_.*|perf_map_.*|esym_binar.*|.*budget.*|.*memory.*|.*_lost|.*_full|stack_ring_skipped|maps_err_.*)$/)
		line = line sprintf(" %s=%s", k, $3)
	if (length(line) > 100) { print "   " line; line = "" }
}
END { if (line != "") print "   " line }'
echo "  load average at the end $load1; files in $work"
