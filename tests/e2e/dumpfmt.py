# SPDX-License-Identifier: Apache-2.0
"""Reads and writes Go heap dump records (go1.5-go1.7 format): the one encoder and
decoder of the format's pieces that the tests and the fuzz corpus tools share
(tests/fuzz/tools/make_seeds.py puts this folder on its path).

Independent of heapref's C reader: a record is split by the layouts that
runtime/heapdump.go writes. Standard library only.

    hdr, recs = split(open(path, "rb").read())   # recs: list of Record
    Record.kind, .raw (its bytes), .fields (decoded values, see LAYOUTS)
    encode(kind, fields) -> bytes                 # the inverse of decoding one record
    uvarint(buf, i) -> (value, i)                 # the pieces, each way
    field_list(buf, i) -> (offsets, i)
    put_uvarint(v), put_string(b), put_field_list(offsets) -> bytes
"""

import collections

HEADER_LEN = 16

EOF, OBJECT, OTHER_ROOT, TYPE, GOROUTINE, FRAME, PARAMS, FINALIZER, ITAB, \
    OS_THREAD, MEMSTATS, QUEUED_FINALIZER, DATA, BSS, DEFER, PANIC, MEMPROF, \
    ALLOC_SAMPLE = range(18)

# u = uvarint, b = bool, s = bytes (string or contents), f = field list (offsets).
# MEMPROF has a variable shape and is handled on its own.
LAYOUTS = {
    EOF: "",
    OBJECT: "usf",
    OTHER_ROOT: "su",
    TYPE: "uusb",
    GOROUTINE: "uuuuubbusuuuu",
    FRAME: "uuusuuusf",
    PARAMS: "buuussu",
    FINALIZER: "uuuuu",
    QUEUED_FINALIZER: "uuuuu",
    ITAB: "uu",
    OS_THREAD: "uuu",
    MEMSTATS: "u" * (24 + 256 + 1),
    DATA: "usf",
    BSS: "usf",
    DEFER: "uuuuuuu",
    PANIC: "uuuuuu",
    ALLOC_SAMPLE: "uu",
}

Record = collections.namedtuple("Record", "kind raw fields")


def uvarint(buf, i):
    v = s = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << s
        if b < 0x80:
            return v, i
        s += 7


def put_uvarint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def put_string(b):
    """A string or byte field: its length, then its bytes (str is UTF-8 encoded)."""
    b = b.encode() if isinstance(b, str) else bytes(b)
    return put_uvarint(len(b)) + b


def field_list(buf, i):
    """The offsets of the (kind, offset) field list at buf[i], ended by kind 0."""
    offsets = []
    while True:
        kind, i = uvarint(buf, i)
        if kind == 0:
            return offsets, i
        off, i = uvarint(buf, i)
        offsets.append(off)


def put_field_list(offsets):
    """A field list of pointer fields (kind 1) at these offsets."""
    return b"".join(b"\x01" + put_uvarint(o) for o in offsets) + b"\x00"


def _read_field(buf, i, code):
    if code in "ub":
        return uvarint(buf, i)
    if code == "s":
        n, i = uvarint(buf, i)
        return bytes(buf[i:i + n]), i + n
    return field_list(buf, i)


def _put_field(code, v):
    if code in "ub":
        return put_uvarint(v)
    if code == "s":
        return put_string(v)
    return put_field_list(v)


def _read_memprof(buf, i):
    bucket, i = uvarint(buf, i)
    size, i = uvarint(buf, i)
    n, i = uvarint(buf, i)
    frames = []
    for _ in range(n):
        fn, i = _read_field(buf, i, "s")
        file, i = _read_field(buf, i, "s")
        line, i = uvarint(buf, i)
        frames.append((fn, file, line))
    allocs, i = uvarint(buf, i)
    frees, i = uvarint(buf, i)
    return [bucket, size, frames, allocs, frees], i


def split(buf):
    """(header bytes, [Record]) of a whole, well-formed dump."""
    i = HEADER_LEN
    recs = []
    while i < len(buf):
        start = i
        kind, i = uvarint(buf, i)
        if kind == MEMPROF:
            fields, i = _read_memprof(buf, i)
        else:
            fields = []
            for code in LAYOUTS[kind]:
                v, i = _read_field(buf, i, code)
                fields.append(v)
        recs.append(Record(kind, bytes(buf[start:i]), fields))
        if kind == EOF:
            break
    return bytes(buf[:HEADER_LEN]), recs


