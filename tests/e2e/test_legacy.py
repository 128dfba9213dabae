# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the go1.3 and go1.4 heap dump formats, and of the pre-release go1.3
layout (seed 002: roots as pointers at addresses).

No Go toolchain that old runs here, so the dumps are made by tests/e2e/dumpfmt.py from
the layouts (docs/heap-dumps.md):

- Hand-made fixtures, one per format, of the same small heap: a linked list, entries
  with a string, a byte slice and an interface each, an interface in the data segment,
  a goroutine frame holding a conservatively scanned block, and garbage. They are
  analysed without a binary (`heapref analyze DUMP`): roots named by segment offset and
  function, objects by the dump's own type records. The expected chains and figures
  below are worked out by hand from the fixture, object by object (see FIGURES).
- Real dumps of the scenario programs, rewritten in each old layout (dumpfmt.convert):
  analysed with their binary, they must give the profile the original gives, chain by
  chain (go1.3: once the nodes that only the records name, "(T)", are folded into
  their parents); analysed alone, the same totals as reach.py's independent walk of
  the original.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (a cache directory).
"""

import os
import struct
import subprocess
import tempfile
import unittest

import dumpfmt
import profile
import progs
import reach

HEAPREF = os.environ.get("HEAPREF", os.path.join(progs.TESTPROGS, "..", "build", "heapref"))
WORK = progs.WORK

H = 0xC000000000          # heap start
DATA = 0x600000           # the data segment
T_ENTRY, T_BYTE, T_NODE, T_PITEM, T_CACHE, T_PCACHE = (
    0x500100, 0x500200, 0x500300, 0x500400, 0x500500, 0x500600)
ITAB = 0x500700           # an itab of *main.Cache

# The heap: name -> (address, size).
OBJ = {
    "E1": (H + 0x000, 64), "E2": (H + 0x040, 64),   # main.Entry
    "S1": (H + 0x100, 16), "S2": (H + 0x120, 16),   # their names' bytes
    "B1": (H + 0x200, 64), "B2": (H + 0x280, 128),  # their bufs' backing arrays
    "C1": (H + 0x300, 48),                          # a main.Cache E1's iface holds
    "N1": (H + 0x400, 16), "N2": (H + 0x410, 16), "N3": (H + 0x420, 16),  # a list
    "I1": (H + 0x500, 32),                          # what the data segment's eface holds
    "G1": (H + 0x600, 64),                          # a block a frame points at
    "U2": (H + 0x700, 32),                          # what G1's first word points at
    "U1": (H + 0x800, 256),                         # garbage
}


def addr(name):
    return OBJ[name][0]


def words(*ws, size):
    out = b"".join(struct.pack("<Q", w) for w in ws)
    return out + b"\0" * (size - len(out))


def contents(name):
    """Each object's memory; an Entry is {next *Entry, name string, buf []byte, c Cacher}."""
    size = OBJ[name][1]
    if name == "E1":
        return words(addr("E2"), addr("S1"), 5, addr("B1"), 64, 64, ITAB, addr("C1"), size=size)
    if name == "E2":
        return words(0, addr("S2"), 5, addr("B2"), 100, 128, 0, 0, size=size)
    if name in ("N1", "N2"):
        return words(addr("N2" if name == "N1" else "N3"), 7, size=size)
    if name == "G1":
        return words(addr("U2"), 1, 2, size=size)
    return words(0x41, size=size)


# The pointer words of each object, as go1.4's field lists give them (kind, offset):
# 1 pointer, 2 iface (its two words).
FIELDS14 = {
    "E1": [(1, 0), (1, 8), (1, 24), (2, 48)], "E2": [(1, 0), (1, 8), (1, 24), (2, 48)],
    "N1": [(1, 0)], "N2": [(1, 0)], "N3": [(1, 0)], "G1": [(1, 0)],
}


def data_segment(eface_kind):
    """{*Entry, *Node, eface{*main.Item, I1}, 0x1234}: fields ptr@0, ptr@8, eface@16."""
    mem = words(addr("E1"), addr("N1"), T_PITEM, addr("I1"), 0x1234, size=40)
    fields = dumpfmt.put_kind_fields([(1, 0), (1, 8), (eface_kind, 16)])
    return (dumpfmt.put_uvarint(dumpfmt.DATA) + dumpfmt.put_uvarint(DATA) +
            dumpfmt.put_string(mem) + fields)


