#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""stkread: an independent .stk reader, written from SPEC.md alone.

It shares no code with libstk (format/): it exists to prove that SPEC.md
is enough to read a capture in another language.  tests/e2e/spec_reader.sh
compares what it counts with `stkreport info`; a disagreement means that
SPEC.md or the code is wrong.

    stkread.py [--chunks] [--records] FILE.stk

It verifies what SPEC.md section 7 asks (header and payload CRC32Cs, frame
sizes, signature, versions, flags, tags, sequence numbers, segment ids, the
zstd frame's content size and checksum flag, every record, the index and
the trailer), recovers from damage as section 7.1 says, and prints, per
segment and (for several segments) in total, lines named like those of
`stkreport info` (strings escaped as it escapes them, see text()):

    segments: N
    [segment I]           closed, meta KEY: VALUE, stat NAME: VALUE
    chunks: N             chunks TAG: N, bytes compressed/raw, count rows,
                          samples, off-cpu rows/episodes, stacks, ...

--chunks lists every chunk as "segment seq offset tag comp raw t0 t1";
--records prints every decoded record.  Payloads are decompressed by the
zstd command-line tool.  Errors go to stderr, one line each.  Exit status:
0 sound and closed cleanly, 1 damaged, truncated or not closed, 2 usage.
"""

import struct
import subprocess
import sys

# ---- Section 1: conventions -------------------------------------------

MAGIC_FILE = 0x184D2A5A
MAGIC_CHUNK = 0x184D2A5B
MAGIC_TRAILER = 0x184D2A5C
MAGIC_ZSTD = 0xFD2FB528
SIGNATURE = b"\x89STK\r\n\x1a\n"
END_MARK = b"STKEND\0\0"
MAX_READ_VERSION = 1
MAX_STRING = 4096
MAX_BUILD_ID = 64
MAX_FRAMES = 1024
MAX_CHUNK_RAW = 268435456
KNOWN_TAGS = ("META", "STCK", "CNTS", "OFFC", "MAPS", "KSYM", "KBID", "ESYM",
              "STAT", "INDX", "pidn", "TRCE")
U64 = (1 << 64) - 1


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    t = CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


class Corrupt(Exception):
    """A record that does not follow section 5."""


class Cursor:
    """Reads the primitive encodings of section 1 from a payload."""

    def __init__(self, data):
        self.d = data
        self.p = 0

    def left(self):
        return len(self.d) - self.p

    def varint(self):
        v = 0
        for i in range(10):
            if self.p >= len(self.d):
                raise Corrupt("record cut short")
            b = self.d[self.p]
            self.p += 1
            if i == 9 and b > 1:
                raise Corrupt("varint overflows 64 bits")
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v
        raise Corrupt("varint longer than 10 bytes")

    def svarint(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def u32v(self):
        v = self.varint()
        if v > 0xFFFFFFFF:
            raise Corrupt("u32v over 2^32-1")
        return v

    def u8(self):
        if self.p >= len(self.d):
            raise Corrupt("record cut short")
        self.p += 1
        return self.d[self.p - 1]

    def raw(self, n):
        if n > self.left():
            raise Corrupt("length past the end of the payload")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def string(self, limit=MAX_STRING):
        n = self.varint()
        if n > limit:
            raise Corrupt("string longer than %d bytes" % limit)
        b = self.raw(n)
        if 0 in b:
            raise Corrupt("NUL byte inside a string")
        # Strings are UTF-8 by convention only: keep any bytes as they are.
        return b.decode("utf-8", "surrogateescape")

    def comm(self):
        return self.string(15)

    def bytes_(self, limit):
        n = self.varint()
        if n > limit:
            raise Corrupt("bytes longer than %d" % limit)
        return self.raw(n)

    def count(self, min_bytes):
        n = self.varint()
        if n > self.left() // min_bytes:
            raise Corrupt("record count larger than the payload")
        return n


# ---- Section 5: payloads ----------------------------------------------

def dec_meta(c):
    return [(c.string(), c.string()) for _ in range(c.count(2))]


def dec_stck(c):
    out = []
    for _ in range(c.count(2)):
        sid = c.varint()
        nr = c.varint()
        if nr > MAX_FRAMES or nr > c.left():
            raise Corrupt("bad frame count %d" % nr)
        frames = []
        for i in range(nr):
            if i == 0:
                frames.append(c.varint())
            else:
                frames.append((frames[-1] + c.svarint()) & U64)
        out.append((sid, frames))
    return out


def dec_task(c):
    return {"tgid": c.u32v(), "tid": c.u32v(), "comm": c.comm(),
            "ustack": c.svarint(), "kstack": c.svarint()}


def dec_cnts(c):
    out = []
    for _ in range(c.count(8)):
        row = dec_task(c)
        row["kernel_ip"] = c.varint()
        row["kernel_ret_ip"] = c.varint()
        row["count"] = c.varint()
        out.append(row)
    return out


def dec_offc(c):
    out = []
    for _ in range(c.count(12)):
        target = dec_task(c)
        waker = dec_task(c)
        out.append({"target": target, "waker": waker, "count": c.varint(),
                    "blocked_ns": c.varint()})
    return out


def dec_trce(c):
    out = []
    for _ in range(c.count(7)):
        ev = c.u32v()
        row = dec_task(c)
        row["event"] = ev
        row["count"] = c.varint()
        out.append(row)
    return out


def dec_maps(c):
    out = []
    for _ in range(c.count(4)):
        proc = {"tgid": c.u32v(), "comm": c.comm(), "time_ns": c.varint()}
        nr = c.count(8)
        if nr > 0xFFFFFFFF:
            raise Corrupt("mapping count over 2^32-1")
        maps = []
        for _ in range(nr):
            start = c.varint()
            size = c.varint()
            if start + size > U64:
                raise Corrupt("mapping ends past 2^64")
            maps.append({"start": start, "size": size, "offset": c.varint(),
                         "dev": c.varint(), "inode": c.varint(), "prot": c.u32v(),
                         "build_id": c.bytes_(MAX_BUILD_ID).hex(),
                         "path": c.string()})
        proc["mappings"] = maps
        out.append(proc)
    return out


def dec_ksym(c):
    mods = [c.string() for _ in range(c.count(1))]
    if not mods or mods[0] != "":
        raise Corrupt("KSYM module 0 is not \"\"")
    out = []
    addr = 0
    for _ in range(c.count(5)):
        addr = (addr + c.svarint()) & U64
        size = c.varint()
        typ = chr(c.u8())
        mi = c.varint()
        if mi >= len(mods):
            raise Corrupt("KSYM module index out of range")
        out.append({"addr": addr, "size": size, "type": typ, "module": mods[mi],
                    "name": c.string()})
    return out


def dec_kbid(c):
    return [{"name": c.string(), "base": c.varint(), "size": c.varint(),
             "build_id": c.bytes_(MAX_BUILD_ID).hex()} for _ in range(c.count(4))]


ESYM_SYMTAB, ESYM_PERF_MAP, ESYM_PYCODE = 2, 3, 4
MAX_PY_LINETABLE = 65536


def dec_esym_pycode(c, bid):
    # SPEC.md, ESYM kind 4: no build-id; a qualname, a fingerprint of at
    # most 24 bits, a line table of at most 65536 bytes.
    if bid:
        raise Corrupt("ESYM Python code with a build-id")
    tgid, version = c.u32v(), c.u32v()
    codes = []
    for _ in range(c.count(7)):
        addr = c.varint()
        fp = c.u32v()
        if fp > 0xFFFFFF:
            raise Corrupt("Python code fingerprint over 24 bits")
        first = c.u32v()
        qual = c.string()
        if not qual:
            raise Corrupt("Python code object without a qualname")
        codes.append((addr, fp, first, qual, c.string(), c.bytes_(MAX_PY_LINETABLE)))
    return [{"build_id": bid, "kind": ESYM_PYCODE, "tgid": tgid, "py_version": version,
             "syms": [], "codes": codes}]


def dec_esym(c):
    bid = c.bytes_(MAX_BUILD_ID).hex()
    kind = c.raw(1)[0] if c.left() else 0
    if kind == ESYM_PYCODE:
        return dec_esym_pycode(c, bid)
    if kind not in (ESYM_SYMTAB, ESYM_PERF_MAP):
        c.raw(c.left())
        return [{"build_id": bid, "kind": kind, "syms": []}]
    # SPEC.md: a symbol table has a build-id, a perf map none.
    if (kind == ESYM_SYMTAB) != bool(bid):
        raise Corrupt("ESYM kind %d with%s build-id" % (kind, "out a" if bid else " a"))
    extra = c.u32v()
    syms, addr = [], 0
    for _ in range(c.count(4)):
        addr = (addr + c.svarint()) & U64
        size = c.varint()
        name = c.string()
        if not name:
            raise Corrupt("ESYM symbol without a name")
        syms.append((addr, size, name))
    return [{"build_id": bid, "kind": kind, "extra": extra, "syms": syms}]


def dec_stat(c):
    return [(c.string(), c.varint()) for _ in range(c.count(2))]


def dec_pidn(c):
    out = []
    for _ in range(c.count(4)):
        r = {"tgid": c.u32v(), "time_ns": c.varint(), "ns_tgid": c.u32v(), "pid_ns": c.varint()}
        if r["ns_tgid"] == 0 or r["ns_tgid"] == r["tgid"]:
            raise Corrupt("pidn record whose ns_tgid is 0 or its tgid")
        out.append(r)
    return out


def dec_indx(c):
    out = []
    for _ in range(c.count(10)):
        tag = c.raw(4).decode("latin-1")
        out.append({"tag": tag, "offset": c.varint(), "comp_len": c.u32v(),
                    "raw_len": c.u32v(), "seq": c.u32v(), "t0": c.varint(),
                    "t1": c.varint()})
    return out


DECODERS = {"META": dec_meta, "STCK": dec_stck, "CNTS": dec_cnts, "OFFC": dec_offc,
            "MAPS": dec_maps, "KSYM": dec_ksym, "KBID": dec_kbid, "ESYM": dec_esym,
            "STAT": dec_stat, "INDX": dec_indx, "pidn": dec_pidn, "TRCE": dec_trce}


def decode(tag, raw):
    c = Cursor(raw)
    if tag in DECODERS:
        recs = DECODERS[tag](c)
    else:
        recs = []
        c.p = len(raw)
    if c.left():
        raise Corrupt("trailing bytes after the last record")
    return recs


# ---- Section 4.2: the payload's zstd frame (RFC 8878) -------------------

def zstd_frame(data):
    """Returns (content size, frame length) of the zstd frame at the start of
    @data, walking its blocks; raises Corrupt if it is not one."""
    if len(data) < 6 or struct.unpack_from("<I", data)[0] != MAGIC_ZSTD:
        raise Corrupt("payload is not a zstd frame")
    fhd = data[4]
    if not fhd & 0x04:
        raise Corrupt("zstd frame without a content checksum")
    fcs_flag = fhd >> 6
    single = (fhd >> 5) & 1
    did_size = (0, 1, 2, 4)[fhd & 3]
    fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if fcs_size == 0:
        raise Corrupt("zstd frame header without a content size")
    p = 5 + (0 if single else 1) + did_size
    if p + fcs_size > len(data):
        raise Corrupt("zstd frame header cut short")
    size = int.from_bytes(data[p:p + fcs_size], "little")
    if fcs_size == 2:
        size += 256
    p += fcs_size
    while True:
        if p + 3 > len(data):
            raise Corrupt("zstd block header cut short")
        bh = int.from_bytes(data[p:p + 3], "little")
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        if btype == 3:
            raise Corrupt("reserved zstd block type")
        p += 3 + (1 if btype == 1 else bsize)
        if last:
            break
    return size, p + 4


def zstd_decompress(data):
    r = subprocess.run(["zstd", "-d", "-c", "-q"], input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=False)
    if r.returncode:
        raise Corrupt("zstd: " + r.stderr.decode(errors="replace").strip().splitlines()[-1]
                      if r.stderr.strip() else "zstd failed")
    return r.stdout


# ---- Sections 2-8: frames, segments, verification, recovery -------------

class Totals:
    def __init__(self):
        self.chunks = 0
        self.by_tag = {}
        self.comp = self.raw = 0
        self.t_first = self.t_last = 0
        self.count_rows = self.samples = 0
        self.offc_rows = self.offc_episodes = self.blocked_ns = 0
        self.trce_rows = self.trce_events = 0
        self.trce_by_event = {}
        self.stacks = self.procs = self.snapshots = self.mappings = 0
        self.ksyms = self.kimages = self.kmodules = self.esyms = 0
        self.esym_syms = self.esym_bytes = self.esym_codes = 0

    def add(self, ch):
        tag, recs = ch["tag"], ch["recs"]
        self.chunks += 1
        key = tag if tag in KNOWN_TAGS else "unknown"
        self.by_tag[key] = self.by_tag.get(key, 0) + 1
        self.comp += ch["comp"]
        self.raw += ch["raw"]
        if tag in ("CNTS", "OFFC", "TRCE") and ch["t1"]:
            if not self.t_first or ch["t0"] < self.t_first:
                self.t_first = ch["t0"]
            self.t_last = max(self.t_last, ch["t1"])
        if tag == "CNTS":
            self.count_rows += len(recs)
            self.samples = (self.samples + sum(r["count"] for r in recs)) & U64
        elif tag == "OFFC":
            self.offc_rows += len(recs)
            # Sums wrap at 2^64 like stkreport's counters (only random
            # test captures come near).
            self.offc_episodes = (self.offc_episodes + sum(r["count"] for r in recs)) & U64
            self.blocked_ns = (self.blocked_ns + sum(r["blocked_ns"] for r in recs)) & U64
        elif tag == "TRCE":
            self.trce_rows += len(recs)
            self.trce_events = (self.trce_events + sum(r["count"] for r in recs)) & U64
            for r in recs:
                if r["event"] < 256:
                    e = r["event"]
                    self.trce_by_event[e] = (self.trce_by_event.get(e, 0) + r["count"]) & U64
        elif tag == "STCK":
            self.stacks += len(recs)
        elif tag == "MAPS":
            self.snapshots += len(recs)
            self.mappings += sum(len(p["mappings"]) for p in recs)
        elif tag == "KSYM":
            self.ksyms += len(recs)
        elif tag == "KBID":
            for o in recs:
                if o["name"] == "[kernel.kallsyms]":
                    self.kimages += 1
                else:
                    self.kmodules += 1
        elif tag == "ESYM":
            self.esyms += 1
            self.esym_syms += sum(len(r["syms"]) for r in recs)
            self.esym_codes += sum(len(r.get("codes", ())) for r in recs)
            self.esym_bytes += ch["comp"]

    def lines(self):
        out = ["chunks: %d" % self.chunks]
        for tag in KNOWN_TAGS + ("unknown",):
            if self.by_tag.get(tag):
                out.append("chunks %s: %d" % (tag, self.by_tag[tag]))
        out.append("bytes compressed: %d" % self.comp)
        out.append("bytes raw: %d" % self.raw)
        if self.t_last:
            d = self.t_last - self.t_first
            out.append("interval: %d.%09d s" % (d // 10**9, d % 10**9))
            out.append("interval start ns: %d" % self.t_first)
            out.append("interval end ns: %d" % self.t_last)
        out.append("count rows: %d" % self.count_rows)
        out.append("samples: %d" % self.samples)
        if self.by_tag.get("OFFC"):
            out.append("off-cpu rows: %d" % self.offc_rows)
            out.append("off-cpu episodes: %d" % self.offc_episodes)
            b = self.blocked_ns
            out.append("off-cpu blocked time: %d.%09d s" % (b // 10**9, b % 10**9))
        if self.by_tag.get("TRCE"):
            out.append("trace rows: %d" % self.trce_rows)
            out.append("trace events: %d" % self.trce_events)
            for e in sorted(self.trce_by_event):
                if self.trce_by_event[e]:
                    out.append("trace event %d: %d" % (e, self.trce_by_event[e]))
        out.append("stacks: %d" % self.stacks)
        out.append("processes with maps: %d" % self.procs)
        out.append("map snapshots: %d" % self.snapshots)
        out.append("mappings: %d" % self.mappings)
        out.append("kernel symbols: %d" % self.ksyms)
        out.append("kernel images: %d" % self.kimages)
        out.append("kernel modules: %d" % self.kmodules)
        if self.esyms:
            out.append("embedded symbol tables: %d" % self.esyms)
            out.append("embedded symbols: %d" % self.esym_syms)
            if self.esym_codes:
                out.append("embedded python code objects: %d" % self.esym_codes)
            out.append("embedded bytes: %d" % self.esym_bytes)
        return out


class Segment:
    def __init__(self, offset, header):
        self.offset = offset            # of its file header (or first chunk found)
        self.header = header            # dict, or None when lost to damage
        self.segid = header["segid"] if header else None
        self.next_seq = 0
        self.errors = 0
        self.seen = []                  # headers of the chunks read, for INDX
        self.index = None               # (offset from segment start, n)
        self.closed = False
        self.meta = {}
        self.stats = []
        self.tgids = set()
        self.totals = Totals()


class Reader:
    def __init__(self, data, on_chunk):
        self.d = data
        self.on_chunk = on_chunk
        self.segs = []
        self.errors = []
        self.chunks = 0
        self.truncated = False
        self.pos = 0
        self.want = "chunk"             # "chunk", "trailer" (after INDX), "header"
        self.resynced = False
        self.done = False
        self.last = None                # (seq, tag) of the last chunk returned

    # -- header checks: None if valid, "cut" if past the end, else a reason --

    def _frame(self, pos, lo, hi):
        d = self.d
        if len(d) - pos < 8:
            return "cut", None
        size = struct.unpack_from("<I", d, pos + 4)[0]
        if size < lo or size > hi:
            return "bad frame size %d" % size, None
        if len(d) - pos - 8 < size:
            return "cut", None
        h = d[pos + 8:pos + 8 + size]
        if struct.unpack_from("<I", h, size - 4)[0] != crc32c(h[:size - 4]):
            return "CRC mismatch", None
        return None, h

    def check_file_header(self, pos):
        why, h = self._frame(pos, 60, 1024)
        if why:
            return why, None
        if h[0:8] != SIGNATURE:
            return "bad signature", None
        rv, wv, hlen, flags, wrel, rrel = struct.unpack_from("<HHHHII", h, 8)
        if hlen != len(h):
            return "header length does not match its frame", None
        if rv == 0:
            return "read version 0", None
        if rv > MAX_READ_VERSION:
            return "newer", {"read_version": rv, "reader_release": rrel}
        if flags:
            return "unknown file header flags", None
        wall, mono = struct.unpack_from("<QQ", h, 40)
        return None, {"read_version": rv, "write_version": wv, "writer_release": wrel,
                      "uuid": h[24:40], "segid": struct.unpack_from("<I", h, 24)[0],
                      "wall": wall, "mono": mono, "size": 8 + len(h)}

    def check_chunk_header(self, pos):
        why, h = self._frame(pos, 48, 1024)
        if why:
            return why, None
        tag = h[0:4]
        hlen, flags, seq, segid, t0, t1, comp, raw, pcrc = struct.unpack_from("<HHIIQQIII", h, 4)
        if hlen != len(h):
            return "header length does not match its frame", None
        if flags:
            return "unknown chunk flags", None
        if not (all(chr(b).isalnum() and b < 0x80 for b in tag) and chr(tag[0]).isalpha()):
            return "tag is not 4 letters or digits", None
        if t1 < t0:
            return "interval ends before it starts", None
        return None, {"tag": tag.decode(), "seq": seq, "segid": segid, "t0": t0, "t1": t1,
                      "comp": comp, "raw": raw, "pcrc": pcrc, "payload": pos + 8 + len(h)}

    def check_trailer(self, pos):
        why, h = self._frame(pos, 32, 32)
        if why:
            return why, None
        if h[0:8] != END_MARK:
            return "bad end mark", None
        ioff, slen, count = struct.unpack_from("<QQI", h, 8)
        return None, {"index_offset": ioff, "segment_len": slen, "chunk_count": count}

    def find_frame(self, start):
        """Section 7.1: the next offset after @start holding a header magic
        whose header passes its own checks."""
        d = self.d
        pos = start + 1
        while True:
            pos = d.find(b"\x2a\x4d\x18", pos + 1)
            if pos < 0:
                return len(d)
            pos -= 1
            m = d[pos]
            if m == 0x5A:
                why, _ = self.check_file_header(pos)
                if why is None or why == "newer":
                    return pos
            elif m == 0x5B:
                if self.check_chunk_header(pos)[0] is None:
                    return pos
            elif m == 0x5C:
                if self.check_trailer(pos)[0] is None:
                    return pos
            pos += 1

    # -- errors and recovery --

    def fail(self, at, msg, how, resume=None):
        """how: "scan", "at" (resume), "cut" (scan, else truncated), "stop"."""
        if self.segs:
            self.segs[-1].errors += 1
        if how == "at":
            self.pos = resume
            self.resynced = True
        elif how == "stop":
            self.done = True
        else:
            self.pos = self.find_frame(at)
            self.resynced = True
            if how == "cut" and self.pos >= len(self.d):
                after = ("after chunk %d (%s)" % self.last) if self.last else "(no chunk read yet)"
                msg = "truncated at byte %d %s; %d chunks recovered" % (len(self.d), after,
                                                                          self.chunks)
                self.truncated = True
                self.done = True
        self.errors.append("byte %d: %s" % (at, msg))

    # -- frames --

    def new_segment(self, pos, header):
        self.segs.append(Segment(pos, header))
        self.want = "chunk"

    def read_file_header(self):
        pos = self.pos
        why, h = self.check_file_header(pos)
        if why == "cut":
            return self.fail(pos, "file header: frame cut short", "cut")
        if why == "newer":
            r = h["reader_release"]
            return self.fail(pos + 16, "needs stkreport >= %d.%d.%d (file read version %d, "
                             "this reader reads up to %d)" % (r >> 16, (r >> 8) & 255, r & 255,
                                                              h["read_version"],
                                                              MAX_READ_VERSION), "stop")
        if why:
            if pos == 0:
                # Section 7.1: the chunks after a damaged first header are
                # read as a segment whose header is lost.
                self.new_segment(0, None)
            return self.fail(pos, "file header: " + why, "scan")
        self.new_segment(pos, h)
        self.pos += h["size"]
        self.resynced = False

    def read_trailer(self):
        pos = self.pos
        end = pos + 40
        why, t = self.check_trailer(pos)
        if why:
            return self.fail(pos, "trailer: " + ("frame cut short" if why == "cut" else why),
                             "cut" if why == "cut" else "scan")
        seg = self.segs[-1] if self.segs else None
        if self.want == "header" or seg is None:
            return self.fail(pos, "trailer follows the end of a segment", "at", end)
        self.want = "header"
        clean = seg.header is not None and not seg.errors
        if clean and t["segment_len"] != end - seg.offset:
            return self.fail(pos, "trailer gives segment length %d, the segment has %d bytes"
                             % (t["segment_len"], end - seg.offset), "at", end)
        if seg.index is None:
            if not seg.errors:
                return self.fail(pos, "trailer without an index chunk", "at", end)
        elif (clean and t["index_offset"] != seg.index[0]) or t["chunk_count"] != seg.index[1]:
            return self.fail(pos, "trailer does not match the index chunk", "at", end)
        seg.closed = True
        self.pos = end
        self.resynced = False

    def check_index(self, seg, c, entries):
        for i, e in enumerate(entries):
            if e["seq"] != i:
                return "index entries out of order"
        if not seg.errors and (c["seq"] != len(entries) or len(seg.seen) != len(entries)):
            return "index does not list the chunks of its segment"
        for a in seg.seen:
            if a["seq"] >= len(entries):
                return "a chunk read is missing from the index"
            b = entries[a["seq"]]
            if (a["tag"] != b["tag"] or a["comp"] != b["comp_len"] or a["raw"] != b["raw_len"]
                    or a["t0"] != b["t0"] or a["t1"] != b["t1"]
                    or (seg.header is not None and not seg.errors and a["off"] != b["offset"])):
                return "index entry does not match its chunk"
        return None

    def read_chunk(self):
        pos = self.pos
        why, c = self.check_chunk_header(pos)
        if why:
            after = ("after chunk %d (%s)" % self.last) if self.last else "(no chunk read yet)"
            return self.fail(pos, "chunk header %s: %s" % (after, "frame cut short"
                                                              if why == "cut" else why),
                             "cut" if why == "cut" else "scan")
        if c["payload"] + c["comp"] > len(self.d):
            return self.fail(pos, "chunk %d (%s): payload cut short" % (c["seq"], c["tag"]), "cut")
        end = c["payload"] + c["comp"]
        name = "chunk %d (%s)" % (c["seq"], c["tag"])
        if self.want == "header" and not self.resynced:
            self.want = "chunk"
            return self.fail(pos, name + " after the trailer: its segment header is missing",
                             "at", pos)
        if self.want == "trailer" and not self.resynced:
            self.want = "chunk"
            return self.fail(pos, name + " after the index chunk", "at", pos)
        seg = self.segs[-1] if self.segs else None
        if seg is None or seg.segid != c["segid"]:
            if not self.resynced:
                return self.fail(pos, name + " belongs to another segment", "at", pos)
            if seg is None or seg.segid is not None or seg.seen:
                # Its segment's header was lost: a segment of its own.
                self.new_segment(pos, None)
                seg = self.segs[-1]
            seg.segid = c["segid"]
        if c["seq"] != seg.next_seq and not self.resynced:
            return self.fail(pos, "%s where chunk %d was expected" % (name, seg.next_seq),
                             "at", pos)
        self.resynced = False
        self.want = "chunk"
        seg.next_seq = c["seq"] + 1
        if c["raw"] > MAX_CHUNK_RAW:
            return self.fail(pos, name + ": raw size over the limit", "at", end)
        payload = self.d[c["payload"]:end]
        if crc32c(payload) != c["pcrc"]:
            return self.fail(pos, name + ": payload CRC mismatch", "at", end)
        if c["tag"] not in KNOWN_TAGS and c["tag"][0].isupper():
            return self.fail(pos, "chunk %d: unknown critical chunk '%s'" % (c["seq"], c["tag"]),
                             "stop")
        if c["tag"] != "INDX":
            seg.seen.append(dict(c, off=pos - seg.offset))
        try:
            size, flen = zstd_frame(payload)
            if size != c["raw"]:
                raise Corrupt("zstd content size differs from the header's raw size")
            if flen != c["comp"]:
                raise Corrupt("payload is not exactly one zstd frame")
            raw = zstd_decompress(payload)
            if len(raw) != c["raw"]:
                raise Corrupt("zstd: short output")
            recs = decode(c["tag"], raw)
        except Corrupt as e:
            return self.fail(pos, "%s: %s" % (name, e), "at", end)
        if c["tag"] == "INDX":
            why = self.check_index(seg, c, recs)
            if why:
                return self.fail(pos, "chunk %d (INDX): %s" % (c["seq"], why), "at", end)
            seg.index = (pos - seg.offset, len(recs))
            self.want = "trailer"
        self.pos = end
        self.chunks += 1
        self.last = (c["seq"], c["tag"])
        ch = dict(c, offset=pos, segment=len(self.segs) - 1, recs=recs)
        self.account(seg, ch)
        self.on_chunk(ch)

    def account(self, seg, ch):
        seg.totals.add(ch)
        if ch["tag"] == "META":
            seg.meta.update(ch["recs"])     # a later value for a key replaces it
        elif ch["tag"] == "STAT":
            seg.stats = ch["recs"]          # the last STAT chunk wins
        elif ch["tag"] == "MAPS":
            for p in ch["recs"]:
                if p["tgid"] not in seg.tgids:
                    seg.tgids.add(p["tgid"])
                    seg.totals.procs += 1

    def run(self):
        """Reads every frame; returns False when this is no .stk file at all."""
        d = self.d
        if not d:
            self.errors.append("byte 0: empty file")
            return False
        if d[:4] != struct.pack("<I", MAGIC_FILE)[:len(d[:4])]:
            self.errors.append("byte 0: not an .stk file (no file header magic)")
            return False
        if d[8:16] != SIGNATURE[:len(d[8:16])]:
            self.errors.append("byte 8: not an .stk file (bad signature)")
            return False
        while not self.done and self.pos < len(d):
            if len(d) - self.pos < 4:
                self.fail(self.pos, "frame magic cut short", "cut")
                continue
            magic = struct.unpack_from("<I", d, self.pos)[0]
            if magic == MAGIC_FILE:
                # Also where a chunk was due: the segment before was not
                # closed (a capture appended to an unfinished one).
                self.read_file_header()
            elif magic == MAGIC_CHUNK:
                self.read_chunk()
            elif magic == MAGIC_TRAILER:
                self.read_trailer()
            else:
                self.fail(self.pos, "no .stk frame here (magic 0x%08x)" % magic, "scan")
        return True


def print_records(ch):
    print("CHUNK %d %d %s" % (ch["segment"], ch["seq"], ch["tag"]))
    for r in ch["recs"]:
        print("  %r" % (r,))


def text(s):
    """A capture string as stkreport prints it, by the rule of
    format/stk_escape.h (written here from its description, not its code):
    printable ASCII kept but a backslash doubled; C0, DEL, UTF-8 encoded C1
    controls and bytes that are not well-formed UTF-8 as \\xNN."""
    b = s.encode("utf-8", "surrogateescape")
    out = []
    i = 0
    while i < len(b):
        c = b[i]
        if 0x20 <= c < 0x7f:
            out.append("\\\\" if c == 0x5c else chr(c))
            i += 1
            continue
        n = 2 if 0xc2 <= c <= 0xdf else 3 if 0xe0 <= c <= 0xef else 4 if 0xf0 <= c <= 0xf4 else 0
        if n and i + n <= len(b):
            try:
                ch = b[i:i + n].decode("utf-8")  # strict: no overlongs, surrogates
            except UnicodeDecodeError:
                ch = ""
            if len(ch) == 1 and not 0x80 <= ord(ch) <= 0x9f:
                out.append(ch)
                i += n
                continue
        out.append("\\x%02x" % c)
        i += 1
    return "".join(out)


def main(argv):
    args = [a for a in argv[1:]]
    opts = {a for a in args if a.startswith("--")}
    files = [a for a in args if not a.startswith("--")]
    if opts - {"--chunks", "--records"} or len(files) != 1:
        sys.stderr.write("usage: stkread.py [--chunks] [--records] FILE.stk\n")
        return 2
    sys.stdout.reconfigure(errors="surrogateescape")
    with open(files[0], "rb") as f:
        data = f.read()
    listing = []

    def on_chunk(ch):
        if "--chunks" in opts:
            listing.append("%d %d %d %s %d %d %d %d" % (ch["segment"], ch["seq"], ch["offset"],
                                                        text(ch["tag"]), ch["comp"], ch["raw"],
                                                        ch["t0"], ch["t1"]))
        if "--records" in opts:
            print_records(ch)

    r = Reader(data, on_chunk)
    is_stk = r.run()
    for e in r.errors:
        sys.stderr.write("stkread: %s: %s\n" % (files[0], e))
    if not is_stk:
        return 1
    if "--chunks" in opts:
        print("\n[chunks]")
        for line in listing:
            print(line)
    print("size: %d bytes" % len(data))
    print("segments: %d" % len(r.segs))
    total = Totals()
    for i, s in enumerate(r.segs):
        print("\n[segment %d]" % i)
        print("offset: %d" % s.offset)
        if s.header:
            h = s.header
            print("read version: %d" % h["read_version"])
            print("write version: %d" % h["write_version"])
            w = h["writer_release"]
            print("writer: stk %d.%d.%d" % (w >> 16, (w >> 8) & 255, w & 255))
            print("wall start ns: %d" % h["wall"])
            print("mono start ns: %d" % h["mono"])
        print("closed: %s" % ("yes" if s.closed else "no"))
        for k, v in s.meta.items():
            print("meta %s: %s" % (text(k), text(v)))
        print("\n".join(s.totals.lines()))
        for k, v in s.stats:
            print("stat %s: %d" % (text(k), v))
        for k, v in vars(s.totals).items():
            if k == "by_tag":
                for t, n in v.items():
                    total.by_tag[t] = total.by_tag.get(t, 0) + n
            elif k == "trce_by_event":
                for e, n in v.items():
                    total.trce_by_event[e] = (total.trce_by_event.get(e, 0) + n) & U64
            elif k == "t_first":
                if v and (not total.t_first or v < total.t_first):
                    total.t_first = v
            elif k == "t_last":
                total.t_last = max(total.t_last, v)
            else:
                setattr(total, k, getattr(total, k) + v)
    if len(r.segs) > 1:
        print("\n[total]")
        print("\n".join(total.lines()))
    ok = not r.errors and r.segs and all(s.closed for s in r.segs)
    print("\nerrors: %d" % len(r.errors))
    print("verdict: %s" % ("OK" if ok else "DAMAGED" if r.errors and not
                           (len(r.errors) == 1 and r.truncated) else "NOT CLOSED CLEANLY"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
