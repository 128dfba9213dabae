# SPDX-License-Identifier: Apache-2.0
"""Corrupt copies of a real core: one runtime list patched into a loop.

A core file is hostile input. Each function below takes a core of a Go program (as
`heapref analyze --pid PID --save-core CORE BINARY` writes it) and the program's
binary, finds one node of a list the core reader follows, through the binary's
symbols and DWARF (`heapref vars`, `heapref types`) and the core's program headers,
writes a copy of the core with that node's link pointing back into the list, and
returns (path of the copy, a description of what was changed):

    path, what = core_patch.bucket_self_loop(core, binary, out_dir)
    # what: "the allnext of memory-profile bucket 0xc000123000 (the first of
    #        runtime.mbuckets) points to itself"

    bucket_self_loop, bucket_two_node_loop,  runtime.mbuckets (bucket.allnext)
    bucket_whole_loop                        (the last bucket back to the first)
    special_self_loop, special_two_node_loop a span's specials (special.next)
    m_self_loop                              runtime.allm (m.alllink)
    finblock_self_loop                       runtime.allfin (finblock.alllink)

The specials' patches take the span with the most specials (testprogs/finalizer's
finalizers, testprogs/allocs' profile samples; the two-node loop needs two); the
buckets' patches a memory profile of one, two or three buckets (testprogs/allocs has
dozens; a program that never reads its profile has none, the linker turns it off);
finblock_self_loop a finalizer block (testprogs/finalizer). A core without what a
patch needs raises PatchError. `nodes(core, binary, which)` lists a list's node addresses, and
`specials_of(core, binary)` the span whose specials are patched, for tests that check
what an error line names; `all_nodes(core, binary)` the nodes of every list and
`span_memory(core, binary)` the in-use spans' memory, for the fuzzing seed and
dictionary of tests/fuzz/tools (make_seeds.py coredict, corekeep).

Copies keep the core's holes (cp --sparse=always): heapref's cores are sparse files
whose apparent size is many times what they hold. The caller deletes them.

Environment: HEAPREF (the heapref binary used to read the DWARF; progs.HEAPREF).
Standard library only.
"""

import collections
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402

PT_LOAD = 1
MSPAN_IN_USE = 1
WORD = 8
GO_PAGE = 8192


class PatchError(Exception):
    """The core lacks what a patch needs (no such list, or too short)."""


Segment = collections.namedtuple("Segment", "vaddr memsz offset filesz")


class Core:
    """The PT_LOAD segments of a 64-bit little-endian ELF core: memory by address."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                raise PatchError("%s: not a 64-bit little-endian ELF file" % path)
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
        self.segments = []
        for i in range(phnum):
            typ, _, off, vaddr, _, filesz, memsz, _ = struct.unpack_from(
                "<IIQQQQQQ", table, i * phentsize)
            if typ == PT_LOAD:
                self.segments.append(Segment(vaddr, memsz, off, filesz))

    def offset(self, addr, size=WORD):
        """The file offset of [addr, addr + size), which must be in one segment's file part."""
        for s in self.segments:
            if s.vaddr <= addr and addr + size <= s.vaddr + s.filesz:
                return s.offset + addr - s.vaddr
        raise PatchError("%s: 0x%x is not in the core's file" % (self.path, addr))

    def read(self, addr, size):
        with open(self.path, "rb") as f:
            f.seek(self.offset(addr, size))
            return f.read(size)

    def word(self, addr):
        return int.from_bytes(self.read(addr, WORD), "little")

    def uint(self, addr, size):
        return int.from_bytes(self.read(addr, size), "little")


class Layout:
    """What the patches need of a binary: globals' addresses and fields' offsets, as
    heapref's binary reader gives them (`heapref vars`, `heapref types`)."""

    def __init__(self, binary):
        self.binary = binary
        self._types = {}

    def _heapref(self, *args):
        st, out, err = progs.heapref(*args)
        if st != 0:
            raise PatchError("heapref %s: %s" % (" ".join(args), err.strip()))
        return out

    def global_addr(self, name):
        out = self._heapref("vars", self.binary, name)
        m = re.search(r"^global\t%s\taddr=(0x[0-9a-f]+)" % re.escape(name), out, re.M)
        if not m:
            raise PatchError("%s has no global %s" % (self.binary, name))
        return int(m.group(1), 16)

    def struct(self, *names):
        """{member: (offset, type)} and size of the first struct of names the binary has."""
        for name in names:
            if name not in self._types:
                self._types[name] = self._read_struct(name)
            if self._types[name]:
                return self._types[name]
        raise PatchError("%s has no struct %s" % (self.binary, " or ".join(names)))

    def _read_struct(self, name):
        out = self._heapref("types", self.binary, name)
        members, size, inside = {}, None, False
        for line in out.splitlines():
            if not line.startswith("\t"):
                if inside:
                    break
                cols = line.split("\t")
                inside = cols[0] == name and "kind=struct" in cols and "target=" not in line
                if inside:
                    size = int(cols[3].split("=")[1])
                continue
            if inside:
                cols = line.strip("\t").split("\t")
                members.setdefault(cols[0], (int(cols[1].split("=")[1]), cols[2][5:]))
        return (members, size) if size is not None else None

    def field(self, structs, member):
        """The offset of member in the first of structs (a tuple of names) the binary has."""
        members, _ = self.struct(*structs)
        if member not in members:
            raise PatchError("%s: %s has no member %s" % (self.binary, structs[0], member))
        return members[member][0]