def encode(kind, fields):
    out = [put_uvarint(kind)]
    if kind == MEMPROF:
        bucket, size, frames, allocs, frees = fields
        out += [put_uvarint(bucket), put_uvarint(size), put_uvarint(len(frames))]
        for fn, file, line in frames:
            out += [_put_field("s", fn), _put_field("s", file), put_uvarint(line)]
        out += [put_uvarint(allocs), put_uvarint(frees)]
    else:
        out += [_put_field(c, v) for c, v in zip(LAYOUTS[kind], fields)]
    return b"".join(out)


# --- the older formats: go1.3 and go1.4 ---------------------------------------------------
#
# Written from Go 1.3's runtime/heapdump.c and Go 1.4's heapdump.go (docs/heap-dumps.md):
# the record kinds are numbered as in go1.5. What differs, and what these encoders write:
#   params  go1.3: bool big-endian, ptr size, channel header size, heap start, heap end,
#                  architecture letter ('6' = amd64), GOEXPERIMENT string, ncpu
#           go1.4: the same without the channel header size
#   type    go1.3: address, size, name, bool data-is-pointer, then a field list of
#                  (kind, offset): 1 ptr, 2 string, 3 slice, 4 iface, 5 eface; 0 ends it
#           go1.4: as go1.5 (no field list)
#   object  go1.3: address, type address (0: none), kind (0 one T, 1 array of T,
#                  2 channel of T, 127 conservative), contents - no field list
#           go1.4: as go1.5, its field list with kinds 1 ptr, 2 iface, 3 eface
#   itab    go1.3: address, bool data-is-pointer;  go1.4: as go1.5
# Frames, data and bss keep go1.5's layout, their field lists using the kinds above.

GO13_HEADER = b"go1.3 heap dump\n"
GO14_HEADER = b"go1.4 heap dump\n"
ARCH_LETTER = {b"amd64": ord("6"), b"386": ord("8"), b"arm": ord("5")}


def put_kind_fields(pairs):
    """A field list of (kind, offset) pairs, kinds in the dump's own numbering."""
    return b"".join(put_uvarint(k) + put_uvarint(o) for k, o in pairs) + b"\x00"


def params_legacy(minor, ptr_size, heap_start, heap_end, arch=b"amd64", hchan_size=96,
                  goexperiment=b"", ncpu=2, big_endian=0):
    out = [put_uvarint(PARAMS), put_uvarint(big_endian), put_uvarint(ptr_size)]
    if minor == 3:
        out.append(put_uvarint(hchan_size))
    out += [put_uvarint(heap_start), put_uvarint(heap_end), put_uvarint(ARCH_LETTER[arch]),
            put_string(goexperiment), put_uvarint(ncpu)]
    return b"".join(out)


def type13(addr, size, name, data_is_ptr, pairs):
    return (put_uvarint(TYPE) + put_uvarint(addr) + put_uvarint(size) + put_string(name) +
            put_uvarint(int(data_is_ptr)) + put_kind_fields(pairs))


def object13(addr, type_addr, kind, contents):
    return (put_uvarint(OBJECT) + put_uvarint(addr) + put_uvarint(type_addr) +
            put_uvarint(kind) + put_string(contents))


def itab13(addr, data_is_ptr):
    return put_uvarint(ITAB) + put_uvarint(addr) + put_uvarint(int(data_is_ptr))


# Where convert() puts the type records it makes up for go1.3 objects: above any heap.
SYNTH_TYPE_BASE = 0x7F0000000000


