# SPDX-License-Identifier: Apache-2.0
"""`heapref allocs`: the classic heap profile rebuilt from the dump's memory-profile
records, against the runtime's own.

testprogs/allocs sets runtime.MemProfileRate = 1, allocates from three sites (4 KiB
buffers, 24-byte structs, 100 KiB buffers), keeps one in three of each, then writes a
heap dump and, at once, runtime/pprof.WriteHeapProfile to DUMP.heap. Read by the real
pprof client (`go tool pprof -raw`):
  - the in-use objects and bytes over all stacks equal the runtime profile's;
  - each allocation site's stack (leading runtime frames and runtime.goexit left out,
    as runtime/pprof does) has the runtime profile's figures, which are what the
    program's shape implies: ceil(n/3) objects of the size class the dump shows;
  - the profile names the binary, as analyze's does.
Frames the compiler inlined are named after the function inlined there and marked
inline, as the runtime's profile names them (the dump names every PC after the function
whose code holds it: main.newConn inlined into main.newPair inlined into main.main was
main.main three times): the program's inlined constructors are compared site by site,
with function names, and pprof's "(inline)" marks.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402  (tests/e2e/profile.py, not the standard library's)
import progs  # noqa: E402
import reach  # noqa: E402

heapref = progs.heapref
SITES = (("main.allocBuf", "bufs", "buf_size"), ("main.allocSmall", "smalls", None),
         ("main.allocLarge", "larges", None))


size_class = reach.size_class


INLINED = (("main.newConn", ("main.main", "main.newPair", "main.newConn")),
           ("main.newPair", ("main.main", "main.newPair")))


def top_lines(path):
    """`go tool pprof -top` of in-use bytes: {function as pprof prints it: flat bytes}."""
    p = subprocess.run([progs.GO, "tool", "pprof", "-top", "-unit=B",
                        "-sample_index=inuse_space", path],
                       capture_output=True, text=True, check=True)
    rows = {}
    for line in p.stdout.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[0].endswith("B") and parts[0][:-1].isdigit():
            rows[parts[5]] = int(parts[0][:-1])
    return rows


class Allocs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, cls.facts = progs.prepare("allocs", progs.WORK)
        cls.tmp = tempfile.TemporaryDirectory(prefix="heapref-allocs-")
        cls.ours = os.path.join(cls.tmp.name, "allocs.pb.gz")
        code, _, err = heapref("allocs", "-o", cls.ours, cls.binary, cls.dump)
        if code != 0:
            raise AssertionError(err)
        cls.mine = profile.read(cls.ours)
        cls.runtime = profile.read(cls.dump + ".heap")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def site(self, p, fn):
        """The in-use figures of the stacks whose leaf is fn."""
        return tuple(map(sum, zip(*[v for c, v in p.items() if c and c[-1] == fn]))) or (0, 0)

    def test_totals_equal_the_runtime_profile(self):
        self.assertEqual(profile.totals(self.mine), profile.totals(self.runtime))

    def test_each_site_as_the_runtime_and_the_shape_say(self):
        f, d = self.facts, reach.load(self.dump)
        sizes = {"main.allocBuf": size_class(d, f["buf_size"]),
                 "main.allocLarge": max(d.sizes[i] for i in range(len(d.sizes))
                                        if 100 << 10 <= d.sizes[i] < 200 << 10)}
        for fn, count_key, _ in SITES:
            with self.subTest(site=fn):
                kept = -(-f[count_key] // f["kept_each"])
                mine = {c: v for c, v in self.mine.items() if c and c[-1] == fn}
                theirs = {c: v for c, v in self.runtime.items() if c and c[-1] == fn}
                self.assertEqual(mine, {c: v for c, v in theirs.items()}, fn)
                objects, nbytes = self.site(self.mine, fn)
                self.assertEqual(objects, kept)
                if fn in sizes:
                    self.assertEqual(nbytes, kept * sizes[fn])
                self.assertEqual(list(mine)[0][-2:], ("main.main", fn))

    def test_inlined_constructors_site_by_site(self):
        """newPair and newConn are inlined into main.main: each allocation site's stacks,
        function by function, and figures are the runtime profile's, which are what the
        program implies (ceil(pairs/3) kept of each allocation); pprof marks both "(inline)" with
        the runtime profile's flat bytes."""
        f, d = self.facts, reach.load(self.dump)
        kept = -(-f["pairs"] // f["kept_each"])
        for fn, stack in INLINED:
            with self.subTest(site=fn):
                mine = {c: v for c, v in self.mine.items() if c and c[-1] == fn}
                theirs = {c: v for c, v in self.runtime.items() if c and c[-1] == fn}
                self.assertTrue(theirs, "the runtime's profile has no site " + fn)
                self.assertEqual(mine, theirs, fn)
                for c in mine:
                    self.assertEqual(c[-len(stack):], stack)
        # newConn allocates twice (its buffer, and the conn: one 24-byte slice header);
        # newPair once (the pair: a pointer and a string, 24 bytes)
        self.assertEqual(self.site(self.mine, "main.newConn"),
                         (2 * kept, kept * (size_class(d, f["conn_buf"]) + size_class(d, 24))))
        self.assertEqual(self.site(self.mine, "main.newPair"), (kept, kept * size_class(d, 24)))
        mine, theirs = top_lines(self.ours), top_lines(self.dump + ".heap")
        for fn, _ in INLINED:
            self.assertIn(fn + " (inline)", theirs)
            self.assertEqual(mine.get(fn + " (inline)"), theirs[fn + " (inline)"], fn)
        self.assertNotIn("main.newConn", mine)

    def test_by_alloc_puts_sampled_objects_under_their_site(self):
        """analyze --by-alloc: every reachable object once (reach.py's totals), and the
        bytes under each site's frame node ("@ main.allocBuf") across all chains are the
        in-use figures of that site in the runtime's own profile: every object is
        sampled, and every kept one is reached. The kept buffers hang under
        main.keptBufs's elements."""
        out = os.path.join(self.tmp.name, "by-alloc.pb.gz")
        code, _, err = heapref("analyze", "--by-alloc", "-o", out, self.binary, self.dump)
        self.assertEqual(code, 0, err)
        p = profile.read(out)
        r = reach.reachable(reach.load(self.dump))
        self.assertEqual(profile.totals(p), (r.objects, r.bytes))
        for fn, _, _ in SITES:
            under = [v for c, v in p.items() if "@ " + fn in c]
            self.assertEqual(tuple(map(sum, zip(*under))), self.site(self.runtime, fn), fn)
        bufs = [c for c in p if c[:1] == ("main.keptBufs",) and "@ main.allocBuf" in c]
        self.assertTrue(bufs)
        for c in bufs:
            i = c.index("@ main.allocBuf")
            self.assertTrue(c[i - 1].endswith(". ([]uint8)"), c)
            self.assertEqual(c[i:i + 3], ("@ main.allocBuf", "@ main.main", "@ runtime.main"))
        inlined = "@ main.newConn (inline)"
        under = [v for c, v in p.items() if inlined in c]
        self.assertEqual(tuple(map(sum, zip(*under))), self.site(self.runtime, "main.newConn"))
        for c in (c for c in p if inlined in c):
            i = c.index(inlined)
            self.assertEqual(c[i:i + 3], (inlined, "@ main.newPair (inline)", "@ main.main"))
        code, _, err = heapref("analyze", "--by-alloc", "--examples", "2", "-o", out,
                               self.binary, self.dump)
        self.assertEqual(code, 2, err)

    def test_names_the_binary(self):
        p = subprocess.run([progs.GO, "tool", "pprof", "-raw", self.ours], capture_output=True,
                           text=True, check=True)
        build_id = subprocess.run([progs.GO, "tool", "buildid", self.binary],
                                  capture_output=True, text=True, check=True).stdout.strip()
        self.assertIn(build_id, p.stdout.split("\nMappings\n", 1)[1])

    def test_bad_inputs(self):
        code, out, err = heapref("allocs", self.binary)
        self.assertEqual((code, out), (2, ""), err)
        code, out, err = heapref("allocs", "-o", os.path.join(self.tmp.name, "x.pb.gz"),
                                 self.binary, os.path.join(self.tmp.name, "missing"))
        self.assertEqual((code, out), (1, ""), err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "x.pb.gz")))


if __name__ == "__main__":
    unittest.main()
