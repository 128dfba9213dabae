# SPDX-License-Identifier: Apache-2.0
"""Makes the small seed dumps of the fuzz corpus (see tests/fuzz/README.md).

    python3 make_seeds.py reduce IN OUT [--goroutines N] [--objects N] [--bytes N]
                                        [--data BYTES] [--bss ADDR:BYTES]
        A smaller dump of the same heap: the header, params and every small record
        kept; the data segment cut to its first BYTES (its address stays: heapref
        derives the load bias from it); the bss segment cut to a window; the first N
        goroutines with their frames; and the heap objects the kept roots reach, breadth
        first by the pointer bitmaps, up to N objects and N bytes. Pointers to dropped
        objects then lead nowhere, which a dump reader and the scanner must take.

    python3 make_seeds.py bsswindow BINARY
        ADDR:BYTES: the part of the binary's .bss that holds the main package's
        variables, for --bss.

    python3 make_seeds.py coredict CORE BINARY OUT
        A libFuzzer dictionary (-dict=OUT) of the core's own pointers: the addresses of
        the nodes of the lists the core reader follows (memory-profile buckets, Ms,
        finalizer blocks, goroutines, spans with specials and their specials; up to 32
        of each kind, evenly spaced), each an 8-byte little-endian token, so that
        mutations link a list back into itself or into another. Reads the binary's
        layout with heapref (HEAPREF, default build/heapref; tests/e2e/core_patch.py).

    python3 make_seeds.py corekeep CORE BINARY
        The options `--keep ADDR:BYTES ...` of prune_core.py that keep the memory of
        every in-use span of the core in the file, zeros or not (the core reader needs
        it there). Needs heapref as coredict does.

    python3 make_seeds.py handmade OUTDIR
        Small dumps built record by record: every record kind, 4-byte and big-endian
        pointers, the go1.5 and go1.6 headers, field lists out of order, a grid page
        with free slots, a large object over several pages.

Standard library only (and, for coredict and corekeep, a heapref build).
"""

import argparse
import collections
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
import dumpfmt as F  # noqa: E402  (tests/e2e, shared with the end-to-end tests)
import test_legacy  # noqa: E402  (its hand-made go1.3 and go1.4 dumps)

PAGE = 8192


class Heap:
    """Object records of a dump, found by address."""

    def __init__(self, recs):
        self.objs = sorted((r for r in recs if r.kind == F.OBJECT), key=lambda r: r.fields[0])
        self.addrs = [r.fields[0] for r in self.objs]

    def find(self, value):
        import bisect
        i = bisect.bisect_right(self.addrs, value) - 1
        if i >= 0 and value - self.addrs[i] < len(self.objs[i].fields[1]):
            return i
        return -1


def words(contents, offsets, ptr_size, big_endian):
    fmt = (">" if big_endian else "<") + ("Q" if ptr_size == 8 else "I")
    for off in offsets:
        if off + ptr_size <= len(contents):
            yield struct.unpack_from(fmt, contents, off)[0]


def cut_segment(rec, lo, length):
    """The segment record rec cut to [lo, lo+length) (addresses), offsets rebased."""
    addr, contents, offsets = rec.fields
    lo = max(lo, addr)
    start = lo - addr
    contents = contents[start:start + length]
    offsets = [o - start for o in offsets if start <= o < start + len(contents) - 7]
    return F.Record(rec.kind, None, [lo, contents, offsets])


