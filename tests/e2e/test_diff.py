# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `heapref diff --text OLD_BINARY OLD_DUMP NEW_BINARY NEW_DUMP`.

testprogs/grow (built by the machine's Go) writes two dumps of one run: the second after
adding facts["added"] entries, each an Entry and a buf_size-byte buffer, to main.cache
(made with room for them, so no map storage is allocated) and touching nothing else.
  - In the diff, main.cache grows by exactly those objects and bytes (sizes by size class
    from the dump, as test_analyze.py does), split as the program split them; the
    program's other globals, main.other and main.list, do not change at all. Chains of
    the runtime's own (runtime.allm gains an M when the runtime starts a thread between
    the dumps; the second dump's file has a heap-allocated name) may change, by little.
  - `go tool pprof -diff_base OLD.pb.gz NEW.pb.gz` on analyze's profiles of the two dumps
    says the same for every chain (-raw, read by profile.py) and for main.cache (-top).
  - The top line is what reach.py finds reachable in each dump; the lines under a line add
    up to its growth; no chain name holds an address.
  - One dump against itself: nothing changed. Bad inputs: one error line, analyze's
    exit statuses.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import re
import subprocess
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
GO = os.environ.get("HEAPREF_GO", "go")
TOP = "(everything reachable from the roots)"
HEADER = re.compile(r"^# heapref diff: reachable bytes (\d+) -> (\d+) \(([+-]\d+)\), objects "
                    r"(\d+) -> (\d+) \(([+-]\d+)\); figures are cumulative; (\d+) chains "
                    r"changed, (\d+) unchanged chains not shown$")
ROW = re.compile(r"^ *([+-]\d+) +([+-]\d+) +(\d+) +(\d+) +(\d+) +(\d+) (new |gone|    )  "
                 r"( *)(?:\[depth (\d+)\] )?(.+)$")
# How much the runtime's own chains may grow or shrink between the dumps: a few new Ms
# (runtime.allm: about 5 KiB each) and the like, well under the 132 KiB the program adds.
RUNTIME_SLACK = 32 << 10


heapref = progs.heapref


class Line:
    """One table line: its chain (names from the root; <self> as the last) and figures."""

    def __init__(self, chain, m):
        self.chain, self.label = chain, m.group(10)
        self.growth = (int(m.group(2)), int(m.group(1)))        # (objects, bytes)
        self.old = (int(m.group(5)), int(m.group(3)))
        self.new = (int(m.group(6)), int(m.group(4)))
        self.mark = m.group(7).strip()
        self.below = []


def parse_diff(text):
    """(header match, lines as a tree of Line, root first)."""
    rows = text.splitlines()
    header = HEADER.match(rows[0])
    assert header, rows[0]
    assert rows[1].split() == ["+bytes", "+objects", "old", "bytes", "new", "bytes", "old",
                               "objs", "new", "objs", "chain"], rows[1]
    lines, open_at = [], []
    for row in rows[2:]:
        m = ROW.match(row)
        assert m, "not a diff line: %r" % row
        depth = int(m.group(9)) if m.group(9) else len(m.group(8)) // 2
        parent = open_at[depth - 1] if depth else None
        line = Line((parent.chain if parent else ()) + ((m.group(10),) if depth else ()), m)
        if parent:
            parent.below.append(line)
        del open_at[depth:]
        open_at.append(line)
        lines.append(line)
    assert lines and lines[0].label == TOP, "the first line is not the top"
    return header, lines


size_class = reach.size_class


def pprof(*args):
    p = subprocess.run([GO, "tool", "pprof"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        raise AssertionError("go tool pprof %s: %s" % (" ".join(args), p.stderr.decode()))
    return p.stdout.decode()


def sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


class Diff(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="heapref-diff-")
        cls.binary, cls.old, cls.facts = progs.prepare("grow", WORK)
        cls.new = cls.old + ".2"
        if not os.path.exists(cls.new) or not os.path.getsize(cls.new):
            raise AssertionError("grow wrote no second dump at %s" % cls.new)
        cls.tables = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def diff(self, *args):
        if args not in self.tables:
            code, out, err = heapref("diff", "--text", *(list(args) + [
                self.binary, self.old, self.binary, self.new]))
            self.assertEqual(code, 0, err)
            self.tables[args] = (out, parse_diff(out))
        return self.tables[args]

    def profile_of(self, dump):
        pb = os.path.join(self.tmp.name, os.path.basename(dump) + ".pb.gz")
        if not os.path.exists(pb):
            code, _, err = heapref("analyze", "-o", pb, self.binary, dump)
            self.assertEqual(code, 0, err)
        return pb

    def test_only_the_grown_map_grows(self):
        f = self.facts
        d = reach.load(self.new)
        n, entry, buf = f["added"], size_class(d, f["sizeof_main.Entry"]), \
            size_class(d, f["buf_size"])
        out, (_, lines) = self.diff()
        by_chain = {ln.chain: ln for ln in lines}
        root = ("main.cache",)
        mapval = root + ("$mapval. (*main.Entry)",)
        bufs = mapval + ("buf. ([]uint8)",)
        self.assertIn(root, by_chain, out)
        self.assertEqual(by_chain[root].growth, (2 * n, n * (entry + buf)), out)
        self.assertEqual(by_chain[mapval].growth, (2 * n, n * (entry + buf)), out)
        self.assertEqual(by_chain[mapval + ("<self>",)].growth, (n, n * entry), out)
        self.assertEqual(by_chain[bufs].growth, (n, n * buf), out)
        self.assertEqual(by_chain[bufs].old, (f["base"], f["base"] * buf), out)
        self.assertEqual([ln.chain for ln in by_chain[root].below], [mapval], out)
        self.assertEqual(lines[1].chain, root, "main.cache is not the biggest growth")
        mine = [ln.chain for ln in lines[1:] if ln.chain[0].startswith("main.")]
        self.assertEqual({c[0] for c in mine}, {"main.cache"}, out)
        # main.other and main.list are there, unchanged, not merely missing from both
        p_old = profile.read(self.profile_of(self.old))
        p_new = profile.read(self.profile_of(self.new))
        for g, count in (("main.other", f["other_entries"]), ("main.list", f["list_entries"])):
            self.assertGreaterEqual(profile.cum(p_old, (g,))[1], count * buf, g)
            self.assertEqual(profile.cum(p_old, (g,)), profile.cum(p_new, (g,)), g)
        runtime = sub(lines[0].growth, by_chain[root].growth)
        self.assertLess(abs(runtime[1]), RUNTIME_SLACK, "the runtime's chains:\n" + out)

    def test_top_line_is_what_reach_finds(self):
        header, lines = self.diff()[1]
        for dump, figures in ((self.old, lines[0].old), (self.new, lines[0].new)):
            r = reach.reachable(reach.load(dump))
            self.assertEqual(figures, (r.objects, r.bytes), dump)
        self.assertEqual((int(header.group(1)), int(header.group(2))),
                         (lines[0].old[1], lines[0].new[1]))
        self.assertEqual(int(header.group(7)), len(lines) - 1 -
                         sum(ln.label == "<self>" for ln in lines))

    def check_against(self, p, lines, p_old, p_new):
        """A --by-index table against pprof's diff p of the profiles p_old and p_new."""
        shown = set()
        for ln in lines:
            if ln.label == "<self>":
                continue
            shown.add(ln.chain)
            self.assertEqual(ln.growth, profile.cum(p, ln.chain), ln.chain)
            self.assertEqual(ln.old, profile.cum(p_old, ln.chain), ln.chain)
            self.assertEqual(ln.new, profile.cum(p_new, ln.chain), ln.chain)
            self.assertEqual(ln.mark, "new" if ln.old == (0, 0) and ln.chain else
                             "gone" if ln.new == (0, 0) and ln.chain else "", ln.chain)
        grown = {c[:k] for c in p for k in range(1, len(c) + 1)
                 if profile.cum(p, c[:k]) != (0, 0)}
        self.assertLessEqual(grown, shown, "chains that changed but have no line")
        for ln in lines:
            if ln.below:
                self.assertEqual(tuple(map(sum, zip(*(b.growth for b in ln.below)))),
                                 ln.growth, "lines under %s do not add up" % (ln.chain,))
            sizes = [b.growth[1] for b in ln.below if b.label != "<self>"]
            self.assertEqual(sizes, sorted(sizes, reverse=True), ln.chain)

    def test_pprof_diff_base_agrees(self):
        old_pb, new_pb = self.profile_of(self.old), self.profile_of(self.new)
        p = profile.parse_raw(pprof("-raw", "-diff_base", old_pb, new_pb))
        _, lines = self.diff("--by-index")[1]
        self.check_against(p, lines, profile.read(old_pb), profile.read(new_pb))
        cache = {ln.chain: ln for ln in lines}[("main.cache",)]
        for index, figure, unit in (("inuse_space", 1, "B"), ("inuse_objects", 0, "")):
            top = pprof("-top", "-nodefraction=0", "-sample_index=" + index,
                        *(["-unit=byte"] if unit else []), "-diff_base", old_pb, new_pb)
            row = [r.split() for r in top.splitlines() if r.endswith(" main.cache")]
            self.assertEqual(len(row), 1, top)
            self.assertEqual(row[0][3], "%d%s" % (cache.growth[figure], unit), top)

    def test_names_hold_no_addresses(self):
        out, (_, lines) = self.diff("--by-index")
        for ln in lines:
            for name in ln.chain:
                self.assertFalse(re.search(r"(?<![+$\w])0x[0-9a-f]+|\b\d{6,}\b", name), name)

    def test_one_dump_against_itself(self):
        code, out, err = heapref("diff", "--text", self.binary, self.new, self.binary,
                                 self.new)
        self.assertEqual(code, 0, err)
        header, lines = parse_diff(out)
        self.assertEqual(len(lines), 1, out)
        self.assertEqual(lines[0].growth, (0, 0))
        self.assertEqual(lines[0].old, lines[0].new)
        self.assertEqual(int(header.group(7)), 0)
        self.assertGreater(int(header.group(8)), 0)

    def test_bad_inputs(self):
        missing = os.path.join(self.tmp.name, "missing.dump")
        other_bin, other_dump, _ = progs.prepare("cache", WORK)
        b, o, n = self.binary, self.old, self.new
        cases = [
            ("missing dump", 1, [b, o, b, missing], missing),
            ("missing binary", 1, [missing, o, b, n], missing),
            ("another program's dump", 4, [b, o, b, other_dump], other_dump),
            ("another program's binary", 4, [other_bin, o, b, n], other_bin),
            ("swapped", 2, [b, o, n, b], "wrong way round"),
            ("three files", 2, [b, o, b], "two binaries and two heap dumps"),
        ]
        for what, status, args, said in cases:
            with self.subTest(what):
                code, out, err = heapref("diff", "--text", *args)
                self.assertEqual((code, out), (status, ""), err)
                first = err.splitlines()[0]
                self.assertTrue(first.startswith("heapref: "), err)
                self.assertIn(said, first)
                if status != 2:   # usage errors add the usage text
                    self.assertEqual(len(err.splitlines()), 1, err)
        for args, said in ((["-o", "x.pb.gz", "--text"], "no -o"), (["--by-index"], "--text")):
            code, out, err = heapref("diff", *(args + [b, o, b, n]))
            self.assertEqual((code, out), (2, ""), err)
            self.assertIn(said, err.splitlines()[0])

    def test_profile_is_what_diff_base_gives(self):
        """Without --text, diff writes the new dump's chains and the old one's negated:
        pprof's view of it is its own -diff_base of analyze's two profiles, chain by
        chain, and -top ranks main.cache's growth as the table does."""
        ours = os.path.join(self.tmp.name, "diff.pb.gz")
        code, _, err = heapref("diff", "-o", ours, self.binary, self.old, self.binary,
                               self.new)
        self.assertEqual(code, 0, err)
        mine = profile.read(ours)
        old_pb, new_pb = self.profile_of(self.old), self.profile_of(self.new)
        base = profile.parse_raw(pprof("-raw", "-diff_base", old_pb, new_pb))
        prefixes = {c[:k] for p in (mine, base) for c in p for k in range(1, len(c) + 1)}
        for chain in prefixes:
            self.assertEqual(profile.cum(mine, chain), profile.cum(base, chain), chain)
        _, lines = self.diff("--by-index")[1]
        cache = {ln.chain: ln for ln in lines}[("main.cache",)]
        self.assertEqual(profile.cum(mine, ("main.cache",)), cache.growth)


if __name__ == "__main__":
    unittest.main()
