# SPDX-License-Identifier: Apache-2.0
"""An independent reachability computation on a Go heap dump, to check heapref's.

Written from the dump format (the go1.5-go1.7 heap dump description, checked
against the writer in $GOROOT/src/runtime/heapdump.go), not from heapref's C code.

    d = reach.load(path)      # the whole dump, parsed
    r = reach.reachable(d)    # r.objects, r.bytes, r.unreachable_objects,
                              # r.unreachable_bytes, r.addrs (start addresses reached)
    reach.reachable_from(d, reach.segment_words(d, addr, size))
                              # the objects one global keeps reachable (indices)

    python3 reach.py DUMP     # prints the figures as JSON

Roots (the same definition heapref's scanner uses):
  - data and bss words whose pointer bit is set;
  - stack frame words whose pointer bit is set;
  - registered finalizers: the fn word, and the pointer words of the object that
    contains obj, but not that object itself;
  - queued finalizers: obj and fn;
  - other roots: their pointer.
A value reaches the heap object whose [addr, addr+size) contains it; from a reached
object every pointer word is followed. An object's size is its contents' length.

Standard library only.
"""

import bisect
import collections
import json
import re
import struct
import sys

HEADERS = (b"go1.5 heap dump\n", b"go1.6 heap dump\n", b"go1.7 heap dump\n")

# Record kinds.
EOF, OBJECT, OTHER_ROOT, TYPE, GOROUTINE, FRAME, PARAMS, FINALIZER, ITAB, \
    OS_THREAD, MEMSTATS, QUEUED_FINALIZER, DATA, BSS, DEFER, PANIC, MEMPROF, \
    ALLOC_SAMPLE = range(18)

# Field layouts of the records with a fixed shape, in the order
# runtime/heapdump.go writes them: u = uvarint, b = bool (a uvarint), s = string,
# c = contents (kept as its position and length in the file), f = field list.
Params = collections.namedtuple(
    "Params", "big_endian ptr_size heap_start heap_end arch go_version ncpu")
OtherRoot = collections.namedtuple("OtherRoot", "description ptr")
Type = collections.namedtuple("Type", "addr size name indirect")
Goroutine = collections.namedtuple(
    "Goroutine", "addr sp goid gopc status system background wait_since wait_reason "
    "ctxt m defer panic")
Frame = collections.namedtuple(
    "Frame", "sp depth child_sp pos size entry_pc pc cont_pc name offsets")
Finalizer = collections.namedtuple("Finalizer", "obj fn fn_pc fint ot")
Itab = collections.namedtuple("Itab", "addr type")
OSThread = collections.namedtuple("OSThread", "addr id procid")
Segment = collections.namedtuple("Segment", "addr pos size offsets")
Defer = collections.namedtuple("Defer", "addr g argp pc fn fn_pc link")
Panic = collections.namedtuple("Panic", "addr g arg_type arg_data defer link")
AllocSample = collections.namedtuple("AllocSample", "addr record")

LAYOUTS = {
    PARAMS: ("buuussu", Params),
    OTHER_ROOT: ("su", OtherRoot),
    TYPE: ("uusb", Type),
    GOROUTINE: ("uuuuubbusuuuu", Goroutine),
    FRAME: ("uuucuuusf", Frame),
    FINALIZER: ("uuuuu", Finalizer),
    QUEUED_FINALIZER: ("uuuuu", Finalizer),
    ITAB: ("uu", Itab),
    OS_THREAD: ("uuu", OSThread),
    MEMSTATS: ("u" * (24 + 256 + 1), tuple),  # 24 fields, PauseNs[256], NumGC
    DATA: ("ucf", Segment),
    BSS: ("ucf", Segment),
    DEFER: ("uuuuuuu", Defer),
    PANIC: ("uuuuuu", Panic),
    ALLOC_SAMPLE: ("uu", AllocSample),
}

# A field list: (kind, offset) uvarint pairs ended by kind 0. The writer only emits
# kind 1 (pointer); kinds 2 and 3 (iface, eface) are from pre-1.5 dumps and are
# rejected. A canonical uvarint is any run of bytes >= 0x80 then one byte < 0x80.
_FIELD_LIST = re.compile(rb"(?:\x01[\x80-\xff]*[\x00-\x7f])*\x00")
_FIELD = re.compile(rb"\x01([\x80-\xff]*[\x00-\x7f])")


