# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `heapref why BINARY DUMP ADDRESS...`: why an object is alive.

Programs built by the machine's Go; what `why` says is checked against the dump, read
independently by reach.py:
  - list/main.go's shapes, from its facts and the words of its objects: the k-th node of
    the list is reached through the k nodes before it, each holding the next in its
    word at offsetof(Node.next); a leaf of the binary tree through the Lefts above it;
    a path of 100,000 objects shows 8 at each end;
  - every object (up to 3000 spread over the heap) of every program's dump, and of a
    stripped build of list (pass 2 only, marked by two threads): reachable exactly when
    reach.py reaches
    it; each path starts at an object a root word points to, each object on it holds
    a pointer into the next in the word it names, and it ends at the object asked
    about; its chain is a chain of the profile `analyze` writes.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import re
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

MAX_ASKED = 3000
HEAD = re.compile(r"^0x([0-9a-f]+): (?:(not in any heap object)|in object 0x([0-9a-f]+) "
                  r"\((\d+) bytes\)(?:, kept alive by (.+)|(: no root reaches it.*)))$")
# "its .next (+0) points to the next" where the walk read the object by a type, else
# "its word +0 points to the next"
STEP = re.compile(r"^    0x([0-9a-f]+) +(\d+) bytes   (.+?)(?:   its (?:word \+(\d+)|(\S+) \(\+(\d+)\)) "
                  r"points to the next)?$")
# a frame variable's root: ", goroutine 3 (started by main.main, waiting chan receive)"
ROOT_GOROUTINE = re.compile(r"^, goroutine (\d+) \((?:started by (\S+), )?(\w+)(?: (.+))?\)$")
PATH = re.compile(r"^  path (\d+)(?: \(the one the analysis took\))?: (\d+) objects? from (.+)$")
NO_MORE = "  no other path avoids the objects of the paths above"
TYPE_HEAD = re.compile(r"^(\S+): (?:(\d+) reachable objects, (\d+) bytes; the (\d+) biggest:|"
                       r"(no reachable object .*))$")
MORE = re.compile(r"^    \.\.\. (\d+) more objects \.\.\.$")


heapref = progs.heapref


class Path:
    """One path of an answer: from root, count objects (as said), the steps shown."""

    def __init__(self, m):
        self.number, self.count, self.root = int(m.group(1)), int(m.group(2)), m.group(3)
        self.steps = []       # (address, size, offset of the word to the next or None)
        self.names = []       # the chain node name of each step's object
        self.fields = []      # each step's word to the next as named (".next"), or None
        self.goroutine = None  # (id, started by, status, wait reason) of a frame's root
        self.skipped = 0      # objects left out in the middle


class Answer:
    """One address's block of `why` output; count, steps and skipped are path 1's."""

    def __init__(self, m):
        self.addr = int(m.group(1), 16)
        self.in_heap = not m.group(2)
        self.obj = int(m.group(3), 16) if m.group(3) else None
        self.size = int(m.group(4)) if m.group(4) else None
        self.root = m.group(5)
        self.chain = None
        self.paths = []
        self.no_more = False  # said that no other path is left

    count = property(lambda self: self.paths[0].count if self.paths else None)
    steps = property(lambda self: self.paths[0].steps if self.paths else [])
    skipped = property(lambda self: self.paths[0].skipped if self.paths else 0)


