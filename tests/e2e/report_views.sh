#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The views of issue 26 on a crafted capture whose numbers are known
# (kernel frames named by the capture's own symbols, no binary needed):
#  - -f top: self and total per function (a recursive function counted
#    once per sample in its total), --sort, -n, --by dso/pid/comm;
#  - --callers / --callees trees; --exclude-idle drops pid 0 (swapper/0)
#    and only it; diff -f top: both sides' values and the change;
#  - every filter or slice that keeps nothing, an unknown command or
#    option, perf's habits (stkreport -g -i --stdio, stkrec -a -g -e):
#    one line on stderr, naming the word, with the documented status.
# No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$MK" "$REP" "$REC"

# root -> a -> leaf x6 (pid 100), root -> b -> leaf x3 (pid 100),
# root -> rec -> rec -> rec x2 (pid 200), do_idle x4 (pid 0, swapper/0).
spec() {
	cat <<SPEC
meta mode profile
meta frequency 99
kobj [kernel.kallsyms] 0xffffffff81000000 0x1000000
ksym 0xffffffff81001000 0x100 T root
ksym 0xffffffff81002000 0x100 T a
ksym 0xffffffff81003000 0x100 T b
ksym 0xffffffff81004000 0x100 T leaf
ksym 0xffffffff81005000 0x100 T rec
ksym 0xffffffff81006000 0x100 T do_idle
stack 1 0xffffffff81004010 0xffffffff81002010 0xffffffff81001010
stack 2 0xffffffff81004010 0xffffffff81003010 0xffffffff81001010
stack 3 0xffffffff81005010 0xffffffff81005010 0xffffffff81005010 0xffffffff81001010
stack 4 0xffffffff81006010
count 100 100 app -14 1 0 0 $1
count 100 101 app -14 2 0 0 3
count 200 200 other -14 3 0 0 2
count 0 0 swapper/0 -14 4 0 0 4
SPEC
}
spec 6 | "$MK" - "$tmp/v.stk" || { fail "mkcapture"; finish; }
spec 12 | "$MK" - "$tmp/v2.stk" || { fail "mkcapture v2"; finish; }

# row FILE NAME: the fields of NAME's row (the last field before the module).
row() { awk -v n="$2" '$0 !~ /^#/ && $(NF-1) == n { $NF = ""; $(NF-1) = ""; print; exit }' "$1" | sed 's/ *$//'; }
is() {
	if [ "$2" = "$3" ]; then pass "$1: $3"; else fail "$1" "got '$2', want '$3'"; fi
}

"$REP" -f top "$tmp/v.stk" > "$tmp/top" 2> "$tmp/top.err"
is "top leaf" "$(row "$tmp/top" leaf | tr -s ' ')" "9 60.00% 9 60.00%"
is "top root" "$(row "$tmp/top" root | tr -s ' ')" "0 0.00% 11 73.33%"
is "top rec: recursion once in total" "$(row "$tmp/top" rec | tr -s ' ')" "2 13.33% 2 13.33%"
is "top a" "$(row "$tmp/top" a | tr -s ' ')" "0 0.00% 6 40.00%"
is "top: leaf first (by self)" "$(awk '!/^#/ && !/self%/ { print $(NF-1); exit }' "$tmp/top")" "leaf"
is "top --sort total: root first" \
	"$("$REP" -f top --sort total "$tmp/v.stk" 2>/dev/null | awk '!/^#/ && !/self%/ { print $(NF-1); exit }')" "root"
is "top --sort name: a first" \
	"$("$REP" -f top --sort name "$tmp/v.stk" 2>/dev/null | awk '!/^#/ && !/self%/ { print $(NF-1); exit }')" "a"
is "top -n 2: two rows" "$("$REP" -f top -n 2 "$tmp/v.stk" 2>/dev/null | grep -vc '^#\|self%')" "2"
"$REP" --by dso "$tmp/v.stk" > "$tmp/dso" 2>/dev/null
is "--by dso: [kernel] holds all" "$(awk '$NF == "[kernel]" { print $1, $3 }' "$tmp/dso")" "15 15"
"$REP" --by pid "$tmp/v.stk" > "$tmp/pid" 2>/dev/null
is "--by pid: 100" "$(awk '$(NF-1) == "100" { print $1 }' "$tmp/pid")" "9"
is "--by pid: 0 (swapper/0)" "$(awk '$NF == "swapper/0" { print $1, $(NF-1) }' "$tmp/pid")" "4 0"
"$REP" --by comm "$tmp/v.stk" > "$tmp/comm" 2>/dev/null
is "--by comm: other" "$(awk '$NF == "other" { print $1 }' "$tmp/comm")" "2"

"$REP" --exclude-idle --by pid "$tmp/v.stk" > "$tmp/noidle" 2>/dev/null
is "--exclude-idle: no pid 0" "$(awk '$(NF-1) == "0"' "$tmp/noidle" | wc -l)" "0"
is "--exclude-idle: pid 100's share of 11" "$(awk '$(NF-1) == "100" { print $2 }' "$tmp/noidle")" "81.82%"
"$REP" --exclude-idle -f top "$tmp/v.stk" > "$tmp/noidle.top" 2>/dev/null
is "--exclude-idle: no do_idle" "$(grep -c do_idle "$tmp/noidle.top")" "0"