def reduce(buf, goroutines, max_objects, max_bytes, data_len, bss_window):
    hdr, recs = F.split(buf)
    params = next(r for r in recs if r.kind == F.PARAMS).fields
    big_endian, ptr_size = params[0], params[1]
    heap = Heap(recs)
    out, roots = [], []
    kept_g = -1
    g_seen = -1
    for r in recs:
        if r.kind in (F.OBJECT, F.EOF):
            continue
        if r.kind == F.DATA and data_len is not None:
            r = cut_segment(r, r.fields[0], data_len)
        if r.kind == F.BSS and bss_window is not None:
            r = cut_segment(r, bss_window[0], bss_window[1])
        if r.kind == F.GOROUTINE:
            g_seen += 1
            if g_seen >= goroutines:
                continue
            kept_g = g_seen
        if r.kind == F.FRAME and g_seen != kept_g:
            continue
        if r.kind in (F.DATA, F.BSS):
            roots += words(r.fields[1], r.fields[2], ptr_size, big_endian)
        elif r.kind == F.FRAME:
            roots += words(r.fields[3], r.fields[8], ptr_size, big_endian)
        elif r.kind in (F.FINALIZER, F.QUEUED_FINALIZER):
            roots += [r.fields[0], r.fields[1]]
        elif r.kind == F.OTHER_ROOT:
            roots.append(r.fields[1])
        out.append(r)
    keep, nbytes = set(), 0
    queue = collections.deque(roots)
    while queue and len(keep) < max_objects:
        i = heap.find(queue.popleft())
        if i < 0 or i in keep:
            continue
        addr, contents, offsets = heap.objs[i].fields
        if nbytes + len(contents) > max_bytes:
            continue
        keep.add(i)
        nbytes += len(contents)
        queue.extend(words(contents, offsets, ptr_size, big_endian))
    # objects go where Go writes them: after the roots' records would be fine too, but
    # keep them in address order, as one span after another
    objects = [heap.objs[i] for i in sorted(keep)]
    body = [r.raw if r.raw is not None else F.encode(r.kind, r.fields) for r in out]
    return b"".join([hdr] + body + [r.raw for r in objects] + [F.put_uvarint(F.EOF)])


# --- where a binary keeps the main package's variables ----------------------------------