MSPAN = ("runtime.mspan",)
BUCKET = ("runtime.bucket",)
SPECIAL = ("runtime.special",)
M = ("runtime.m",)
FINBLOCK = ("runtime.finBlock", "runtime.finblock")


def _walk(core, first, next_off, limit=100000):
    """The addresses of a NULL-terminated list from first, following the word at next_off."""
    out, seen, node = [], set(), first
    while node and len(out) < limit and node not in seen:
        out.append(node)
        seen.add(node)
        node = core.word(node + next_off)
    return out


def _in_use_spans(core, layout):
    """The addresses of the in-use spans of mheap_.allspans."""
    heap = layout.global_addr("runtime.mheap_")
    allspans = heap + layout.field(("runtime.mheap",), "allspans")
    base, n = core.word(allspans), core.word(allspans + WORD)
    state = layout.field(MSPAN, "state")
    out = []
    for i in range(n):
        span = core.word(base + i * WORD)
        if span and core.uint(span + state, 1) == MSPAN_IN_USE:
            out.append(span)
    return out


def span_memory(core_path, binary):
    """[(start, bytes)] of the memory of every in-use span: what the core reader needs
    in the core's file (tests/fuzz/tools/prune_core.py --keep)."""
    core, layout = Core(core_path), Layout(binary)
    start, npages = layout.field(MSPAN, "startAddr"), layout.field(MSPAN, "npages")
    return [(core.word(s + start), core.word(s + npages) * GO_PAGE)
            for s in _in_use_spans(core, layout)]


def _spans_with_specials(core, layout):
    """(span, its specials' addresses) of every in-use span with specials."""
    specials = layout.field(MSPAN, "specials")
    nxt = layout.field(SPECIAL, "next")
    out = []
    for span in _in_use_spans(core, layout):
        first = core.word(span + specials)
        if first:
            out.append((span, _walk(core, first, nxt)))
    return out


def specials_of(core_path, binary):
    """(span, its specials' addresses): the in-use span with the most specials, whose
    list the specials' patches change."""
    spans = _spans_with_specials(Core(core_path), Layout(binary))
    if not spans:
        raise PatchError("%s: no in-use span has specials" % core_path)
    return max(spans, key=lambda s: len(s[1]))


def nodes(core_path, binary, which):
    """The node addresses of a list of the core, in order: which is "mbuckets", "allm",
    "allfin", or "specials" (the specials of the in-use span with the most)."""
    if which == "specials":
        return specials_of(core_path, binary)[1]
    core, layout = Core(core_path), Layout(binary)
    glob, structs, link = {
        "mbuckets": ("runtime.mbuckets", BUCKET, "allnext"),
        "allm": ("runtime.allm", M, "alllink"),
        "allfin": ("runtime.allfin", FINBLOCK, "alllink"),
    }[which]
    return _walk(core, core.word(layout.global_addr(glob)), layout.field(structs, link))


def all_nodes(core_path, binary):
    """[(kind, address)] of every node of the lists the core reader follows, in list
    order: "bucket" (runtime.mbuckets), "m" (runtime.allm), "finblock" (runtime.allfin),
    "g" (runtime.allgs), "span" and "special" (the in-use spans with specials, and
    their specials). For a fuzzing dictionary of the core's own pointers."""
    core, layout = Core(core_path), Layout(binary)
    out = [("bucket", a) for a in nodes(core_path, binary, "mbuckets")]
    out += [("m", a) for a in nodes(core_path, binary, "allm")]
    out += [("finblock", a) for a in nodes(core_path, binary, "allfin")]
    allgs = layout.global_addr("runtime.allgs")
    base, n = core.word(allgs), core.word(allgs + WORD)
    out += [("g", core.word(base + i * WORD)) for i in range(n)]
    for span, specials in _spans_with_specials(core, layout):
        out.append(("span", span))
        out += [("special", a) for a in specials]
    return out


