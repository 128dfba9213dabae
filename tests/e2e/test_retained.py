# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `heapref retained`: retained sizes from the dominator tree.

What `retained` says is checked against computations that do not use heapref:
  - brute force on every scenario program's dump (reach.py reads it): an object's
    retained size is what stops being reachable from the roots when that object is
    taken out of the graph. Checked for the 25 objects heapref ranks first and 40 more
    spread over the list of every reachable object;
  - the totals: every reachable object is retained by exactly one root variable or by
    "shared" (several roots at once), so the roots' and shared rows add up to what
    reach.py reaches;
  - shared/main.go's shape: two globals holding one big buffer and a buffer each, and a
    list of 1000 nodes under a third: neither of the two retains the shared buffer, the
    shared row does; main.c retains its whole list;
  - cache/main.go: nothing of main.cache's is reached from another root, so what it
    retains is what the profile of `analyze` has under it (its cumulative value).

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import collections
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402  (tests/e2e/profile.py, not the standard library's)
import progs  # noqa: E402
import reach  # noqa: E402

if not hasattr(profile, "read"):
    raise ImportError("tests/e2e/profile.py not found (got %s)" % profile.__file__)

HEAPREF, WORK = progs.HEAPREF, progs.WORK
COLUMNS = ["kind", "chain", "type", "size", "retained_bytes", "retained_objects", "address"]

Row = collections.namedtuple("Row", COLUMNS)


heapref = progs.heapref


def retained_rows(binary, dump, n=0):
    code, out, err = heapref("retained", "--format", "tsv", "-n", n, binary, dump)
    if code != 0:
        raise AssertionError("heapref retained exited %d: %s" % (code, err))
    lines = out.splitlines()
    if lines[0].split("\t") != COLUMNS:
        raise AssertionError("header %r, expected %r" % (lines[0], COLUMNS))
    rows = []
    for line in lines[1:]:
        f = line.split("\t")
        if len(f) != len(COLUMNS):
            raise AssertionError("row of %d columns: %r" % (len(f), line))
        rows.append(Row(f[0], f[1], f[2], int(f[3]), int(f[4]), int(f[5]),
                        None if f[6] == "-" else int(f[6], 16)))
    return rows


class Graph:
    """The dump's object graph, as the GC sees it: root words and pointer words."""

    def __init__(self, d):
        self.d = d
        self.sizes = d.sizes
        self.succ = [[j for j in (d.find(v) for v in d.object_words(i)) if j is not None]
                     for i in range(len(d.addrs))]
        roots = []
        for rec in d.data + d.bss + d.frames:
            roots.extend(d.words(rec))
        for f in d.finalizers:
            roots.append(f.fn)
            k = d.find(f.obj)
            if k is not None:   # its words are roots, the object itself is not reached
                roots.extend(d.object_words(k))
        for f in d.queued_finalizers:
            roots.extend([f.obj, f.fn])
        roots.extend(r.ptr for r in d.other_roots)
        self.roots = sorted({j for j in (d.find(v) for v in roots) if j is not None})

    def reachable_bytes(self, without=None):
        seen = bytearray(len(self.sizes))
        stack = [r for r in self.roots if r != without]
        for r in stack:
            seen[r] = 1
        total = 0
        while stack:
            i = stack.pop()
            total += self.sizes[i]
            for j in self.succ[i]:
                if j != without and not seen[j]:
                    seen[j] = 1
                    stack.append(j)
        return total, seen


class RetainedOnEveryProgram(unittest.TestCase):
    def test_objects_by_brute_force(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                binary, dump, _ = progs.prepare(name, WORK)
                d = reach.load(dump)
                g = Graph(d)
                total, _ = g.reachable_bytes()
                rows = retained_rows(binary, dump)
                objects = [r for r in rows if r.kind == "object"]
                # every reachable object is listed once, and only those
                r = reach.reachable(d)
                self.assertEqual(len(objects), r.objects)
                self.assertEqual(sum(o.size for o in objects), r.bytes)
                step = max(1, len(objects) // 40)
                for o in objects[:25] + objects[25::step]:
                    i = d.find(o.address)
                    self.assertIsNotNone(i)
                    self.assertEqual(d.addrs[i], o.address)
                    self.assertEqual(d.sizes[i], o.size)
                    left, _ = g.reachable_bytes(without=i)
                    self.assertEqual(o.retained_bytes, total - left,
                                     "%s: object 0x%x (%s)" % (name, o.address, o.chain))
                # ranked by retained bytes
                got = [o.retained_bytes for o in objects]
                self.assertEqual(got, sorted(got, reverse=True))

    def test_roots_and_shared_add_up(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                binary, dump, _ = progs.prepare(name, WORK)
                r = reach.reachable(reach.load(dump))
                rows = retained_rows(binary, dump)
                tops = [x for x in rows if x.kind in ("root", "shared")]
                self.assertEqual(sum(x.kind == "shared" for x in tops), 1)
                self.assertEqual(sum(x.retained_bytes for x in tops), r.bytes)
                self.assertEqual(sum(x.retained_objects for x in tops), r.objects)


class AttributionByDominator(unittest.TestCase):
    """analyze --attribution dominator: every object under its immediate dominator's
    chain. Its totals are still everything reach.py reaches; each root's cumulative
    value is what `retained` says that root retains, and "$shared by several roots"
    holds the shared row's bytes, as the brute-force-checked dominator tree implies."""

    def test_every_program(self):
        with tempfile.TemporaryDirectory(prefix="heapref-bydom-") as tmp:
            for name in progs.PROGRAMS + ["shared"]:
                with self.subTest(program=name):
                    binary, dump, _ = progs.prepare(name, WORK)
                    out = os.path.join(tmp, name + ".pb.gz")
                    code, _, err = heapref("analyze", "--attribution", "dominator", "-o", out,
                                           binary, dump)
                    self.assertEqual(code, 0, err)
                    p = profile.read(out)
                    r = reach.reachable(reach.load(dump))
                    self.assertEqual(tuple(profile.totals(p)), (r.objects, r.bytes))
                    rows = retained_rows(binary, dump)
                    # the groups of roots sharing memory split the shared row among them
                    shared = [r for r in rows if r.kind == "shared"][0]
                    groups = [r for r in rows if r.kind == "group"]
                    self.assertEqual(sum(g.retained_bytes for g in groups),
                                     shared.retained_bytes)
                    self.assertEqual(sum(g.retained_objects for g in groups),
                                     shared.retained_objects)
                    for row in rows:
                        if row.kind in ("object", "group"):
                            continue
                        root = "$shared by several roots" if row.kind == "shared" else row.chain
                        self.assertEqual(tuple(profile.cum(p, (root,))),
                                         (row.retained_objects, row.retained_bytes), root)

    def test_shared_buffer_under_its_own_root(self):
        binary, dump, f = progs.prepare("shared", WORK)
        d = reach.load(dump)
        big = d.sizes[d.find(f["ptr_big"])]
        with tempfile.TemporaryDirectory(prefix="heapref-bydom-") as tmp:
            out = os.path.join(tmp, "p.pb.gz")
            code, _, err = heapref("analyze", "--attribution", "dominator", "-o", out,
                                   binary, dump)
            self.assertEqual(code, 0, err)
            p = profile.read(out)
        own = p.get(("$shared by several roots", "shared. ([]uint8)"))
        self.assertEqual(tuple(own[:2]) if own else None, (1, big))
        self.assertEqual(tuple(profile.cum(p, ("main.a",))),
                         (2, d.sizes[d.find(f["ptr_main.a"])] + d.sizes[d.find(f["ptr_main.a.own"])]))


class RetainedScenarios(unittest.TestCase):
    def test_shared_buffer(self):
        binary, dump, f = progs.prepare("shared", WORK)
        d = reach.load(dump)
        size = lambda addr: d.sizes[d.find(addr)]   # noqa: E731
        rows = retained_rows(binary, dump)
        roots = {x.chain: x for x in rows if x.kind == "root"}
        a, b = size(f["ptr_main.a"]), size(f["ptr_main.b"])
        self.assertEqual((roots["main.a"].retained_bytes, roots["main.a"].retained_objects),
                         (a + size(f["ptr_main.a.own"]), 2))
        self.assertEqual((roots["main.b"].retained_bytes, roots["main.b"].retained_objects),
                         (b + size(f["ptr_main.b.own"]), 2))
        node = size(f["ptr_main.c"])
        self.assertEqual((roots["main.c"].retained_bytes, roots["main.c"].retained_objects),
                         (f["list_len"] * node, f["list_len"]))
        shared = [x for x in rows if x.kind == "shared"][0]
        self.assertGreaterEqual(shared.retained_bytes, size(f["ptr_big"]))
        big = [x for x in rows if x.kind == "object" and x.address == f["ptr_big"]]
        self.assertEqual(len(big), 1)
        self.assertEqual((big[0].retained_bytes, big[0].retained_objects),
                         (size(f["ptr_big"]), 1))
        self.assertEqual(big[0].type, "[]uint8")
        # the text form says the same
        code, out, err = heapref("retained", binary, dump)
        self.assertEqual(code, 0, err)
        self.assertIn("shared by several roots, retained by none of them: %d bytes in %d "
                      "objects" % (shared.retained_bytes, shared.retained_objects), out)

    def test_cache_retains_its_cumulative_value(self):
        binary, dump, _ = progs.prepare("cache", WORK)
        with tempfile.TemporaryDirectory(prefix="heapref-retained-") as tmp:
            out = os.path.join(tmp, "p.pb.gz")
            code, _, err = heapref("analyze", "-o", out, binary, dump)
            self.assertEqual(code, 0, err)
            cum = profile.cum(profile.read(out), ("main.cache",))
        roots = {x.chain: x for x in retained_rows(binary, dump) if x.kind == "root"}
        self.assertEqual((roots["main.cache"].retained_objects,
                          roots["main.cache"].retained_bytes), tuple(cum))

    def test_top_n_and_usage(self):
        binary, dump, _ = progs.prepare("cache", WORK)
        rows = retained_rows(binary, dump, n=3)
        self.assertEqual(sum(x.kind == "root" for x in rows), 3)
        self.assertEqual(sum(x.kind == "object" for x in rows), 3)
        for args in (["--format", "xml"], ["-n", "-1"], ["-o", "x"], ["--text"]):
            code, out, err = heapref("retained", *(args + [binary, dump]))
            self.assertEqual(code, 2, (args, err))
            self.assertTrue(err.startswith("heapref: "), err)
        code, _, err = heapref("retained", binary, "/nonexistent.dump")
        self.assertEqual(code, 1, err)


if __name__ == "__main__":
    unittest.main()
