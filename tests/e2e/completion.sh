#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# completion: the bash completion of completion/stkrec and
# completion/stkreport, sourced into bash and called as bash calls it
# (COMP_WORDS, COMP_CWORD; "--opt=value" split at '=' as COMP_WORDBREAKS
# does): the mode word and commands, every option --help lists for each
# mode and command (read from the tool, so a new option is offered at
# once), option values, .stk files and directories where a file is wanted,
# and commands after "--".  make install puts both files where
# bash-completion looks (tests/e2e/install.sh).  No BPF needed.

. "$(dirname "$0")/lib/harness.sh"
need_files "$REC" "$REP"
need_cmds bash

# comp FILE FUNC WORD...: what FUNC offers for the last WORD, one a line,
# sorted (the first WORD is the tool's path, as typed).
comp() {
	_file=$1 _func=$2
	shift 2
	bash -c '. "$1"; f=$2; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		"$f"; printf "%s\n" "${COMPREPLY[@]}"' comp "$top/completion/$_file" "$_func" "$@" |
		sed '/^$/d' | sort
}
rec() { comp stkrec _stkrec "$REC" "$@"; }
rep() { comp stkreport _stkreport "$REP" "$@"; }
# offers WHAT WANT GOT: WANT (words) is exactly GOT (lines).
offers() {
	_want=$(printf '%s\n' $2 | sort)
	if [ "$_want" = "$3" ]; then pass "$1"; else
		fail "$1" "want '$(echo $_want)', got '$(echo $3)'"; fi
}
# offers_all WHAT HELP_OPTS GOT: every option of HELP_OPTS (lines) is in GOT.
offers_all() {
	_miss=$(printf '%s\n' "$2" | sed 's/=$//' | while read -r o; do
		printf '%s\n' "$3" | sed 's/=$//' | grep -qx -- "$o" || echo "$o"; done)
	_n=$(printf '%s\n' "$2" | grep -c .)
	if [ -z "$_miss" ] && [ "$_n" -ge 2 ]; then pass "$1 ($_n options)"; else
		fail "$1" "missing: $(echo $_miss) ($_n options in --help)"; fi
}
# help_opts CMD...: the options of CMD --help's option lines.
help_opts() {
	"$@" --help | grep -E '^ {2,6}-' | sed 's/^ *//; s/   .*//' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed 's/^[ ,]*//' | sort -u
}

# stkrec
offers "stkrec: the mode words" "profile offcpu offwake" "$(rec '')"
offers "stkrec: o -> offcpu offwake" "offcpu offwake" "$(rec o)"
offers_all "stkrec -: every option of stkrec --help" "$(help_opts "$REC")" "$(rec -)"
offers_all "stkrec offcpu -: every option of stkrec offcpu --help" \
	"$(help_opts "$REC" offcpu)" "$(rec offcpu -)"
offers_all "stkrec offwake -: every option of stkrec offwake --help" \
	"$(help_opts "$REC" offwake)" "$(rec offwake -)"
check "stkrec -: no offcpu option in profile mode" sh -c '! printf "%s\n" "$1" | grep -qx -- --state' \
	- "$(rec -)"
offers "stkrec --kallsyms=" "covering full" "$(rec --kallsyms =)"
offers "stkrec --embed-symbols=n" "none" "$(rec --embed-symbols = n)"
offers "stkrec --unwind=" "auto dwarf fp" "$(rec offwake --unwind =)"
offers "stkrec --unwind=d (one word)" "--unwind=dwarf" "$(rec --unwind=d)"
mkdir -p "$tmp/d/sub"
: > "$tmp/d/a.stk"
: > "$tmp/d/b.txt"
offers "stkrec -o: .stk files and directories" "$tmp/d/a.stk $tmp/d/sub" "$(rec -o "$tmp/d/")"
check "stkrec -p: offers this shell's pid" sh -c 'printf "%s\n" "$1" | grep -qx "$2"' - \
	"$(rec -p "$$")" "$$"
check "stkrec -- CMD: commands" sh -c 'printf "%s\n" "$1" | grep -qx sh' - "$(rec -q -- sh)"
offers "stkrec -F: no guess at a number" "" "$(rec -F '')"

# stkreport
offers "stkreport: .stk files, directories and the commands" \
	"$tmp/d/a.stk $tmp/d/sub" "$(rep "$tmp/d/")"
offers "stkreport i -> info" "info" "$(rep i)"
offers_all "stkreport -: every option of stkreport --help" "$(help_opts "$REP")" "$(rep -)"
for c in info diff merge; do
	offers_all "stkreport $c -: every option of stkreport $c --help" \
		"$(help_opts "$REP" $c)" "$(rep $c -)"
done
check "stkreport info -: not the report's options" sh -c '! printf "%s\n" "$1" | grep -qx -- --format' \
	- "$(rep info -)"
offers "stkreport -f" "text folded pprof svg top" "$(rep -f '')"
offers "stkreport diff -f" "text folded svg top" "$(rep diff -f '')"
offers "stkreport --by" "func dso pid tid comm" "$(rep --by '')"
offers "stkreport --sort" "self total name" "$(rep --sort '')"
offers "stkreport diff --normalize" "samples time" "$(rep diff --normalize '')"
offers "stkreport --python=" "yes no" "$(rep --python =)"
offers "stkreport --python n" "no" "$(rep --python n)"
offers "stkreport --sysroot: directories" "$tmp/d/sub" "$(rep --sysroot "$tmp/d/")"
offers "stkreport diff A: .stk files" "$tmp/d/a.stk $tmp/d/sub" "$(rep diff x.stk "$tmp/d/")"
offers "stkreport merge -o: .stk files" "$tmp/d/a.stk $tmp/d/sub" "$(rep merge -o "$tmp/d/")"

# Loaded by bash-completion under the tool's name, each file registers it.
check "completion/stkrec registers _stkrec for stkrec" \
	bash -c '. "$1"; complete -p stkrec | grep -q _stkrec' - "$top/completion/stkrec"
check "completion/stkreport registers _stkreport for stkreport" \
	bash -c '. "$1"; complete -p stkreport | grep -q _stkreport' - "$top/completion/stkreport"
finish