def _copy(core_path, out_dir, name):
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, name)
    if shutil.which("cp"):
        subprocess.run(["cp", "--sparse=always", core_path, out], check=True)
    else:
        shutil.copyfile(core_path, out)
    return out


def _patched(core_path, out_dir, name, addr, value):
    """A copy of the core with the word at addr set to value."""
    out = _copy(core_path, out_dir, name)
    off = Core(out).offset(addr)
    with open(out, "r+b") as f:
        f.seek(off)
        f.write(value.to_bytes(WORD, "little"))
    return out


LIST_NAMES = {"mbuckets": "runtime.mbuckets", "specials": "the span with the most specials",
              "allm": "runtime.allm", "allfin": "runtime.allfin"}


def _need(nodes_, n, what):
    if len(nodes_) < n:
        raise PatchError("%s has %d node(s), the patch needs %d" % (what, len(nodes_), n))


def _loop(core_path, binary, out_dir, which, struct, field, src, dst, name, says):
    """A copy of the core in which node src of list which (an index; -1 the last) links
    to node dst through field of struct; says(nodes) describes it."""
    ns = nodes(core_path, binary, which)
    _need(ns, max(src, dst, 0) + 1, LIST_NAMES[which])
    link = Layout(binary).field(struct, field)
    return _patched(core_path, out_dir, name, ns[src] + link, ns[dst]), says(ns)


def _patch(name, doc, which, struct, field, src, dst, says, need=0):
    """A patch function name(core_path, binary, out_dir): node src of list which (an
    index; -1 the last) linked to node dst through field of struct; says(nodes) describes
    it. need: nodes the list must have at least, besides src and dst."""
    def patch(core_path, binary, out_dir):
        _need(nodes(core_path, binary, which), need, LIST_NAMES[which])
        return _loop(core_path, binary, out_dir, which, struct, field, src, dst,
                     name.replace("_", "-") + ".core", says)
    patch.__name__, patch.__doc__ = name, doc
    return patch


bucket_self_loop = _patch(
    "bucket_self_loop", "runtime.mbuckets' first bucket's allnext pointing to itself.",
    "mbuckets", BUCKET, "allnext", 0, 0,
    lambda b: "the allnext of memory-profile bucket 0x%x (the first of runtime.mbuckets) "
    "points to itself" % b[0])
bucket_two_node_loop = _patch(
    "bucket_two_node_loop", "runtime.mbuckets' second bucket's allnext pointing back to the "
    "first.", "mbuckets", BUCKET, "allnext", 1, 0,
    lambda b: "the allnext of memory-profile bucket 0x%x (the second of runtime.mbuckets) "
    "points back to the first, 0x%x" % (b[1], b[0]))
bucket_whole_loop = _patch(
    "bucket_whole_loop", "runtime.mbuckets' last bucket's allnext pointing back to the "
    "first: a loop as long as the list (three buckets at least).",
    "mbuckets", BUCKET, "allnext", -1, 0,
    lambda b: "the allnext of memory-profile bucket 0x%x (the last of the %d of "
    "runtime.mbuckets) points back to the first, 0x%x" % (b[-1], len(b), b[0]), need=3)
special_self_loop = _patch(
    "special_self_loop", "A span's first special's next pointing to itself.",
    "specials", SPECIAL, "next", 0, 0,
    lambda sp: "the next of special 0x%x (the first of a span's specials) points to itself"
    % sp[0])
special_two_node_loop = _patch(
    "special_two_node_loop", "A span's second special's next pointing back to the first.",
    "specials", SPECIAL, "next", 1, 0,
    lambda sp: "the next of special 0x%x (the second of a span's specials) points back to "
    "the first, 0x%x" % (sp[1], sp[0]))
m_self_loop = _patch(
    "m_self_loop", "runtime.allm's first M's alllink pointing to itself.",
    "allm", M, "alllink", 0, 0,
    lambda ms: "the alllink of M 0x%x (the first of runtime.allm) points to itself" % ms[0])
finblock_self_loop = _patch(
    "finblock_self_loop", "runtime.allfin's first finalizer block's alllink pointing to "
    "itself.", "allfin", FINBLOCK, "alllink", 0, 0,
    lambda fb: "the alllink of finalizer block 0x%x (the first of runtime.allfin) points to "
    "itself" % fb[0])


PATCHES = (bucket_self_loop, bucket_two_node_loop, bucket_whole_loop, special_self_loop,
           special_two_node_loop, m_self_loop, finblock_self_loop)