class _Offsets(dict):
    """Offset uvarint bytes -> value; few distinct offsets recur across objects."""

    def __missing__(self, raw):
        v = 0
        for k, b in enumerate(raw):
            v |= (b & 0x7F) << (7 * k)
        self[raw] = v
        return v


_OFFSETS = _Offsets()


class DumpError(ValueError):
    pass


def _uvarint(buf, i):
    """(value, next position) of the uvarint at buf[i]."""
    b = buf[i]
    if b < 0x80:
        return b, i + 1
    v, s = b & 0x7F, 7
    while True:
        i += 1
        b = buf[i]
        v |= (b & 0x7F) << s
        if b < 0x80:
            return v, i + 1
        s += 7


def _field_list(buf, i):
    """(end position, start, end of the pairs) of the field list at buf[i]."""
    m = _FIELD_LIST.match(buf, i)
    if not m:
        _bad_field_list(buf, i)
    return m.end(), i, m.end() - 1


def _bad_field_list(buf, i):
    while buf[i] == 1:   # find where it goes wrong, for the message
        i = _uvarint(buf, i + 1)[1]
    raise DumpError("field kind %d at offset %d (only 1=pointer and 0=end exist)"
                    % (buf[i], i))


def _decode_offsets(buf, start, end):
    return list(map(_OFFSETS.__getitem__, _FIELD.findall(buf, start, end)))


class Dump:
    """A parsed heap dump.

    Objects are sorted by address: addrs[i], sizes[i]; their pointer-word offsets
    come from ptr_offsets(i) and the values of those words from object_words(i)
    (decoded on demand: a dump can hold millions of pointer slots). Other records
    are kept whole as named tuples; contents are kept as (pos, size) into buf.
    """

    def __init__(self, buf):
        self.buf = buf
        self.header = b""
        self.params = None
        self.addrs, self.sizes = [], []
        self._cpos, self._fend = [], []   # contents position; end of the pairs
        self.other_roots, self.types, self.goroutines, self.frames = [], [], [], []
        self.finalizers, self.queued_finalizers, self.itabs, self.threads = [], [], [], []
        self.data, self.bss, self.defers, self.panics = [], [], [], []
        self.memstats = None
        self.memprof, self.alloc_samples = [], []
        self.records = collections.Counter()   # kind -> count
        self._word = None

    # -- lookups --------------------------------------------------------------

    def find(self, value):
        """Index of the object whose [addr, addr+size) holds value, or None."""
        i = bisect.bisect_right(self.addrs, value) - 1
        if i >= 0 and value - self.addrs[i] < self.sizes[i]:
            return i
        return None

    def ptr_offsets(self, i):
        """Offsets of object i's pointer words."""
        return _decode_offsets(self.buf, self._cpos[i] + self.sizes[i], self._fend[i])

    def object_words(self, i):
        """Values of object i's pointer words."""
        return self._words(self._cpos[i], self.sizes[i], self.ptr_offsets(i))

    def contents(self, rec):
        """Bytes of a frame or segment record (or object index)."""
        if isinstance(rec, int):
            return self.buf[self._cpos[rec]:self._cpos[rec] + self.sizes[rec]]
        return self.buf[rec.pos:rec.pos + rec.size]

    def words(self, rec):
        """Values of a frame's or a data/bss segment's pointer words."""
        return self._words(rec.pos, rec.size, rec.offsets)

    def word_reader(self):
        """struct's unpack_from for one pointer word of this dump."""
        if self._word is None:
            if self.params is None:
                raise DumpError("no params record: pointer size unknown")
            fmt = (">" if self.params.big_endian else "<") + \
                {8: "Q", 4: "I"}[self.params.ptr_size]
            self._word = struct.Struct(fmt).unpack_from
        return self._word

    def _words(self, pos, size, offsets):
        word, buf, last = self.word_reader(), self.buf, size - self.params.ptr_size
        # a word past the contents (a frame's conservative args) holds nothing we have
        return [word(buf, pos + o)[0] for o in offsets if o <= last]


def load(path):
    """Parses the heap dump at path; returns a Dump."""
    with open(path, "rb") as f:
        return parse(f.read())