def elf_sections(elf):
    """{name: (addr, offset, size, link, entsize)} of a little-endian ELF64 file."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    out = {}
    for h in heads:
        name = elf[names + h[0]:elf.index(b"\0", names + h[0])].decode()
        out[name] = (h[3], h[4], h[5], h[6], h[9])
    return out


def main_bss_window(path):
    """(address, length) of the part of .bss holding the symbols main.*."""
    with open(path, "rb") as f:
        elf = f.read()
    sec = elf_sections(elf)
    bss_addr, _, bss_size, _, _ = sec[".bss"]
    _, symoff, symsize, _, entsize = sec[".symtab"]
    stroff = sec[".strtab"][1]
    lo, hi = None, None
    for k in range(symsize // entsize):
        name_off, _, _, _, value, size = struct.unpack_from("<IBBHQQ", elf, symoff + k * entsize)
        name = elf[stroff + name_off:elf.index(b"\0", stroff + name_off)]
        if name.startswith(b"main.") and bss_addr <= value < bss_addr + bss_size:
            lo = value if lo is None else min(lo, value)
            hi = value + size if hi is None else max(hi, value + size)
    if lo is None:
        raise SystemExit("%s: no main.* symbol in .bss" % path)
    return lo, hi - lo


# --- hand-made dumps -----------------------------------------------------------------

def rec(kind, *fields):
    return F.encode(kind, list(fields))


def word(v, ptr_size=8, big_endian=False):
    return struct.pack((">" if big_endian else "<") + ("Q" if ptr_size == 8 else "I"), v)


def handmade_full(ptr_size=8, big_endian=False, header=b"go1.7 heap dump\n"):
    """Every record kind once or more, pointing at each other the way Go's would."""
    ps = ptr_size
    base = 0xC000000000 if ps == 8 else 0x10000000
    w = lambda v: word(v, ps, big_endian)
    r = [header, rec(F.PARAMS, int(big_endian), ps, base, base + 64 * PAGE,
                     b"amd64" if ps == 8 else b"386", b"go1.26.8", 2)]
    # a grid page of 32-byte objects with free slots, each pointing to the next
    for k in (0, 1, 3, 4, 7):
        nxt = base + 32 * (k + 1)
        r.append(rec(F.OBJECT, base + 32 * k, w(nxt) + w(0) + bytes(32 - 2 * ps), [0]))
    # a large object over two pages, pointers at the start and at the end
    big, size = base + 2 * PAGE, PAGE + 64
    contents = bytearray(size)
    contents[0:ps] = w(base)
    contents[size - ps:] = w(big + 8)
    r.append(rec(F.OBJECT, big, bytes(contents), [size - ps, 0]))
    # a 16-byte object holding an interior pointer, field list out of order and repeated
    r.append(rec(F.OBJECT, base + 6 * PAGE, w(big + 100) + w(base + 40), [ps, 0, ps]))
    r.append(rec(F.OTHER_ROOT, b"runtime.other", base + 32))
    r.append(rec(F.TYPE, 0x500000, 32, b"main.T", 0))
    r.append(rec(F.TYPE, 0x500100, 8, b"*main.T", 1))
    r.append(rec(F.ITAB, 0x510000, 0x500000))
    r.append(rec(F.OS_THREAD, 0x520000, 1, 4242))
    r.append(rec(F.GOROUTINE, 0xC000001000, 0xC000100000, 1, 0x401000, 4, 0, 0, 7,
                 b"chan receive", 0, 0x520000, 0xC000002000, 0xC000003000))
    frame1 = w(base) + w(0) + w(base + 6 * PAGE + 8)
    r.append(rec(F.FRAME, 0xC000100000, 0, 0, frame1, 0x401000, 0x401020, 0,
                 b"main.main", [0, 2 * ps]))
    r.append(rec(F.FRAME, 0xC000100000 + len(frame1), 1, 0xC000100000, w(big), 0x402000,
                 0x402010, 0x402020, b"runtime.main", [0]))
    r.append(rec(F.GOROUTINE, 0xC000004000, 0xC000200000, 2, 0x401000, 2, 1, 1, 0, b"",
                 0, 0, 0, 0))
    r.append(rec(F.FINALIZER, base + 4 * 32, 0x530000, 0x403000, 0x500000, 0x500100))
    r.append(rec(F.QUEUED_FINALIZER, base + 7 * 32, 0x530000, 0x403000, 0x500000, 0x500100))
    r.append(rec(F.DATA, 0x540000, w(base) + w(0) + w(big + 16), [0, 2 * ps]))
    r.append(rec(F.BSS, 0x550000, w(0) + w(base + 6 * PAGE), [ps]))
    r.append(rec(F.DEFER, 0xC000002000, 0xC000001000, 0xC000100010, 0x401010, 0x530000,
                 0x403000, 0))
    r.append(rec(F.PANIC, 0xC000003000, 0xC000001000, 0x500000, base, 0xC000002000, 0))
    r.append(rec(F.MEMSTATS, *range(24 + 256 + 1)))
    r.append(rec(F.MEMPROF, 0x560000, 32, [(b"main.alloc", b"/src/main.go", 12),
                                           (b"main.main", b"/src/main.go", 40)], 5, 1))
    r.append(rec(F.ALLOC_SAMPLE, base, 0x560000))
    r.append(rec(F.EOF))
    return b"".join(r)


def handmade_minimal():
    return b"".join([b"go1.7 heap dump\n",
                     rec(F.PARAMS, 0, 8, 0xC000000000, 0xC000400000, b"amd64", b"go1.24.0", 1),
                     rec(F.OBJECT, 0xC000000000, word(0xC000000000), [0]),
                     rec(F.EOF)])


def handmade(outdir):
    os.makedirs(outdir, exist_ok=True)
    seeds = {
        "hand-full-le64": handmade_full(),
        "hand-full-be64": handmade_full(big_endian=True),
        "hand-full-le32": handmade_full(ptr_size=4),
        "hand-full-go15": handmade_full(header=b"go1.5 heap dump\n"),
        "hand-full-go16-be32": handmade_full(4, True, b"go1.6 heap dump\n"),
        "hand-minimal": handmade_minimal(),
        "hand-go13": test_legacy.fixture13(),  # the older layouts' every kind of field
        "hand-go14": test_legacy.fixture14(),
        "hand-go13-prerelease": test_legacy.fixture_pre(),  # roots as pointers, linked frames
    }
    for name, data in seeds.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)


