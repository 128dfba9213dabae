#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cuts an ELF core down to a fuzz seed: what the core reader reads, and little else.

    prune_core.py CORE OUT [--keep ADDR:BYTES]...

Keeps the notes; drops the segments that are not writable (text and read-only data,
which the reader takes from the binary) but for each file's first page (the ELF
headers and the Go build ID note); splits the rest into runs of pages, writing those
with data and turning long runs of zero pages into segments with nothing in the file
(they read as zeros). A gcore core of a small Go program (over 1 GB, mostly zeros) becomes
a few MB. Pages of the --keep ranges stay in the file, zeros or not: the core reader
needs the memory of every in-use heap span there, and a span of zeros can lie in a long
run of them (make_seeds.py corekeep gives the spans' ranges). Standard library only.
"""

import argparse
import struct

PAGE = 4096
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
PT_LOAD, PT_NOTE, PF_W = 1, 4, 2


# Shorter runs of zeros stay in the file: the reader needs a heap span's memory in the
# file, and a span of zeroed objects is a run of zero pages.
MIN_HOLE = 256 << 10


def runs(data, vaddr=0, kept=frozenset()):
    """(offset, length, has_data) runs of whole pages of data, memory at vaddr; zero runs
    shorter than MIN_HOLE, and the pages whose addresses are in kept, count as data."""
    out, start, kind = [], 0, None
    for off in range(0, len(data), PAGE):
        nonzero = vaddr + off in kept or any(data[off:off + PAGE])
        if kind is None:
            kind = nonzero
        elif nonzero != kind:
            out.append((start, off - start, kind))
            start, kind = off, nonzero
    if kind is not None:
        out.append((start, len(data) - start, kind))
    merged = []
    for start, length, has in out:
        has = has or length < MIN_HOLE
        if merged and merged[-1][2] and has:
            merged[-1] = (merged[-1][0], merged[-1][1] + length, True)
        else:
            merged.append((start, length, has))
    return merged


def prune(buf, keep=()):
    """buf pruned; keep: (addr, bytes) ranges whose pages stay in the file."""
    kept = {p for a, n in keep for p in range(a - a % PAGE, a + n, PAGE)}
    eh = EHDR.unpack_from(buf, 0)
    phoff, phnum = eh[5], eh[10]  # e_phoff, e_phnum
    phdrs = [PHDR.unpack_from(buf, phoff + i * PHDR.size) for i in range(phnum)]
    notes, loads = [], []
    for (typ, flags, off, vaddr, paddr, filesz, memsz, align) in phdrs:
        data = buf[off:off + filesz]
        if typ == PT_NOTE:
            notes.append(data)
        elif typ == PT_LOAD:
            if not flags & PF_W:
                if not data.startswith(b"\x7fELF"):
                    continue
                data, memsz = data[:PAGE], PAGE  # a file's first page: headers and notes
            data = data + bytes(memsz - len(data)) if len(data) < memsz else data
            for start, length, has in runs(data, vaddr, kept):
                loads.append((vaddr + start, data[start:start + length] if has else b"", length))
    n = len(notes) + len(loads)
    out = bytearray(EHDR.size + n * PHDR.size)
    EHDR.pack_into(out, 0, eh[0], eh[1], eh[2], eh[3], 0, EHDR.size, 0, 0, EHDR.size,
                   PHDR.size, n, 0, 0, 0)
    i = 0
    for data in notes:
        PHDR.pack_into(out, EHDR.size + i * PHDR.size, PT_NOTE, 0, len(out), 0, 0,
                       len(data), 0, 4)
        out += data
        i += 1
    for vaddr, data, memsz in loads:
        PHDR.pack_into(out, EHDR.size + i * PHDR.size, PT_LOAD, 6, len(out), vaddr, 0,
                       len(data), memsz, PAGE)
        out += data
        i += 1
    return bytes(out)


def keep_range(text):
    addr, length = text.split(":")
    return int(addr, 0), int(length, 0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("core")
    ap.add_argument("out")
    ap.add_argument("--keep", type=keep_range, action="append", default=[])
    a = ap.parse_args()
    with open(a.core, "rb") as f:
        pruned = prune(f.read(), a.keep)
    with open(a.out, "wb") as f:
        f.write(pruned)