def parse_why(text):
    """The answers of `why` output, and the type heads ({type: (count, bytes, shown)})."""
    answers, types = [], {}
    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            answers.append(Answer(m))
            continue
        t = TYPE_HEAD.match(line)
        if t:
            types[t.group(1)] = None if t.group(5) else tuple(map(int, t.group(2, 3, 4)))
            continue
        a = answers[-1]
        p = a.paths[-1] if a.paths else None
        if line.startswith("  chain: "):
            a.chain = tuple(line[len("  chain: "):].split(" -> "))
        elif PATH.match(line):
            a.paths.append(Path(PATH.match(line)))
        elif line == NO_MORE:
            a.no_more = True
        elif p and line == "    " + p.root:
            pass
        elif p and line.startswith("    " + p.root + ", goroutine "):
            g = ROOT_GOROUTINE.match(line[4 + len(p.root):])
            assert g, "not a goroutine of a root: %r" % line
            p.goroutine = (int(g.group(1)), g.group(2), g.group(3), g.group(4))
        elif MORE.match(line):
            p.skipped = int(MORE.match(line).group(1))
        else:
            s = STEP.match(line)
            assert s and p, "not a line of why's output: %r" % line
            off = s.group(4) or s.group(6)
            p.steps.append((int(s.group(1), 16), int(s.group(2)), int(off) if off else None))
            p.names.append(s.group(3))
            p.fields.append(s.group(5))
    parse_why.types = types
    return answers


def pointer_words(d, i):
    """{offset: value} of object i's pointer words, from the dump."""
    return dict(zip(d.ptr_offsets(i), d.object_words(i)))


def root_targets(d):
    """Objects a root word points to directly (reach.py's roots)."""
    values = []
    for rec in d.data + d.bss + d.frames:
        values += d.words(rec)
    for f in d.finalizers:
        values.append(f.fn)
        k = d.find(f.obj)
        if k is not None:
            values += d.object_words(k)
    for f in d.queued_finalizers:
        values += [f.obj, f.fn]
    values += [r.ptr for r in d.other_roots]
    return {k for k in map(d.find, values) if k is not None}


class Why(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump_path, cls.facts = progs.prepare("list", WORK)
        cls.d = reach.load(cls.dump_path)

    def why(self, *args, status=0):
        code, out, err = heapref("why", *(list(args[:-1]) + [self.binary, self.dump_path] +
                                          ["%#x" % a for a in args[-1]]))
        self.assertEqual(code, status, err)
        return parse_why(out)

    def list_nodes(self, k):
        """Addresses of the list's first k + 1 nodes, following next in the dump."""
        d, off = self.d, self.facts["offsetof_main.Node.next"]
        nodes = [self.facts["ptr_main.head"]]
        for _ in range(k):
            nodes.append(pointer_words(d, d.find(nodes[-1]))[off])
        return nodes

    def test_list_node(self):
        nodes = self.list_nodes(5)
        size = self.d.sizes[self.d.find(nodes[0])]
        off = self.facts["offsetof_main.Node.next"]
        a, = self.why([nodes[5] + 8])   # an interior address
        self.assertEqual((a.obj, a.size, a.root), (nodes[5], size, "main.head"))
        self.assertEqual(a.chain, ("main.head", "next. (*main.Node)"))
        self.assertEqual(a.count, 6)
        self.assertEqual(a.steps, [(n, size, off) for n in nodes[:5]] + [(nodes[5], size, None)])
        # each hop named by its field, though the chain is folded into one name
        self.assertEqual(a.paths[0].fields, [".next"] * 5 + [None])
        self.assertIsNone(a.paths[0].goroutine)   # a global's
        a, = self.why("--full-chains", [nodes[5]])
        self.assertEqual(a.chain, ("main.head",) + ("next. (*main.Node)",) * 5)

    def test_long_path_shows_its_ends(self):
        n = self.facts["list_nodes"]
        nodes = self.list_nodes(n - 1)
        self.assertIsNone(pointer_words(self.d, self.d.find(nodes[-1])).get(
            self.facts["offsetof_main.Node.next"]) or None, "the last node has a next")
        a, = self.why([nodes[-1]])
        self.assertEqual(a.count, n)
        self.assertEqual(a.skipped, n - 16)
        self.assertEqual([s[0] for s in a.steps], nodes[:8] + nodes[-8:])

    def test_tree_leaf(self):
        d, depth = self.d, self.facts["tree_depth"]
        path = [self.facts["ptr_main.tree"]]
        for _ in range(depth - 1):   # Left is the first word of a Tree
            path.append(pointer_words(d, d.find(path[-1]))[0])
        a, = self.why([path[-1]])
        self.assertEqual(a.chain, ("main.tree", "Left. (*main.Tree)"))
        self.assertEqual([s[0] for s in a.steps], path)
        self.assertEqual([s[2] for s in a.steps], [0] * (depth - 1) + [None])
        self.assertEqual(a.paths[0].fields, [".Left"] * (depth - 1) + [None])
        right_left = pointer_words(d, d.find(pointer_words(d, d.find(path[0]))[8]))[0]
        a, = self.why([right_left])
        self.assertEqual(a.chain, ("main.tree", "Right. (*main.Tree)"))
        # Right is the second word of a Tree, Left the first
        self.assertEqual(a.paths[0].fields, [".Right", ".Left"][:len(a.steps) - 1] + [None])
        self.assertEqual([s[2] for s in a.steps][:2], [8, 0][:len(a.steps) - 1])

    def test_not_in_heap_and_usage(self):
        a, = self.why([8], status=1)
        self.assertFalse(a.in_heap)
        for args in ([self.binary, self.dump_path],                    # no address
                     [self.binary, self.dump_path, "12x"],   # a number, badly written
                     ["-o", "out", self.binary, self.dump_path, "0x1"],
                     ["--text", self.binary, self.dump_path, "0x1"]):
            with self.subTest(args=args):
                code, out, err = heapref("why", *args)
                self.assertEqual((code, out), (2, ""), err)
                self.assertTrue(err.startswith("heapref: "), err)
        other, _, _ = progs.prepare("cache", WORK)   # checked as analyze checks
        code, out, err = heapref("why", other, self.dump_path, "0x1")
        self.assertEqual((code, out), (4, ""), err)
        self.assertIn("was not written by", err)
        code, out, _ = heapref("why", "--help")
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith("usage: heapref why"), out)