def parse(buf):
    """Parses a heap dump held in bytes; returns a Dump."""
    d = Dump(buf)
    d.header = next((h for h in HEADERS if buf.startswith(h)), None)
    if d.header is None:
        raise DumpError("not a go1.5-go1.7 heap dump (header %r)" % buf[:16])
    lists = {OTHER_ROOT: d.other_roots, TYPE: d.types, GOROUTINE: d.goroutines,
             FRAME: d.frames, FINALIZER: d.finalizers,
             QUEUED_FINALIZER: d.queued_finalizers, ITAB: d.itabs,
             OS_THREAD: d.threads, DATA: d.data, BSS: d.bss, DEFER: d.defers,
             PANIC: d.panics, ALLOC_SAMPLE: d.alloc_samples}
    addrs, sizes, cpos, fend = d.addrs, d.sizes, d._cpos, d._fend
    match, n, records = _FIELD_LIST.match, len(buf), d.records
    i = len(d.header)
    try:
        while True:
            kind = buf[i]
            i += 1
            if kind == OBJECT:   # the bulk of the file: parsed inline, for speed
                b = buf[i]   # uvarint address
                addr, sh, i = b & 0x7F, 7, i + 1
                while b >= 0x80:
                    b = buf[i]
                    addr, sh, i = addr | (b & 0x7F) << sh, sh + 7, i + 1
                b = buf[i]   # uvarint contents length
                size, sh, i = b & 0x7F, 7, i + 1
                while b >= 0x80:
                    b = buf[i]
                    size, sh, i = size | (b & 0x7F) << sh, sh + 7, i + 1
                addrs.append(addr)
                sizes.append(size)
                cpos.append(i)
                i += size
                if buf[i] == 0:   # no pointers
                    fend.append(i)
                    i += 1
                else:
                    m = match(buf, i)
                    if m is None:
                        _bad_field_list(buf, i)
                    i = m.end()
                    fend.append(i - 1)
                continue
            records[kind] += 1
            if kind in LAYOUTS:
                layout, make = LAYOUTS[kind]
                rec, i = _record(buf, i, layout)
                rec = make(rec) if make is tuple else make(*rec)
                if kind == PARAMS:
                    d.params = rec
                elif kind == MEMSTATS:
                    d.memstats = rec
                else:
                    lists[kind].append(rec)
            elif kind == MEMPROF:
                rec, i = _memprof(buf, i)
                d.memprof.append(rec)
            elif kind == EOF:
                break
            else:
                raise DumpError("unknown record kind %d at offset %d" % (kind, i - 1))
            if i > n:
                raise IndexError
    except IndexError:
        raise DumpError("truncated dump (no EOF record)")
    if i != n:
        raise DumpError("%d bytes after the EOF record" % (n - i))
    records[OBJECT] = len(addrs)
    _sort_objects(d)
    return d


def _record(buf, i, layout):
    out = []
    for t in layout:
        if t in "ub":
            v, i = _uvarint(buf, i)
        elif t == "s":
            size, i = _uvarint(buf, i)
            v, i = buf[i:i + size].decode("utf-8", "replace"), i + size
        elif t == "c":   # contents: position and size, the next field is its size
            size, i = _uvarint(buf, i)
            out.append(i)
            v, i = size, i + size
        else:            # "f"
            i, start, end = _field_list(buf, i)
            v = _decode_offsets(buf, start, end)
        out.append(v)
    if i > len(buf):
        raise IndexError
    return out, i


def _memprof(buf, i):
    """(id, size, [(func, file, line)...], allocs, frees)."""
    (rid, size, nstk), i = _record(buf, i, "uuu")
    frames = []
    for _ in range(nstk):
        f, i = _record(buf, i, "ssu")
        frames.append(tuple(f))
    (allocs, frees), i = _record(buf, i, "uu")
    return (rid, size, frames, allocs, frees), i


def _sort_objects(d):
    """Sorts the objects by address (the runtime writes them span by span)."""
    a = d.addrs
    if any(x >= y for x, y in zip(a, a[1:])):
        order = sorted(range(len(a)), key=a.__getitem__)
        for name in ("addrs", "sizes", "_cpos", "_fend"):
            lst = getattr(d, name)
            setattr(d, name, [lst[k] for k in order])
    a, s = d.addrs, d.sizes
    if any(x + z > y for x, z, y in zip(a, s, a[1:])):
        k = next(k for k in range(1, len(a)) if a[k - 1] + s[k - 1] > a[k])
        raise DumpError("objects at %#x (+%d) and %#x overlap"
                        % (a[k - 1], s[k - 1], a[k]))