def _typed_object(fields, synth, object_record, type_record, pointer_kind):
    """A go1.5 object record as the go1.3 layouts say it: an object with pointers gets a
    made-up type record "heapref.tN" (one per distinct size and pointer offsets, kept in
    synth, written before its first object) whose field list is the object's pointers
    (pointer_kind each), objects without pointers type 0; kind 0 (one value)."""
    addr, contents, offsets = fields
    if not offsets:
        return [object_record(addr, 0, 0, contents)]
    out = []
    key = (len(contents), tuple(offsets))
    if key not in synth:
        taddr = SYNTH_TYPE_BASE + 0x100 * len(synth)
        synth[key] = taddr
        out.append(type_record(taddr, len(contents), "heapref.t%d" % len(synth), 1,
                               [(pointer_kind, o) for o in sorted(set(offsets))]))
    out.append(object_record(addr, synth[key], 0, contents))
    return out


def convert(buf, minor):
    """A go1.5-go1.7 dump rewritten in the go1.3 or go1.4 layout, the same heap.

    go1.4 needs only the params record rewritten. go1.3 objects carry a type instead of
    a field list: each object with pointers gets a made-up type record "heapref.tN"
    (one per distinct size and pointer offsets) whose field list is the object's, and
    kind 0; objects without pointers get type 0, kind 0. go1.3 type records get an
    empty field list, itabs a data-is-pointer flag of 1. The pointer words stay those of
    the original, so an analysis of either must charge the same objects to the same
    roots; the made-up type names show only where the records name objects."""
    _, recs = split(buf)
    out = [GO13_HEADER if minor == 3 else GO14_HEADER]
    synth = {}
    for r in recs:
        f = r.fields
        if r.kind == PARAMS:
            big, ps, lo, hi, arch, _version, ncpu = f
            out.append(params_legacy(minor, ps, lo, hi, arch, ncpu=ncpu, big_endian=big))
        elif minor == 4:
            out.append(r.raw)
        elif r.kind == OBJECT:
            out += _typed_object(f, synth, object13, type13, 1)
        elif r.kind == TYPE:
            addr, size, name, ptr = f
            out.append(type13(addr, size, name, ptr, []))
        elif r.kind == ITAB:
            out.append(itab13(f[0], 1))
        else:
            out.append(r.raw)
    return b"".join(out)


# --- the pre-release go1.3 layout (seed 002) ------------------------------------------------
#
# Written from the description of the runtime patch that came before Go 1.3's release
# (docs/heap-dumps.md): the header of go1.3, its own record kinds, roots as pointers.
#   1 object     address, type address (0: none, no pointers), kind (0 one T, 1 array of
#                T, 2 channel of T), contents
#   3 EOF
#   4 stack root address where the pointer was found, the pointer, its frame's sp
#   5 data root  address where the pointer was found, the pointer
#   6 other root description, pointer
#   7 type       address, size, name, bool data-is-pointer, field count, then (kind,
#                offset) pairs: 0 ptr, 1 string, 2 slice, 3 iface, 4 eface
#   8 goroutine  address, top frame's sp, id, creating PC, status, bool system,
#                bool background, wait since, wait reason
#   9 frame      sp, parent's sp (0 at the bottom), entry PC, PC, function name
#   10 params    bool big-endian, ptr size, channel header size, heap start, heap end
#   11 finalizer object, funcval, code PC, argument type, object type
#   12 itab      address, bool data-is-pointer

PRE_OBJECT, PRE_EOF, PRE_STACK_ROOT, PRE_DATA_ROOT, PRE_OTHER_ROOT, PRE_TYPE, \
    PRE_GOROUTINE, PRE_FRAME, PRE_PARAMS, PRE_FINALIZER, PRE_ITAB = (1, 3, 4, 5, 6, 7, 8, 9,
                                                                     10, 11, 12)


def _pre(kind, shape, *values):
    return put_uvarint(kind) + b"".join(_put_field(c, v) for c, v in zip(shape, values))


def pre_params(ptr_size, heap_start, heap_end, hchan_size=96, big_endian=0):
    return _pre(PRE_PARAMS, "buuuu", big_endian, ptr_size, hchan_size, heap_start, heap_end)


def pre_type(addr, size, name, data_is_ptr, pairs):
    return (_pre(PRE_TYPE, "uusbu", addr, size, name, data_is_ptr, len(pairs)) +
            b"".join(put_uvarint(k) + put_uvarint(o) for k, o in pairs))


def pre_object(addr, type_addr, kind, contents):
    return _pre(PRE_OBJECT, "uuus", addr, type_addr, kind, contents)


