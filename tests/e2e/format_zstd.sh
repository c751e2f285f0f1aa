#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Every .stk file is a valid zstd stream: the real zstd CLI checks files
# written by libstk (through tests/tools/stkwrite-sample), concatenated
# files, and unfinished ones; and it rejects a capture with a flipped
# payload byte, so its checksums really cover the payloads.

. "$(dirname "$0")/lib/harness.sh"
W=$O/tests/tools/stkwrite-sample
need_files "$W" "$REP"
need_cmds zstd

"$W" "$tmp/known.stk" || fail "stkwrite-sample known"
if zstd -q -t "$tmp/known.stk"; then pass "zstd -t passes on a capture"; else fail "zstd -t on a capture"; fi

for seed in 1 2 3; do
	"$W" --seed $seed "$tmp/r$seed.stk" || fail "stkwrite-sample --seed $seed"
done
if zstd -q -t "$tmp/r1.stk" "$tmp/r2.stk" "$tmp/r3.stk"; then
	pass "zstd -t passes on random captures with every chunk type"
else
	fail "zstd -t on random captures"
fi

cat "$tmp/known.stk" "$tmp/r1.stk" > "$tmp/cat.stk"
if zstd -q -t "$tmp/cat.stk"; then pass "zstd -t passes on two concatenated captures"; else fail "zstd -t on cat a b"; fi

"$W" --no-close "$tmp/open.stk"
if zstd -q -t "$tmp/open.stk"; then pass "zstd -t passes on a capture stopped before its trailer"; else fail "zstd -t on an unclosed capture"; fi

# zstd -d outputs the payloads only: the skippable header frames vanish.
# The known capture's payloads total its "bytes raw" (info is checked
# against this number, so both must agree).
raw=$(zstd -q -dc "$tmp/known.stk" | wc -c)
info_raw=$("$O/stkreport" info "$tmp/known.stk" | sed -n 's/^bytes raw: //p')
if [ -n "$raw" ] && [ "$raw" = "$info_raw" ]; then
	pass "zstd -d yields exactly the payload bytes ($raw)"
else
	fail "zstd -d payload bytes" "zstd $raw, info ${info_raw:-none}"
fi

# Flip one byte inside the last zstd frame's compressed data: zstd's own
# checksum must catch it (the reader's CRC32C is not what zstd -t sees).
size=$(wc -c < "$tmp/known.stk")
cp "$tmp/known.stk" "$tmp/flip.stk"
# The index chunk's payload ends 40 bytes (the trailer) before the end;
# its last 4 bytes are zstd's checksum, so flip the byte just before them.
off=$((size - 40 - 5))
printf '\377' | dd of="$tmp/flip.stk" bs=1 seek=$off conv=notrunc 2>/dev/null
if zstd -q -t "$tmp/flip.stk" 2>/dev/null; then
	fail "zstd -t accepted a flipped payload byte at $off"
else
	pass "zstd -t rejects a flipped payload byte"
fi

finish