# Trees: "value|function|column": the function's column grows by 2 a level.
tree_lines() { "$REP" "$@" 2>/dev/null | grep -v '^#' | grep -v ' share ' | sed 's/([^)]*)$//; s/  *$//' | awk '{ print $1 "|" $NF "|" index($0, $NF) }' | tr '\n' ' '; }
got=$(tree_lines --callers leaf "$tmp/v.stk")
is "--callers leaf" "$got" "9|leaf|21 6|a|23 6|root|25 3|b|23 3|root|25 "
got=$(tree_lines --callees root "$tmp/v.stk")
is "--callees root: recursion nested" "$got" "11|root|21 6|a|23 6|leaf|25 3|b|23 3|leaf|25 2|rec|23 2|rec|25 2|rec|27 "
"$REP" --callers nosuch "$tmp/v.stk" > /dev/null 2> "$tmp/err"
rc=$?
is "--callers nosuch: exit 1, one line naming it" "$rc $(wc -l < "$tmp/err") $(grep -c 'named nosuch' "$tmp/err")" "1 1 1"
# ... and leaves no empty -o file behind.
"$REP" --callers nosuch -o "$tmp/nosuch.txt" "$tmp/v.stk" > /dev/null 2> "$tmp/err"
rc=$?
check "--callers nosuch -o FILE: exit 1 ($rc), FILE not left behind" \
	test "$rc" -eq 1 -a ! -e "$tmp/nosuch.txt"

# diff -f top: leaf self 9 of 15 (60%) -> 15 of 21 (71.43%).
"$REP" diff -f top "$tmp/v.stk" "$tmp/v2.stk" > "$tmp/dtop" 2>/dev/null
is "diff -f top leaf" "$(row "$tmp/dtop" leaf | tr -s ' ')" "9 15 +11.43 9 15 +11.43"

# expect STATUS PATTERN ARGS...: one line on stderr matching PATTERN, and STATUS.
expect() {
	_st=$1 _pat=$2
	shift 2
	"$@" > /dev/null 2> "$tmp/err"
	_rc=$?
	if [ "$_rc" = "$_st" ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -qE -- "$_pat" "$tmp/err"; then
		pass "$*: exit $_st, one line: $(cat "$tmp/err")"
	else
		fail "$*" "exit $_rc, stderr: $(cat "$tmp/err")"
	fi
}
expect 1 "no samples match --since 10; the capture holds .*from 0\.0 s to" "$REP" --since 10 "$tmp/v.stk"
expect 1 "no samples match --pid 5; the capture holds pids" "$REP" --pid 5 "$tmp/v.stk"
expect 1 "no samples match --comm swapper/0 --exclude-idle" "$REP" --comm swapper/0 --exclude-idle "$tmp/v.stk"
expect 1 "no samples match --comm zz --since 10" "$REP" -f top --comm zz --since 10 "$tmp/v.stk"
expect 1 "no samples in the slice 10 s" "$REP" info --since 10 "$tmp/v.stk"
expect 2 "unknown command 'infoo' \(did you mean 'info'\?\)" "$REP" infoo "$tmp/v.stk"
expect 2 "unknown command 'top' \(did you mean '-f top'\?\)" "$REP" top "$tmp/v.stk"
expect 2 "unknown option '--bogus'; try 'stkreport --help'" "$REP" --bogus "$tmp/v.stk"
expect 2 "unknown option '--bogus'; try 'stkreport diff --help'" "$REP" diff --bogus "$tmp/v.stk" "$tmp/v.stk"
expect 2 "option '-f' needs a value" "$REP" "$tmp/v.stk" -f
# A long option given a value it does not take is named as typed (getopt's
# optopt is its val: it printed as '-h', '-c', or said unknown).
expect 2 "^stkreport: option '--help' takes no value; try 'stkreport --help'$" "$REP" --help=1
expect 2 "^stkreport: option '--chunks' takes no value; try 'stkreport info --help'$" \
	"$REP" info --chunks=1 "$tmp/v.stk"
expect 2 "^stkreport: option '--inverted' takes no value; try 'stkreport diff --help'$" \
	"$REP" diff --inverted=1 "$tmp/v.stk" "$tmp/v.stk"
expect 2 "^stkreport: unknown option '--bogus'; try" "$REP" --bogus=1 "$tmp/v.stk"
# A command after options: it must come first, not "did you mean 'info'".
expect 2 "^stkreport: the command comes first: 'stkreport info \[options\] FILE.stk'" \
	"$REP" --pid 1 info "$tmp/v.stk"
expect 2 "^stkreport: the command comes first: 'stkreport diff \[options\] BASE.stk NEW.stk'" \
	"$REP" --pid 1 diff "$tmp/v.stk" "$tmp/v.stk"
expect 2 "unknown option '-g': stkreport always shows whole stacks" "$REP" -g "$tmp/v.stk"
expect 2 "unknown option '-i': give the capture as an argument" "$REP" -i "$tmp/v.stk"
expect 2 "unknown option '--stdio': stkreport prints text" "$REP" --stdio "$tmp/v.stk"
expect 2 "unknown option '-a': stkrec always records every CPU" "$REC" -a 1
expect 2 "unknown option '-g': stkrec always records whole stacks" "$REC" -g 1
expect 2 "unknown option '-e': stkrec takes events as words after 'trace'" "$REC" -e cycles 1
expect 2 "-n, --by and --sort are for -f top" "$REP" -f folded --by pid "$tmp/v.stk"
expect 2 "--sort takes self, total or name" "$REP" -f top --sort x "$tmp/v.stk"

finish
