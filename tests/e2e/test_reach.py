# SPDX-License-Identifier: Apache-2.0
"""Tests of the two checking helpers: reach.py (an independent reachability count on
a heap dump) and profile.py (a heapref profile read through `go tool pprof -raw`).

reach.py is checked on a hand-built dump with a known graph, and on the real dumps of
the programs in testprogs/ against the facts they print. profile.py is checked on the
profile tests/unit/pprof_fixture.c writes.

Environment: HEAPREF_WORK (a cache directory for built programs and dumps),
PPROF_FIXTURE (the fixture program; both set by ctest).
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

WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")
FIXTURE = os.environ.get("PPROF_FIXTURE")


# -- a hand-built dump ---------------------------------------------------------

uv = dumpfmt.put_uvarint
s = dumpfmt.put_string


def fields(*offsets):
    return dumpfmt.put_field_list(offsets)


def words(*values):
    return struct.pack("<%dQ" % len(values), *values)


def rec(kind, *parts):
    return uv(kind) + b"".join(uv(p) if isinstance(p, int) else p for p in parts)


A, B, C, D, E, F, G, H, I, J = (0x1000 * k for k in range(1, 11))
SIZES = {A: 32, B: 16, C: 16, D: 16, E: 64, F: 48, G: 16, H: 16, I: 16, J: 16}


def synthetic_dump():
    """data word -> A <-> B (a cycle of interior pointers); C only in
    non-pointer words; finalizer object D -> E (E reached, D not); F from a stack
    frame, G from a queued finalizer, H from an other root, I is a finalizer's fn;
    J only reached by a pointer one past its end."""
    def obj(addr, ptrs=(), offsets=()):
        body = words(*ptrs).ljust(SIZES[addr], b"\0")
        return rec(1, addr, s(body), fields(*offsets))

    return b"".join([
        b"go1.7 heap dump\n",
        rec(6, 0, 8, 0x1000, 0x100000, s("amd64"), s("go1.26.8"), 2),
        rec(3, 0x500000, 32, s("main.T"), 1),
        rec(8, 0x510000, 0x500000),
        # objects out of address order, as the runtime writes them span by span
        obj(J), obj(B, [A + 16], [0]), obj(C, [B]),
        obj(A, [B + 8, C, 0], [0]),   # the word holding C has no pointer bit
        obj(D, [E], [0]), obj(E, [0, E + 8], [8]),   # E points to itself
        obj(F), obj(G), obj(H), obj(I),
        rec(4, 0xc000, 0x7000, 1, 0x401000, 4, 0, 0, 0, s("chan receive"), 0, 0, 0, 0),
        # the frame's second field lies past its contents (conservative args)
        rec(5, 0x7000, 0, 0, s(words(F + 47)), 0x401000, 0x401010, 0x401010,
            s("main.main"), fields(0, 8)),
        rec(9, 0xd000, 1, 1234),
        rec(12, 0x600000, s(words(A + 8, 0xdead, C) + b"xyz"), fields(0, 8)),
        rec(13, 0x610000, s(words(J + 16, 0)), fields(0, 8)),
        rec(7, D, I, 0x402000, 0x500000, 0x500000),
        rec(11, G, 0x403000, 0x403000, 0x500000, 0x500000),
        rec(2, s("some root"), H + 4),
        rec(10, *[k for k in range(24 + 256 + 1)]),
        rec(14, 0xe000, 0xc000, 0x7000, 0x401000, 0, 0, 0),
        rec(15, 0xf000, 0xc000, 0, 0, 0, 0),
        rec(16, 1, 64, 1, s("main.main"), s("main.go"), 10, 5, 1),
        rec(17, A, 1),
        rec(0),
    ])


class ReachOnAHandBuiltDump(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".dump")
        with os.fdopen(fd, "wb") as f:
            f.write(synthetic_dump())

    def tearDown(self):
        os.remove(self.path)

    def test_parse(self):
        d = reach.load(self.path)
        self.assertEqual(d.addrs, sorted(SIZES))
        self.assertEqual(d.sizes, [SIZES[a] for a in sorted(SIZES)])
        self.assertEqual(d.ptr_offsets(d.find(E)), [8])
        self.assertEqual(d.object_words(d.find(A)), [B + 8])
        self.assertEqual(d.find(A + 31), 0)
        self.assertIsNone(d.find(A + 32))
        self.assertEqual((d.params.ptr_size, d.params.go_version), (8, "go1.26.8"))
        self.assertEqual(d.frames[0].name, "main.main")
        self.assertEqual(d.words(d.frames[0]), [F + 47])
        self.assertEqual(d.data[0].size, 27)
        self.assertEqual(d.goroutines[0].wait_reason, "chan receive")
        self.assertEqual(d.memstats[-1], 280)
        self.assertEqual(d.memprof, [(1, 64, [("main.main", "main.go", 10)], 5, 1)])
        self.assertEqual(d.records[reach.OBJECT], 10)

    def test_reachable(self):
        r = reach.reachable(reach.load(self.path))
        self.assertEqual(r.addrs, {A, B, E, F, G, H, I})
        self.assertEqual((r.objects, r.bytes), (7, 32 + 16 + 64 + 48 + 16 + 16 + 16))
        self.assertEqual((r.unreachable_objects, r.unreachable_bytes), (3, 16 * 3))

    def test_bad_dumps(self):
        good = synthetic_dump()
        for name, data in [("header", b"go1.4 heap dump\n" + good[16:]),
                           ("truncated", good[:-1]),
                           ("trailing bytes", good + b"\0"),
                           ("iface field kind", good.replace(fields(0) + rec(1, C),
                                                             uv(2) + uv(0) + uv(0) + rec(1, C)))]:
            with self.subTest(name), self.assertRaises(reach.DumpError):
                reach.parse(data)


# -- real dumps ----------------------------------------------------------------

class ReachOnEveryProgram(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = {name: progs.prepare(name, WORK) for name in progs.PROGRAMS}

    def test_consistent_with_facts(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                _, dump, facts = self.runs[name]
                d = reach.load(dump)
                r = reach.reachable(d)
                self.assertGreaterEqual(r.objects, facts["kept_objects"])
                self.assertGreaterEqual(r.bytes, facts["kept_bytes"])
                self.assertEqual(r.objects + r.unreachable_objects, len(d.addrs))
                self.assertEqual(r.bytes + r.unreachable_bytes, sum(d.sizes))
                # What the program's last GC kept (HeapObjects, HeapAlloc) includes
                # every reachable object. (On these programs it is exactly equal.)
                self.assertLessEqual(r.objects, d.memstats[11])
                self.assertLessEqual(r.bytes, d.memstats[6])
                for key, value in facts.items():
                    k = d.find(value) if key.startswith("ptr_") else None
                    if k is not None:
                        self.assertIn(d.addrs[k], r.addrs, key)


# -- profile.py on the fixture profile -------------------------------------------

@unittest.skipUnless(FIXTURE, "PPROF_FIXTURE is not set (run through ctest, which "
                              "points it at the pprof_fixture program)")
class ProfileReadsTheFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fixture.pb.gz")
            subprocess.run([FIXTURE, path], check=True)
            cls.p = profile.load(path)

    def test_chains_root_first_with_own_values(self):
        self.assertEqual(self.p, {
            ("main.cache",): [1, 4864],
            ("main.cache", "$mapval. (*main.Entry)"): [100, 3200],
            ("main.cache", "$mapval. (*main.Entry)", "buf. ([]uint8)"): [100, 102400],
            ("main.worker.buf",): [1, 1048576],
        })

    def test_totals_cum_children(self):
        p = self.p
        self.assertEqual(profile.totals(p), (202, 4864 + 3200 + 102400 + 1048576))
        self.assertEqual(profile.cum(p, ("main.cache",)), (201, 4864 + 3200 + 102400))
        self.assertEqual(profile.cum(p, ("main.cache", "$mapval. (*main.Entry)")),
                         (200, 105600))
        self.assertEqual(profile.cum(p, ("nothing",)), (0, 0))
        self.assertEqual(profile.children(p, ()), {"main.cache", "main.worker.buf"})
        self.assertEqual(profile.children(p, ("main.cache",)), {"$mapval. (*main.Entry)"})
        self.assertEqual(profile.children(p, ("main.worker.buf",)), set())

    def test_odd_names_and_inlined_lines(self):
        # pprof -raw text with names full of spaces, brackets, colons and '$'
        text = "\n".join([
            "PeriodType: ", "Period: 0", "Samples:",
            "inuse_space/bytes[dflt] inuse_objects/count",
            "  123456789012          3: 1 2 ",
            "           8          1: 3 ",
            "                {tag:[x]}",
            "           8          1: 3 ",
            "Locations",
            "     1: 0x0 M=1 [10+]. (*main.Node) :0:0 s=0()",
            "     2: 0x0 M=1 $mapkey. (string) :0:0 s=0()",
            "             main.x :12:3 s=0",
            "     3: 0x0 M=1 a :1:2 s=0 b :0:0 s=0()",
            "Mappings", "1: 0x0/0x0/0x0   ",
        ])
        self.assertEqual(profile.parse_raw(text), {
            ("main.x", "$mapkey. (string)", "[10+]. (*main.Node)"): [3, 123456789012],
            ("a :1:2 s=0 b",): [2, 16],
        })


if __name__ == "__main__":
    unittest.main()