def pre_itab(addr, data_is_ptr):
    return _pre(PRE_ITAB, "ub", addr, data_is_ptr)


def pre_stack_root(addr, ptr, frame_sp):
    return _pre(PRE_STACK_ROOT, "uuu", addr, ptr, frame_sp)


def pre_data_root(addr, ptr):
    return _pre(PRE_DATA_ROOT, "uu", addr, ptr)


def pre_other_root(description, ptr):
    return _pre(PRE_OTHER_ROOT, "su", description, ptr)


def pre_goroutine(addr, tos, goid, gopc, status, wait_reason, system=0, background=0,
                  wait_since=0):
    return _pre(PRE_GOROUTINE, "uuuuubbus", addr, tos, goid, gopc, status, system, background,
                wait_since, wait_reason)


def pre_frame(sp, parent, entry, pc, name):
    return _pre(PRE_FRAME, "uuuus", sp, parent, entry, pc, name)


def pre_finalizer(obj, fn, pc, arg_type, obj_type):
    return _pre(PRE_FINALIZER, "uuuuu", obj, fn, pc, arg_type, obj_type)


def pre_eof():
    return put_uvarint(PRE_EOF)


def _word(buf, off, ps):
    return int.from_bytes(buf[off:off + ps], "little")


def _pre_goroutine_and_frames(g, frames, ps):
    """A goroutine and its frames (go1.5 records, depth order) in the pre-release layout:
    the goroutine names its top frame, each frame its parent, each pointer word of a
    frame becomes a stack root."""
    addr, _sp, goid, gopc, status, system, background, since, reason = g.fields[:9]
    out = [pre_goroutine(addr, frames[0].fields[0] if frames else 0, goid, gopc, status,
                         reason, system, background, since)]
    for i, f in enumerate(frames):
        sp, _depth, _child, contents, entry, pc, _cont, name, offsets = f.fields
        parent = frames[i + 1].fields[0] if i + 1 < len(frames) else 0
        out.append(pre_frame(sp, parent, entry, pc, name))
        out += [pre_stack_root(sp + o, _word(contents, o, ps), sp) for o in sorted(set(offsets))]
    return out


def convert_prerelease(buf):
    """A go1.5-go1.7 dump rewritten in the pre-release go1.3 layout, the same heap.

    Objects get types as convert() gives go1.3 objects (field kinds renumbered); every
    pointer word of the data and bss segments becomes a data root, every pointer word of
    a frame a stack root of that frame; a queued finalizer's two pointers become other
    roots. What the layout cannot say is left out: OS threads, memstats, defers, panics,
    the memory profile."""
    _, recs = split(buf)
    ps = 8
    out = [GO13_HEADER]
    synth = {}
    g, frames = None, []
    for r in recs:
        f = r.fields
        if r.kind != FRAME and g is not None:
            out += _pre_goroutine_and_frames(g, frames, ps)
            g, frames = None, []
        if r.kind == PARAMS:
            big, ps, lo, hi = f[:4]
            out.append(pre_params(ps, lo, hi, big_endian=big))
        elif r.kind == OBJECT:
            out += _typed_object(f, synth, pre_object, pre_type, 0)
        elif r.kind == TYPE:
            addr, size, name, ptr = f
            out.append(pre_type(addr, size, name, ptr, []))
        elif r.kind == ITAB:
            out.append(pre_itab(f[0], 1))
        elif r.kind == GOROUTINE:
            g = r
        elif r.kind == FRAME:
            frames.append(r)
        elif r.kind in (DATA, BSS):
            addr, contents, offsets = f
            out += [pre_data_root(addr + o, _word(contents, o, ps)) for o in sorted(set(offsets))]
        elif r.kind == OTHER_ROOT:
            out.append(pre_other_root(*f))
        elif r.kind == FINALIZER:
            out.append(pre_finalizer(*f))
        elif r.kind == QUEUED_FINALIZER:
            out += [pre_other_root(b"queued finalizer", f[0]),
                    pre_other_root(b"queued finalizer func", f[1])]
        elif r.kind == EOF:
            out.append(pre_eof())
    return b"".join(out)