class WhyGoroutine(unittest.TestCase):
    """goroutine/main.go: main.worker's buf, held only by its frame: the root names the
    goroutine (the id the worker read from its own trace), the function whose go
    statement started it (main.main) and its wait reason (read from runtime.Stack)."""

    def test_frame_root_names_its_goroutine(self):
        binary, dump, f = progs.prepare("goroutine", WORK)
        code, out, err = heapref("why", binary, dump, "%#x" % f["ptr_worker.buf"])
        self.assertEqual(code, 0, err)
        a, = parse_why(out)
        self.assertEqual(a.root, "main.worker.buf")
        self.assertEqual(a.paths[0].goroutine,
                         (f["worker_goid"], "main.main", "waiting", f["worker_wait_reason"]))


class WhyEveryObject(unittest.TestCase):
    def test_every_object_of_every_program(self):
        checked = 0
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                checked += self.check_every_object(name)
        self.assertGreater(checked, 1000, "few paths checked")

    def test_stripped_list(self):
        """Without DWARF all is pass 2's, and the list is marked by two threads."""
        self.assertGreater(self.check_every_object("list", ldflags="-w"), 1000)

    def check_every_object(self, name, **build):
        """Checks why's answer for each object of name's dump; returns how many paths."""
        binary, dump, _ = progs.prepare(name, WORK, **build)
        d = reach.load(dump)
        r = reach.reachable(d)
        with tempfile.TemporaryDirectory() as tmp:
            pb = os.path.join(tmp, "p.pb.gz")
            code, _, err = heapref("analyze", "-o", pb, binary, dump)
            self.assertEqual(code, 0, err)
            chains = {c[:k] for c in profile.read(pb) for k in range(1, len(c) + 1)}
        # at most MAX_ASKED objects, spread over the heap (an argument list has a limit)
        picked = list(range(0, len(d.addrs), -(-len(d.addrs) // MAX_ASKED)))
        code, out, err = heapref("why", binary, dump, *["%#x" % d.addrs[i] for i in picked])
        unreached = sum(1 for i in picked if not r.seen[i])
        self.assertEqual(code, 1 if unreached else 0, err)
        if unreached:   # and one line on stderr says how many
            self.assertEqual(err.strip().splitlines()[-1], "heapref: %d of %d addresses or types: in no heap "
                             "object, reached by no root, or no reachable object of the type"
                             % (unreached, len(picked)))
        answers = parse_why(out)
        self.assertEqual([a.addr for a in answers], [d.addrs[i] for i in picked])
        roots = root_targets(d)
        paths = 0
        for i, a in zip(picked, answers):
            where = "object %#x" % a.addr
            self.assertEqual((a.obj, a.size), (d.addrs[i], d.sizes[i]), where)
            self.assertEqual(a.root is not None, bool(r.seen[i]), where + ": reachable?")
            if a.root is None:
                continue
            self.assertIn(a.chain, chains, where + ": chain not in the profile")
            self.assertEqual(a.chain[0], a.root, where)
            self.assertEqual(a.count, len(a.steps) + a.skipped, where)
            self.assertEqual(len(a.steps), a.count if a.count <= 16 else 16, where)
            objs = [d.find(s[0]) for s in a.steps]
            self.assertEqual(objs[-1], i, where + ": the path ends elsewhere")
            self.assertIn(objs[0], roots, where + ": the path starts at no root's target")
            hops = list(zip(a.steps, objs, objs[1:]))
            if a.skipped:   # no hop across the objects left out
                del hops[7]
            for (addr, size, off), k, nxt in hops:
                self.assertEqual((addr, size), (d.addrs[k], d.sizes[k]), where)
                v = pointer_words(d, k).get(off)
                self.assertTrue(v is not None and d.find(v) == nxt,
                                "%s: word +%s of %#x does not point to the next" % (
                                    where, off, addr))
            paths += 1
        return paths


class WhyManyPaths(unittest.TestCase):
    """why -n K: shared/main.go's big buffer is held by main.a's and main.b's Holders (and
    by main's frame while it runs): paths from each, none through another's objects,
    each hop a real pointer word of the dump; then nothing more is left."""

    def test_shared_buffer(self):
        binary, dump, f = progs.prepare("shared", WORK)
        d = reach.load(dump)
        code, out, err = heapref("why", "-n", "10", binary, dump, "%#x" % f["ptr_big"])
        self.assertEqual(code, 0, err)
        a, = parse_why(out)
        self.assertGreaterEqual(len(a.paths), 2)
        self.assertLess(len(a.paths), 10)
        self.assertTrue(a.no_more, out)
        self.assertEqual([p.number for p in a.paths], list(range(1, len(a.paths) + 1)))
        roots = [p.root for p in a.paths]
        self.assertIn("main.a", roots)
        self.assertIn("main.b", roots)
        self.assertEqual(len(set(roots)), len(roots), "a root variable used twice")
        targets = root_targets(d)
        used = set()
        holders = {f["ptr_main.a"]: "main.a", f["ptr_main.b"]: "main.b"}
        for p in a.paths:
            objs = [d.find(s[0]) for s in p.steps]
            self.assertEqual(objs[-1], d.find(f["ptr_big"]))
            self.assertIn(objs[0], targets)
            self.assertFalse(used & set(objs[:-1]), "paths share an object")
            used |= set(objs[:-1])
            for (addr, size, off), k, nxt in zip(p.steps, objs, objs[1:]):
                self.assertEqual(pointer_words(d, k).get(off) is not None and
                                 d.find(pointer_words(d, k)[off]), nxt)
            if p.root in holders.values():
                self.assertEqual(holders.get(p.steps[0][0]), p.root)

    def test_type_of_an_object_a_global_points_at(self):
        """testprogs/globals: main.gptr points straight at a main.Pair (its chain is the
        root's, naming no type) and main.gstruct.P at another: both are main.Pairs."""
        binary, dump, f = progs.prepare("globals", WORK)
        code, out, err = heapref("why", "-n", "2", binary, dump, "main.Pair")
        self.assertEqual(code, 0, err)
        answers = parse_why(out)
        count, _, shown = parse_why.types["main.Pair"]
        self.assertEqual((count, shown), (2, 2))
        self.assertEqual(sorted(a.root for a in answers), ["main.gptr", "main.gstruct"])

    def test_biggest_of_a_type(self):
        binary, dump, f = progs.prepare("shared", WORK)
        d = reach.load(dump)
        code, out, err = heapref("why", "-n", "3", binary, dump, "main.Node", "main.Nope")
        self.assertEqual(code, 1, err)   # no object of main.Nope
        answers = parse_why(out)
        node = d.sizes[d.find(f["ptr_main.c"])]
        count, nbytes, shown = parse_why.types["main.Node"]
        self.assertIsNone(parse_why.types["main.Nope"])
        # every node, the first too: main.c points straight at it, so its chain (the
        # root's) names no type, but the typed walk read it as a main.Node
        self.assertEqual((count, nbytes, shown), (f["list_len"], f["list_len"] * node, 3))
        self.assertEqual(len(answers), 3)
        for a in answers:
            self.assertEqual((a.size, a.root), (node, "main.c"))
            self.assertIn(a.chain, (("main.c",), ("main.c", "next. (*main.Node)")))


class WhyFromExamples(unittest.TestCase):
    """analyze --text --examples N lists under each chain the N biggest objects charged
    to it, biggest first: each is an object of the dump (reach.py) of the size said, the
    only object of main.target's chain is its buffer, and `why` on one names that chain."""

    def test_static_program(self):
        binary, dump, f = progs.prepare("static", WORK)
        d = reach.load(dump)
        code, out, err = heapref("analyze", "--text", "--by-index", "--cutoff", "0",
                                 "--examples", "3", binary, dump)
        self.assertEqual(code, 0, err)
        chain, stack, examples = None, [], {}
        for line in out.splitlines()[2:]:
            m = re.match(r"^\s+\d+\s+[0-9.]+%\s+\d+  ( *)(.*)$", line)
            if m:
                depth = len(m.group(1)) // 2
                stack = stack[:depth] + [m.group(2)]
                chain = tuple(stack[1:])
                continue
            m = re.match(r"^\s+e\.g\. (.*)$", line)
            self.assertTrue(m, line)
            examples[chain] = [(int(a, 16), int(b)) for a, b in
                               re.findall(r"0x([0-9a-f]+) \((\d+) B\)", m.group(1))]
        item = ("main.items", "m. (map[int]*main.Item)", "$mapval. (*main.Item)")
        self.assertEqual(len(examples[item]), 3)
        self.assertEqual(len(examples[item + ("buf. ([]uint8)",)]), 3)
        big = examples[("main.target", "data. ([]uint8)")]
        self.assertEqual(big, [(f["ptr_main.target.data"], d.sizes[d.find(f["ptr_main.target.data"])])])
        for ex in examples.values():
            self.assertLessEqual(len(ex), 3)
            self.assertEqual([s for _, s in ex], sorted((s for _, s in ex), reverse=True))
            for addr, size in ex:
                i = d.find(addr)
                self.assertEqual((d.addrs[i], d.sizes[i]), (addr, size))
        # the profile carries the same examples as a label of each chain's sample
        with tempfile.TemporaryDirectory() as tmp:
            pb = os.path.join(tmp, "p.pb.gz")
            code, _, err = heapref("analyze", "--examples", "3", "-o", pb, binary, dump)
            self.assertEqual(code, 0, err)
            profile.read(pb)
        labels = profile.parse_raw.labels
        for chain in (item, item + ("buf. ([]uint8)",), ("main.target", "data. ([]uint8)")):
            self.assertEqual(labels[chain]["examples"],
                             " ".join("0x%x" % a for a, _ in examples[chain]), chain)
        addr = examples[item + ("buf. ([]uint8)",)][0][0]
        code, out, err = heapref("why", binary, dump, "%#x" % addr)
        self.assertEqual(code, 0, err)
        self.assertEqual(parse_why(out)[0].chain, item + ("buf. ([]uint8)",))


if __name__ == "__main__":
    unittest.main()