def goroutine_and_frame():
    g = dumpfmt.encode(dumpfmt.GOROUTINE, [0xC000001000, 0xC000100000, 1, 0x401000, 4, 0, 0,
                                           0, b"chan receive", 0, 0, 0, 0])
    f = dumpfmt.encode(dumpfmt.FRAME, [0xC000100000, 0, 0, words(addr("G1"), 9, size=16),
                                       0x401000, 0x401010, 0x401010, b"main.worker", [0]])
    return g + f


def fixture13():
    r = [dumpfmt.GO13_HEADER,
         dumpfmt.params_legacy(3, 8, H, H + 0x10000),
         dumpfmt.itab13(ITAB, 1),
         dumpfmt.type13(T_ENTRY, 64, "main.Entry", 1, [(1, 0), (2, 8), (3, 24), (4, 48)]),
         dumpfmt.type13(T_BYTE, 1, "uint8", 0, []),
         dumpfmt.type13(T_NODE, 16, "main.Node", 1, [(1, 0)]),
         dumpfmt.type13(T_PITEM, 8, "*main.Item", 1, [(1, 0)]),
         dumpfmt.type13(T_CACHE, 48, "main.Cache", 1, [])]
    typed = {"E1": (T_ENTRY, 0), "E2": (T_ENTRY, 0), "B1": (T_BYTE, 1), "B2": (T_BYTE, 1),
             "C1": (T_CACHE, 0), "N1": (T_NODE, 0), "N2": (T_NODE, 0), "N3": (T_NODE, 0),
             "G1": (0, 127)}
    for name in OBJ:
        t, kind = typed.get(name, (0, 0))
        r.append(dumpfmt.object13(addr(name), t, kind, contents(name)))
    r += [goroutine_and_frame(), data_segment(5), dumpfmt.encode(dumpfmt.EOF, [])]
    return b"".join(r)


def fixture14():
    r = [dumpfmt.GO14_HEADER,
         dumpfmt.params_legacy(4, 8, H, H + 0x10000),
         dumpfmt.encode(dumpfmt.TYPE, [T_PITEM, 8, b"*main.Item", 1]),
         dumpfmt.encode(dumpfmt.TYPE, [T_PCACHE, 8, b"*main.Cache", 1]),
         dumpfmt.encode(dumpfmt.ITAB, [ITAB, T_PCACHE])]
    for name in OBJ:
        r.append(dumpfmt.put_uvarint(dumpfmt.OBJECT) + dumpfmt.put_uvarint(addr(name)) +
                 dumpfmt.put_string(contents(name)) +
                 dumpfmt.put_kind_fields(FIELDS14.get(name, [])))
    r += [goroutine_and_frame(), data_segment(3), dumpfmt.encode(dumpfmt.EOF, [])]
    return b"".join(r)


T_BLOCK = 0x500800        # pre-release fixture: the type of G1
STACK = 0xC000100000      # its goroutine's two frames: main.worker (top), main.main
STACK_MAIN = STACK + 0x100
G_ADDR = 0xC000001000


