#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Regenerate the seed corpus of the reader fuzz target, tests/fuzz/corpus/reader/:
# a few small valid captures, damaged variants of them, and one input per
# payload decoder (a type byte, then a payload; see fuzz_reader.c).
#
#   make build/tests/tools/stkwrite-sample && sh tests/fuzz/make-corpus.sh
#
# The files are committed; uuids and so CRCs change each run, which is fine.
# Crashes found by `make fuzz` are added to the same directory by hand.
set -e
W=${O:-build}/tests/tools/stkwrite-sample
D=tests/fuzz/corpus/reader
mkdir -p "$D"

"$W" --seed 1 --small "$D/small-every-type.stk"
"$W" --empty --ancillary zNew --no-close "$D/not-closed.stk"
"$W" --empty --critical QZZY "$D/unknown-critical.stk"
"$W" --empty --ancillary zNew "$D/ancillary.stk"
"$W" --empty --esym-tables "$D/esym-tables.stk"
"$W" --empty --pid-ns "$D/pid-ns.stk"
"$W" --empty --pycode "$D/pycode.stk"
head -c 400 "$D/small-every-type.stk" > "$D/cut-mid-chunk.stk"
"$W" --empty /tmp/stk-corpus.$$
{ head -c 100 "$D/small-every-type.stk"; cat /tmp/stk-corpus.$$; } > "$D/cut-then-segment.stk"
rm -f /tmp/stk-corpus.$$

# One flipped byte in the payload of the zNew chunk.
cp "$D/ancillary.stk" "$D/flipped-payload.stk"
printf '\377' | dd of="$D/flipped-payload.stk" bs=1 seek=130 conv=notrunc 2>/dev/null

# 'F' prefix: the fuzz target fixes the CRCs before reading.
{ printf 'F'; cat "$D/small-every-type.stk"; } > "$D/crc-fixed-every-type"

# Payload decoders: byte 0 = enum stk_chunk_type, then the payload.
printf '\001\002\001k\001v\000\000' > "$D/payload-meta"
printf '\002\001\007\003\200\001\002\003' > "$D/payload-stck"
printf '\003\001\012\013\003abc\002\033\000\000\005' > "$D/payload-cnts"
printf '\004\001\001\001\001a\002\002\000\000\000\003\003\001\200\001' > "$D/payload-offc"
printf '\005\001\012\001p\000\001\000\020\000\000\000\005\002\253\315\004/bin' > "$D/payload-maps"
printf '\013\001\144\001\007\000' > "$D/payload-pidn"
printf '\006\002\000\004ext4\002\002\020\164\001\001f\004\010\124\000\001g' > "$D/payload-ksym"
printf '\007\001\001k\000\000\000' > "$D/payload-kbid"
printf '\010\002\253\315blob' > "$D/payload-esym"
printf '\010\002\253\315\002\001\002\200\040\020\004main\200\001\010\001f' > "$D/payload-esym-symtab"
printf '\010\000\003\144\001\200\200\004\200\001\003jit' > "$D/payload-esym-perfmap"
# ESYM kind 4: tgid 100, CPython 3.11, two code objects (the second without
# a line table), then one whose fingerprint is over 24 bits (corrupt).
printf '\010\000\004\144\213\006\002\200\040\001\012\003run\005/a.py\003\200\000\330\220\040\177\001\010<module>\000\000' > "$D/payload-esym-pycode"
printf '\010\000\004\005\213\006\001\020\200\200\200\010\002\001f\001a\000' > "$D/payload-esym-pycode-bad-fp"
printf '\011\001\007samples\052' > "$D/payload-stat"
printf '\012\001META\000\010\010\000\000\000' > "$D/payload-indx"