DICT_PER_KIND = 32   # nodes of one kind in the core dictionary: more would dilute it


def core_dict(core, binary):
    """The text of the dictionary of make_seeds.py coredict."""
    import core_patch  # tests/e2e: finds the lists through heapref types and vars
    lines = ["# libFuzzer dictionary of fuzz_core: the addresses of the list nodes of",
             "# corpus/core/seed, as 8-byte little-endian words. Written by",
             "#   tests/fuzz/tools/make_seeds.py coredict CORE BINARY OUT",
             "# (tools/make_corpus.sh core), not by hand."]
    by_kind = collections.defaultdict(list)
    for kind, addr in core_patch.all_nodes(core, binary):
        if addr and addr not in by_kind[kind]:
            by_kind[kind].append(addr)
    if not by_kind["bucket"] or not by_kind["special"]:
        raise SystemExit("make_seeds: %s has no memory-profile buckets or no specials: a "
                         "seed that does not reach every list" % core)
    for kind in sorted(by_kind):
        addrs = by_kind[kind]
        if len(addrs) > DICT_PER_KIND:   # evenly spaced, the first and the last kept
            step = (len(addrs) - 1) / (DICT_PER_KIND - 1)
            addrs = [addrs[round(i * step)] for i in range(DICT_PER_KIND)]
        for i, addr in enumerate(addrs):
            token = "".join("\\x%02x" % b for b in addr.to_bytes(8, "little"))
            lines.append('%s_%d="%s"' % (kind, i, token))
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reduce")
    r.add_argument("input")
    r.add_argument("output")
    r.add_argument("--goroutines", type=int, default=8)
    r.add_argument("--objects", type=int, default=200)
    r.add_argument("--bytes", type=int, default=16384)
    r.add_argument("--data", type=int)
    r.add_argument("--bss", help="ADDR:BYTES (ADDR in hex or decimal)")
    h = sub.add_parser("handmade")
    h.add_argument("outdir")
    c = sub.add_parser("convert", help="a dump rewritten in the go1.3 or go1.4 layout")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--minor", type=int, choices=(3, 4), required=True)
    w = sub.add_parser("bsswindow", help="ADDR:BYTES of .bss holding main.* (for --bss)")
    w.add_argument("binary")
    d = sub.add_parser("coredict", help="a -dict= of the core's list nodes for fuzz_core")
    d.add_argument("core")
    d.add_argument("binary")
    d.add_argument("output")
    k = sub.add_parser("corekeep", help="prune_core.py --keep options: the spans' memory")
    k.add_argument("core")
    k.add_argument("binary")
    a = ap.parse_args(argv)
    if a.cmd == "corekeep":
        import core_patch
        print(" ".join("--keep 0x%x:%d" % r for r in core_patch.span_memory(a.core, a.binary)))
        return 0
    if a.cmd == "coredict":
        text = core_dict(a.core, a.binary)
        with open(a.output, "w") as f:
            f.write(text)
        return 0
    if a.cmd == "handmade":
        handmade(a.outdir)
        return 0
    if a.cmd == "convert":
        with open(a.input, "rb") as f:
            data = F.convert(f.read(), a.minor)
        with open(a.output, "wb") as f:
            f.write(data)
        return 0
    if a.cmd == "bsswindow":
        print("0x%x:%d" % main_bss_window(a.binary))
        return 0
    bss = None
    if a.bss:
        addr, length = a.bss.split(":")
        bss = (int(addr, 0), int(length, 0))
    with open(a.input, "rb") as f:
        buf = f.read()
    data = reduce(buf, a.goroutines, a.objects, a.bytes, a.data, bss)
    with open(a.output, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