def fixture_pre(frames=None, stack_roots=None):
    """The same heap in the pre-release go1.3 layout: the data segment's pointer words as
    data roots, G1 and U2 as stack roots of main.worker and main.main. The records come
    in an order the reader must put right: main.main's frame and stack root before
    main.worker's. Fields are counted, kinds numbered from 0 (0 ptr ... 3 iface)."""
    P = dumpfmt
    r = [P.GO13_HEADER, P.pre_params(8, H, H + 0x10000), P.pre_itab(ITAB, 1),
         P.pre_type(T_ENTRY, 64, "main.Entry", 1, [(0, 0), (1, 8), (2, 24), (3, 48)]),
         P.pre_type(T_BYTE, 1, "uint8", 0, []),
         P.pre_type(T_NODE, 16, "main.Node", 1, [(0, 0)]),
         P.pre_type(T_CACHE, 48, "main.Cache", 1, []),
         P.pre_type(T_BLOCK, 64, "main.Block", 1, [(0, 0)])]
    typed = {"E1": (T_ENTRY, 0), "E2": (T_ENTRY, 0), "B1": (T_BYTE, 1), "B2": (T_BYTE, 1),
             "C1": (T_CACHE, 0), "N1": (T_NODE, 0), "N2": (T_NODE, 0), "N3": (T_NODE, 0),
             "G1": (T_BLOCK, 0)}
    for name in OBJ:
        t, kind = typed.get(name, (0, 0))
        r.append(P.pre_object(addr(name), t, kind, contents(name)))
    r.append(P.pre_goroutine(G_ADDR, STACK, 1, 0x401000, 4, b"chan receive"))
    r += frames if frames is not None else [
        P.pre_frame(STACK_MAIN, 0, 0x402000, 0x402040, b"main.main"),
        P.pre_frame(STACK, STACK_MAIN, 0x401000, 0x401010, b"main.worker")]
    r += stack_roots if stack_roots is not None else [
        P.pre_stack_root(STACK_MAIN + 8, addr("U2"), STACK_MAIN),
        P.pre_stack_root(STACK, addr("G1"), STACK)]
    r += [P.pre_data_root(DATA, addr("E1")), P.pre_data_root(DATA + 8, addr("N1")),
          P.pre_data_root(DATA + 0x10, T_PITEM), P.pre_data_root(DATA + 0x18, addr("I1")),
          P.pre_eof()]
    return b"".join(r)


def size(*names):
    return sum(OBJ[n][1] for n in names)


# What the analysis of each fixture must give, worked out by hand. The data segment's
# words are roots "$data+OFFSET"; the frame's word a root named after its function.
# go1.3: an object is charged to a node named after its own type record, "$ref. (T)",
# below the node of what reached it; an untyped one stays on that node; a second T down
# a chain folds into the first (the list, E2 below E1). go1.3 itabs name no type: C1 gets
# its name from its own record. I1 is named by the eface's type (*main.Item -> main.Item).
FIGURES = {
    3: {
        ("$data+0x0", "$ref. (main.Entry)"): (4, size("E1", "E2", "S1", "S2")),
        ("$data+0x0", "$ref. (main.Entry)", "$ref. ([]uint8)"): (2, size("B1", "B2")),
        ("$data+0x0", "$ref. (main.Entry)", "$ref. (main.Cache)"): (1, size("C1")),
        ("$data+0x8", "$ref. (main.Node)"): (3, size("N1", "N2", "N3")),
        ("$data+0x18", "$ref. (main.Item)"): (1, size("I1")),
        ("main.worker",): (2, size("G1", "U2")),
    },
    # go1.4 objects have no type of their own: only what an interface points at is named
    # (C1 by the itab's type *main.Cache, I1 by the eface's).
    4: {
        ("$data+0x0",): (6, size("E1", "E2", "S1", "S2", "B1", "B2")),
        ("$data+0x0", "$ref. (main.Cache)"): (1, size("C1")),
        ("$data+0x8",): (3, size("N1", "N2", "N3")),
        ("$data+0x18", "$ref. (main.Item)"): (1, size("I1")),
        ("main.worker",): (2, size("G1", "U2")),
    },
}


# The pre-release fixture, worked out the same way. Data roots are named by their address;
# the type word of the data segment's eface leads nowhere, and I1 is named by nothing (no
# field list says an eface holds it). main.worker's root is walked before main.main's
# (frames in depth order, whatever the order of the records), so G1 and U2 are its.
FIGURES_PRE = {
    ("$data 0x600000", "$ref. (main.Entry)"): (4, size("E1", "E2", "S1", "S2")),
    ("$data 0x600000", "$ref. (main.Entry)", "$ref. ([]uint8)"): (2, size("B1", "B2")),
    ("$data 0x600000", "$ref. (main.Entry)", "$ref. (main.Cache)"): (1, size("C1")),
    ("$data 0x600008", "$ref. (main.Node)"): (3, size("N1", "N2", "N3")),
    ("$data 0x600018",): (1, size("I1")),
    ("main.worker", "$ref. (main.Block)"): (2, size("G1", "U2")),
}


