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
