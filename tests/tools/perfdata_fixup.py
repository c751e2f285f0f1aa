#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""perfdata_fixup: make a perf.data that perf record 6.1 wrote beside stkrec
on Linux 6.18 readable by perf script 6.1 (tests/bench/bench_report.sh).

    perfdata_fixup.py PERF.DATA      (rewritten in place)

Two kinds of record come out of the kernel wrong when another event on the
system (stkrec's) asks for more than perf's does:
 - MMAP2 records carry PERF_RECORD_MISC_MMAP_BUILD_ID though perf asked for
   no build-ids (-B): perf reads the device and inode as a build-id of 0xfe
   bytes, warns "assertion failed at util/build-id.c:1010" and aborts with a
   smashed stack, at the first such record, in perf script as in perf
   record's build-id pass.  The bit is cleared where no event of the file
   asked for build-ids.
 - KSYMBOL records (BPF programs loaded while recording) are longer than
   their contents, the sample_id of another listener counted in: perf reads
   the event id from the end, finds none of its own and gives up ("failed
   to process type: 17").  The sample_id is moved to the record's end.
perf script then reads every sample, so its time is for all of them.
Prints what it changed.  Exit status 0, or 1 for a file it cannot read.
"""

import struct
import sys

MISC_MMAP_BUILD_ID = 1 << 14
SAMPLE_ID_BITS = (1 << 1, 1 << 2, 1 << 6, 1 << 9, 1 << 7, 1 << 16)  # TID TIME ID STREAM_ID CPU IDENTIFIER


def main(path):
    with open(path, 'r+b') as f:
        buf = bytearray(f.read())
        if buf[:8] != b'PERFILE2':
            print('perfdata_fixup: %s: not a perf.data file' % path, file=sys.stderr)
            return 1
        attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<QQQQQ', buf, 16)
        idsz, build_ids = None, False
        for a in range(attrs_off, attrs_off + attrs_size, attr_size):
            sample_type, _, flags = struct.unpack_from('<QQQ', buf, a + 24)
            build_ids |= bool(flags & (1 << 34))
            if idsz is None and flags & (1 << 18):  # sample_id_all
                idsz = 8 * sum(1 for b in SAMPLE_ID_BITS if sample_type & b)
        pos, end, mmaps, ksyms = data_off, data_off + data_size, 0, 0
        while pos + 8 <= end:
            typ, misc, size = struct.unpack_from('<IHH', buf, pos)
            if size < 8:
                break
            if typ == 10 and misc & MISC_MMAP_BUILD_ID and not build_ids:
                struct.pack_into('<H', buf, pos + 4, misc & ~MISC_MMAP_BUILD_ID)
                mmaps += 1
            elif typ == 17 and idsz:
                name = bytes(buf[pos + 24:pos + size]).split(b'\0')[0]
                body = 24 + ((len(name) + 1 + 7) & ~7)
                if size > body + idsz:
                    buf[pos + size - idsz:pos + size] = buf[pos + body:pos + body + idsz]
                    ksyms += 1
            pos += size
        f.seek(0)
        f.write(buf)
    print('perfdata_fixup: %s: %d MMAP2 and %d KSYMBOL records fixed' % (path, mmaps, ksyms))
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        print('usage: perfdata_fixup.py PERF.DATA', file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