class Reach:
    """What reachable() found: counts and bytes, reached and not."""

    def __init__(self, d, seen):
        self.seen = seen   # bytearray: seen[i] for object i of d
        self.addrs = {a for a, s in zip(d.addrs, seen) if s}
        self.objects = len(self.addrs)
        self.bytes = sum(z for z, s in zip(d.sizes, seen) if s)
        self.total_objects = len(d.addrs)
        self.total_bytes = sum(d.sizes)
        self.unreachable_objects = self.total_objects - self.objects
        self.unreachable_bytes = self.total_bytes - self.bytes

    def as_dict(self):
        return {k: getattr(self, k) for k in (
            "objects", "bytes", "unreachable_objects", "unreachable_bytes",
            "total_objects", "total_bytes")}


def reachable(d):
    """Marks every object reachable from the roots (see the module doc)."""
    starts, sizes = d.addrs, d.sizes
    seen = bytearray(len(starts))
    work = []
    if not starts:
        return Reach(d, seen)
    lo, hi = starts[0], starts[-1] + sizes[-1]
    find = bisect.bisect_right

    def mark_all(values):
        for v in values:
            if lo <= v < hi:
                k = find(starts, v) - 1
                if v - starts[k] < sizes[k] and not seen[k]:
                    seen[k] = 1
                    work.append(k)

    for rec in d.data + d.bss + d.frames:
        mark_all(d.words(rec))
    for f in d.finalizers:
        mark_all([f.fn])
        k = d.find(f.obj)
        if k is not None:   # scan the object, but it is not reached through this
            mark_all(d.object_words(k))
    for f in d.queued_finalizers:
        mark_all([f.obj, f.fn])
    mark_all([r.ptr for r in d.other_roots])

    # The same as mark_all(d.object_words(k)) for each object on the worklist (an
    # explicit one: lists of 100k+ nodes exist), inlined: this loop is most of the time.
    buf, cpos, fend, word = d.buf, d._cpos, d._fend, d.word_reader()
    pairs, offset = _FIELD.findall, _OFFSETS.__getitem__
    while work:
        k = work.pop()
        p = cpos[k]
        # (the runtime writes an object's offsets from its size, so all lie inside)
        for raw in pairs(buf, p + sizes[k], fend[k]):
            v = word(buf, p + offset(raw))[0]
            if lo <= v < hi:
                j = find(starts, v) - 1
                if v - starts[j] < sizes[j] and not seen[j]:
                    seen[j] = 1
                    work.append(j)
    return Reach(d, seen)


def segment_words(d, addr, size):
    """Values of the data and bss pointer words in [addr, addr+size): a global's."""
    values = []
    for seg in d.data + d.bss:
        if seg.addr < addr + size and addr < seg.addr + seg.size:
            word = d.word_reader()
            values += [word(d.buf, seg.pos + o)[0] for o in seg.offsets
                       if addr <= seg.addr + o < addr + size]
    return values


def reachable_from(d, values):
    """The indices of the objects the pointer values reach, and everything they reach
    by their pointer words: what a variable holding those values keeps reachable."""
    seen, work = set(), list(values)
    while work:
        k = d.find(work.pop())
        if k is not None and k not in seen:
            seen.add(k)
            work.extend(d.object_words(k))
    return seen


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.stderr.write("usage: reach.py DUMP\n")
        return 2
    print(json.dumps(reachable(load(argv[0])).as_dict(), sort_keys=True))
    return 0


def size_class(d, n):
    """The size of an object allocated for n bytes (n <= 32 KiB), from the dump: the
    smallest object size in it that is >= n. Valid when objects of that request size
    are in the dump (the program's own are)."""
    sizes = getattr(d, "_size_set", None)
    if sizes is None:
        sizes = d._size_set = sorted(set(d.sizes))
    for s in sizes:
        if s >= n:
            return s
    raise AssertionError("no object of %d bytes or more in the dump" % n)

if __name__ == "__main__":
    sys.exit(main())