def heapref(*args, check=True):
    p = subprocess.run([HEAPREF] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError("heapref %s exited %d: %s" % (
            " ".join(map(str, args)), p.returncode, p.stderr.decode()))
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def strip_record_names(prof):
    """The profile with every "$ref. (T)" node folded into its parent."""
    out = {}
    for chain, (objs, nbytes) in prof.items():
        key = tuple(n for n in chain if not n.startswith("$ref. ("))
        o, b = out.get(key, (0, 0))
        out[key] = (o + objs, b + nbytes)
    return out


def as_tuples(prof):
    return {k: tuple(v) for k, v in prof.items()}


class Fixtures(unittest.TestCase):
    """Hand-made go1.3 and go1.4 dumps, analysed without a binary."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.dir = tempfile.mkdtemp(prefix="legacy-", dir=WORK)
        cls.dumps = {}
        for minor, build in ((3, fixture13), (4, fixture14)):
            path = os.path.join(cls.dir, "fixture-go1.%d.dump" % minor)
            with open(path, "wb") as f:
                f.write(build())
            cls.dumps[minor] = path

    def check_fixture(self, minor):
        out = os.path.join(self.dir, "go1.%d.pb.gz" % minor)
        _, _, err = heapref("analyze", "-o", out, self.dumps[minor])
        self.assertIn("heapref: warning: no binary:", err)
        self.assertIn("heapref: go1.%d amd64 dump: %d objects, %d bytes" % (
            minor, len(OBJ), size(*OBJ)), err)
        prof = as_tuples(profile.load(out))
        self.assertEqual(prof, FIGURES[minor])
        reached = set(OBJ) - {"U1"}
        self.assertEqual(profile.totals(prof), (len(reached), size(*reached)))

    def test_go13_analysed_alone(self):
        self.check_fixture(3)

    def test_go14_analysed_alone(self):
        self.check_fixture(4)

    def test_by_type_names_record_types(self):
        """--by-type: what the typed walk did not read is typed by the records."""
        out = os.path.join(self.dir, "by-type.pb.gz")
        heapref("analyze", "--by-type", "-o", out, self.dumps[3])
        entry = ("$data+0x0", "$ref. (main.Entry)")
        self.assertEqual(as_tuples(profile.load(out)), {
            entry + ("type main.Entry",): (2, size("E1", "E2")),
            entry + ("type ?",): (2, size("S1", "S2")),
            entry + ("$ref. ([]uint8)", "type []uint8"): (2, size("B1", "B2")),
            entry + ("$ref. (main.Cache)", "type main.Cache"): (1, size("C1")),
            ("$data+0x8", "$ref. (main.Node)", "type main.Node"): (3, size("N1", "N2", "N3")),
            ("$data+0x18", "$ref. (main.Item)", "type main.Item"): (1, size("I1")),
            ("main.worker", "type ?"): (2, size("G1", "U2")),
        })

    def test_info(self):
        for minor, typed in ((3, 8 + 1), (4, 2)):  # go1.3: 8 own types (not G1) + I1; go1.4: C1, I1
            _, out, _ = heapref("info", self.dumps[minor])
            self.assertIn("format:        go1.%d heap dump" % minor, out)
            self.assertIn("typed objects: %d of %d, by the dump's type records" % (typed, len(OBJ)), out)
            self.assertIn("objects:       %d objects, %d bytes" % (len(OBJ), size(*OBJ)), out)

    def test_text_report_names_record_types(self):
        _, out, _ = heapref("analyze", "--text", "-o", "-", self.dumps[3])
        self.assertIn("$ref. (main.Entry)", out)
        self.assertIn("$ref. ([]uint8)", out)

    def test_newer_dump_alone_is_refused(self):
        path = os.path.join(self.dir, "go1.7.dump")
        with open(path, "wb") as f:
            f.write(b"go1.7 heap dump\n" + dumpfmt.encode(
                dumpfmt.PARAMS, [0, 8, H, H + 0x1000, b"amd64", b"go1.26.0", 1]) +
                dumpfmt.encode(dumpfmt.EOF, []))
        code, _, err = heapref("analyze", "-o", os.path.join(self.dir, "x.pb.gz"), path,
                               check=False)
        self.assertEqual(code, 2)
        self.assertIn("is a go1.7 heap dump: give the binary that wrote it too", err)


class Prerelease(unittest.TestCase):
    """The pre-release go1.3 layout of seed 002: hand-made, and real dumps rewritten."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.dir = tempfile.mkdtemp(prefix="prerelease-", dir=WORK)
        cls.dump = os.path.join(cls.dir, "fixture-pre.dump")
        with open(cls.dump, "wb") as f:
            f.write(fixture_pre())

    def test_analysed_alone(self):
        out = os.path.join(self.dir, "pre.pb.gz")
        _, _, err = heapref("analyze", "-o", out, self.dump)
        self.assertIn("heapref: go1.3 pre-release dump: %d objects, %d bytes" % (
            len(OBJ), size(*OBJ)), err)
        prof = as_tuples(profile.load(out))
        self.assertEqual(prof, FIGURES_PRE)
        reached = set(OBJ) - {"U1"}
        self.assertEqual(profile.totals(prof), (len(reached), size(*reached)))

    def test_info(self):
        _, out, _ = heapref("info", self.dump)
        self.assertIn("format:        go1.3 heap dump, the pre-release layout (roots as pointers)",
                      out)
        self.assertIn("arch:          unknown (8-byte pointers, little-endian)", out)
        self.assertRegex(out, r"\n  stack root +2\n  data root +4\n")
        self.assertRegex(out, r"\n  stack frame +2\n")
        # 9 objects of the 14 name their own type
        self.assertIn("typed objects: 9 of %d, by the dump's type records" % len(OBJ), out)

    def test_goroutine_has_its_frames_in_order(self):
        """The frames are linked from the goroutine's top frame: main.worker above
        main.main, and what its stack roots hold is the goroutine's. Without a binary
        nothing describes the runtime's g: whether it is leaked is unknown."""
        _, out, _ = heapref("goroutines", self.dump)
        self.assertRegex(out, r"\n +%d +2 +0 +- +1 +unknown +waiting +chan receive .* "
                         r"main\.worker <- main\.main\n"
                         % size("G1", "U2"))

    def test_bad_links_are_refused(self):
        P = dumpfmt
        cases = {
            "the frame at sp 0xc000200000 is on no goroutine's stack": dict(frames=[
                P.pre_frame(STACK_MAIN, 0, 0x402000, 0x402040, b"main.main"),
                P.pre_frame(STACK, STACK_MAIN, 0x401000, 0x401010, b"main.worker"),
                P.pre_frame(0xC000200000, 0, 0x401000, 0x401010, b"main.orphan")]),
            "the frame at sp 0xc000100000 is on a stack twice (its parents loop, or two "
            "goroutines share it)": dict(frames=[
                P.pre_frame(STACK_MAIN, STACK, 0x402000, 0x402040, b"main.main"),
                P.pre_frame(STACK, STACK_MAIN, 0x401000, 0x401010, b"main.worker")]),
            "the frame's parent, at sp 0xc000100100, has no stack frame record": dict(frames=[
                P.pre_frame(STACK, STACK_MAIN, 0x401000, 0x401010, b"main.worker")],
                stack_roots=[]),
            "the stack root's frame, at sp 0xc000300000, has no stack frame record": dict(stack_roots=[
                P.pre_stack_root(STACK, addr("G1"), 0xC000300000)]),
            "a second stack frame record with sp 0xc000100000": dict(frames=[
                P.pre_frame(STACK_MAIN, 0, 0x402000, 0x402040, b"main.main"),
                P.pre_frame(STACK, STACK_MAIN, 0x401000, 0x401010, b"main.worker"),
                P.pre_frame(STACK, 0, 0x401000, 0x401010, b"main.again")]),
        }
        for i, (want, kw) in enumerate(cases.items()):
            with self.subTest(want=want):
                path = os.path.join(self.dir, "bad-%d.dump" % i)
                with open(path, "wb") as f:
                    f.write(fixture_pre(**kw))
                code, _, err = heapref("info", path, check=False)
                self.assertEqual(code, 1, err)
                self.assertRegex(err, r"^heapref: %s: byte \d+: " % path)
                self.assertIn(want, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_released_go13_still_read(self):
        """The released go1.3 layout (params first, kind 6) is not taken for it."""
        path = os.path.join(self.dir, "released.dump")
        with open(path, "wb") as f:
            f.write(fixture13())
        _, out, _ = heapref("info", path)
        self.assertIn("format:        go1.3 heap dump\n", out)

    PROGRAMS = ["cache", "list", "goroutine", "iface", "finalizer"]

    def check_program(self, name):
        """Every pointer word of the original's segments and frames becomes a root
        pointer: the same objects are reached, and the program's own roots keep what
        they kept, a data root named by the global holding it, a stack root by its
        frame's function (a frame variable's memory summed over its function)."""
        binary, dump, _ = progs.prepare(name, WORK)
        d = tempfile.mkdtemp(prefix="prerelease-%s-" % name, dir=WORK)
        base = os.path.join(d, "orig.pb.gz")
        heapref("analyze", "-o", base, binary, dump)
        want = profile.load(base)
        r = reach.reachable(reach.load(dump))
        with open(dump, "rb") as f:
            conv_bytes = dumpfmt.convert_prerelease(f.read())
        conv = os.path.join(d, "pre.dump")
        with open(conv, "wb") as f:
            f.write(conv_bytes)
        out = os.path.join(d, "pre.pb.gz")
        heapref("analyze", "-o", out, binary, conv)
        got = profile.load(out)
        self.assertEqual(profile.totals(got), (r.objects, r.bytes))
        got_roots, globals_, frames = {}, {}, {}
        for chain, (_, nbytes) in got.items():
            got_roots[chain[0]] = got_roots.get(chain[0], 0) + nbytes
        for chain, (_, nbytes) in want.items():
            root = chain[0]
            if not root.startswith("main.") or nbytes == 0:
                continue
            if root in got_roots:
                globals_[root] = globals_.get(root, 0) + nbytes
            else:  # a frame variable "main.F.v": now its function's
                fn = root.rsplit(".", 1)[0]
                frames[fn] = frames.get(fn, 0) + nbytes
        self.assertEqual({k: got_roots[k] for k in globals_}, globals_)
        # a frame's words are taken after the data roots (pass 2's order), so a frame
        # keeps at most what its variables kept
        for fn, nbytes in frames.items():
            self.assertLessEqual(got_roots.get(fn, 0), nbytes, fn)
        if name == "goroutine":  # its workers' 1 MiB buffers, on their frames
            self.assertEqual(got_roots["main.worker"], frames["main.worker"])
            self.assertGreater(frames["main.worker"], 1 << 20)
        alone = os.path.join(d, "alone.pb.gz")
        heapref("analyze", "-o", alone, conv)
        self.assertEqual(profile.totals(profile.load(alone)), (r.objects, r.bytes))

    def test_programs(self):
        for name in self.PROGRAMS:
            with self.subTest(program=name):
                self.check_program(name)


class Converted(unittest.TestCase):
    """Real dumps rewritten in the old layouts: the same heap, the same analysis."""

    PROGRAMS = ["cache", "iface", "list", "goroutine", "finalizer"]

    def check_program(self, name):
        binary, dump, _ = progs.prepare(name, WORK)
        d = tempfile.mkdtemp(prefix="legacy-%s-" % name, dir=WORK)
        base = os.path.join(d, "orig.pb.gz")
        heapref("analyze", "-o", base, binary, dump)
        want = as_tuples(profile.load(base))
        r = reach.reachable(reach.load(dump))
        with open(dump, "rb") as f:
            buf = f.read()
        for minor in (3, 4):
            conv = os.path.join(d, "go1.%d.dump" % minor)
            with open(conv, "wb") as f:
                f.write(dumpfmt.convert(buf, minor))
            out = os.path.join(d, "go1.%d.pb.gz" % minor)
            heapref("analyze", "-o", out, binary, conv)
            got = as_tuples(profile.load(out))
            if minor == 3:
                got = strip_record_names(got)
            self.assertEqual(got, want, "go1.%d layout of %s" % (minor, name))
            alone = os.path.join(d, "alone-go1.%d.pb.gz" % minor)
            heapref("analyze", "-o", alone, conv)
            self.assertEqual(profile.totals(profile.load(alone)), (r.objects, r.bytes),
                             "go1.%d layout of %s, no binary" % (minor, name))

    def test_programs(self):
        for name in self.PROGRAMS:
            with self.subTest(program=name):
                self.check_program(name)


if __name__ == "__main__":
    unittest.main()
