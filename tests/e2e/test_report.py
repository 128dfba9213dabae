# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the text report, `heapref analyze --text [--cutoff PCT]`.

Every testprogs program, built by the machine's Go, is analysed twice: once to a pprof
profile, read back by the real client (`go tool pprof -raw`, profile.py), and once to
the text report. The report must say what the profile says and what reach.py (an
independent reader of the dump) finds reachable:
  - at --cutoff 0 --by-index, every chain of the profile is a line, with the profile's
    cumulative objects and bytes; every <self> line is the chain's own value; the top
    line is everything reach.py finds reachable; siblings come biggest first;
  - at --cutoff 0, the same against the profile with element names `[0]. (T)` ...
    `[10+]. (T)` folded into `[*]. (T)` here (fold(), written from docs/analysis.md's
    names, not from the C code);
  - at the default 1%, the lines directly under a line add up to it, a chain is a line
    exactly when it (and so each chain above it) has at least 1% of the bytes, and each
    <other> line counts the chains it merges.
One scenario is checked against the program's own facts: cache/main.go's 100 buffers.

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
TOP = "(everything reachable from the roots)"
ROW = re.compile(r"^ *(\d+) +(\d+\.\d\d)% +(\d+)  ( *)(?:\[depth (\d+)\] )?(.+)$")
OTHER = re.compile(r"^<other> \((own value and )?(\d+) smaller chains?\)$")


heapref = progs.heapref


class Line:
    """One report line: its chain (names from the root; <self>/<other> as the last)."""

    def __init__(self, chain, objects, nbytes, share, label):
        self.chain, self.objects, self.bytes = chain, objects, nbytes
        self.share, self.label = share, label
        self.below = []   # the lines directly under this one

    @property
    def special(self):
        return self.label.startswith("<self>") or self.label.startswith("<other>")


def parse_report(text):
    """The lines of a report as a tree of Line, root first; checks the header."""
    rows = text.splitlines()
    assert rows[0].startswith("# heapref: "), rows[0]
    assert rows[1].split() == ["bytes", "share", "objects", "chain"], rows[1]
    lines, open_at = [], []   # open_at[depth]: the last line at that depth
    for row in rows[2:]:
        m = ROW.match(row)
        assert m, "not a report line: %r" % row
        depth = int(m.group(5)) if m.group(5) else len(m.group(4)) // 2
        label = m.group(6)
        parent = open_at[depth - 1] if depth else None
        chain = (parent.chain if parent else ()) + ((label,) if depth else ())
        line = Line(chain, int(m.group(3)), int(m.group(1)), float(m.group(2)), label)
        if parent:
            parent.below.append(line)
        del open_at[depth:]
        open_at.append(line)
        lines.append(line)
    assert lines and lines[0].label == TOP, "the first line is not the top"
    return lines


class Program:
    def __init__(self, name, tmp):
        self.name = name
        self.binary, self.dump, self.facts = progs.prepare(name, WORK)
        self.pb = os.path.join(tmp, name + ".pb.gz")
        code, _, err = heapref("analyze", "-o", self.pb, self.binary, self.dump)
        assert code == 0, "analyze %s: %s" % (name, err)
        self.p = profile.read(self.pb)
        self.reports = {}

    def report(self, *args):
        if args not in self.reports:
            code, out, err = heapref("analyze", "--text", *(list(args) + [self.binary,
                                                                         self.dump]))
            assert code == 0, "analyze --text %s: %s" % (self.name, err)
            self.reports[args] = (out, parse_report(out))
        return self.reports[args]


ELEMENT = re.compile(r"^\[(?:\d|10\+)\]\. \(")


def fold(p):
    """The profile with each element name [i]. (T) / [10+]. (T) as [*]. (T), values added."""
    folded = {}
    for chain, (o, b) in p.items():
        key = tuple(ELEMENT.sub("[*]. (", name) for name in chain)
        fo, fb = folded.get(key, (0, 0))
        folded[key] = (fo + o, fb + b)
    return folded


def prefixes(p):
    """Every chain of the profile and every chain above one (the tree's nodes)."""
    return {c[:k] for c in p for k in range(1, len(c) + 1)}


class TextReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="heapref-report-")
        cls.programs = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def program(self, name):
        if name not in self.programs:
            self.programs[name] = Program(name, self.tmp.name)
        return self.programs[name]

    def check_whole_report(self, g, p, lines):
        """lines, a report at cutoff 0, against profile p (chain -> own value)."""
        r = reach.reachable(reach.load(g.dump))
        self.assertEqual((lines[0].objects, lines[0].bytes), (r.objects, r.bytes),
                         "top line against reach.py")
        named = {}
        for ln in lines[1:]:
            self.assertFalse(ln.label.startswith("<other>"), "an <other> at 0%")
            if ln.label == "<self>":
                mine = p.get(ln.chain[:-1], (0, 0))
                self.assertEqual((ln.objects, ln.bytes), (mine[0], mine[1]),
                                 "own value of %s" % " > ".join(ln.chain[:-1]))
                continue
            named[ln.chain] = ln
            self.assertEqual((ln.objects, ln.bytes), tuple(profile.cum(p, ln.chain)),
                             "cumulative value of %s" % " > ".join(ln.chain))
        self.assertEqual(set(named), prefixes(p), "the chains of the report")
        for ln in lines:
            sizes = [b.bytes for b in ln.below if not b.special]
            self.assertEqual(sizes, sorted(sizes, reverse=True),
                             "siblings under %s not biggest first" % (ln.chain,))

    def test_cutoff_0_by_index_is_the_profile(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                g = self.program(name)
                self.check_whole_report(g, g.p, g.report("--cutoff", "0", "--by-index")[1])

    def test_cutoff_0_is_the_folded_profile(self):
        folded_any = False
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                g = self.program(name)
                p = fold(g.p)
                folded_any |= len(p) < len(g.p)
                self.check_whole_report(g, p, g.report("--cutoff", "0")[1])
        self.assertTrue(folded_any, "no program has elements to fold")

    def test_default_cutoff_condenses(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                g = self.program(name)
                out, lines = g.report()
                self.assertIn("chains under 1% of the bytes", out.splitlines()[0])
                p = fold(g.p)
                total = lines[0].bytes
                for ln in lines:
                    if ln.below:
                        self.assertEqual((sum(b.objects for b in ln.below),
                                          sum(b.bytes for b in ln.below)),
                                         (ln.objects, ln.bytes),
                                         "lines under %s do not add up" % (ln.chain,))
                    if ln.special:
                        continue
                    if ln.chain:
                        self.assertGreaterEqual(100 * ln.bytes, total, "%s is under 1%%"
                                                % (ln.chain,))
                    kids = profile.children(p, ln.chain)
                    big = {k for k in kids
                           if 100 * profile.cum(p, ln.chain + (k,))[1] >= total}
                    shown = {b.label for b in ln.below if not b.special}
                    self.assertEqual(shown, big,
                                     "chains shown under %s" % (ln.chain,))
                    for b in ln.below:
                        m = OTHER.match(b.label)
                        if b.label.startswith("<other>"):
                            self.assertTrue(m, b.label)
                            self.assertEqual(int(m.group(2)), len(set(kids) - big),
                                             "chains merged under %s" % (ln.chain,))

    def test_cache_buffers(self):
        """cache/main.go: main.cache holds 100 Entries, each with a 1024-byte buf, so
        the chain to the buffers has 100 objects of 1024 bytes' size class (1024)."""
        g = self.program("cache")
        _, lines = g.report()
        by_chain = {ln.chain: ln for ln in lines}
        bufs = by_chain.get(("main.cache", "$mapval. (*main.Entry)", "buf. ([]uint8)"))
        self.assertIsNotNone(bufs, "no line for the buffers:\n" + g.report()[0])
        n, size = g.facts["entries"], g.facts["buf_size"]
        self.assertEqual((bufs.objects, bufs.bytes), (n, n * size))
        self.assertEqual(lines[1].label, "main.cache", "main.cache is not the biggest root")

    def test_example_elements_fold(self):
        """example/main.go: main.pool holds 32 *Conn, each with a 32 KiB rbuf and wbuf;
        each of 200 sessions holds 16 *Event, each with 256 bytes of Data. Folded, the
        elements are one [*] chain each, holding all of them."""
        g = self.program("example")
        f = g.facts
        sizes = sorted(set(reach.load(g.dump).sizes))

        def size_class(n):   # every small object's size is a size class; these are in it
            return min(x for x in sizes if x >= n)

        _, lines = g.report()
        by_chain = {ln.chain: (ln.objects, ln.bytes) for ln in lines}
        conn = ("main.pool", "[*]. (*main.Conn)")
        n, buf = f["conns"], f["conn_buf_size"]
        self.assertEqual(by_chain.get(conn),
                         (3 * n, n * (size_class(f["sizeof_main.Conn"]) + 2 * buf)))
        self.assertEqual(by_chain.get(conn + ("rbuf. ([]uint8)",)), (n, n * buf))
        self.assertEqual(by_chain.get(conn + ("wbuf. ([]uint8)",)), (n, n * buf))
        event = ("main.sessions", "$mapval. (*main.Session)", "Events. ([]*main.Event)",
                 "[*]. (*main.Event)")
        n, data = f["sessions"] * f["events_per_session"], f["event_data_size"]
        self.assertEqual(by_chain.get(event),
                         (2 * n, n * (size_class(f["sizeof_main.Event"]) + data)))
        self.assertEqual(by_chain.get(event + ("Data. ([]uint8)",)), (n, n * data))
        self.assertFalse([c for c in by_chain if any(ELEMENT.match(x) for x in c)],
                         "element names left unfolded")

    def test_output_file_and_usage(self):
        g = self.program("cache")
        out, _ = g.report()
        path = os.path.join(self.tmp.name, "report.txt")
        code, stdout, err = heapref("analyze", "--text", "-o", path, g.binary, g.dump)
        self.assertEqual((code, stdout), (0, ""), err)
        with open(path) as f:
            self.assertEqual(f.read(), out)
        self.assertIn("wrote %s:" % path, err)
        for args in (["--cutoff", "1"], ["--by-index"], ["--text", "--cutoff", "101"],
                     ["--text", "--cutoff", "x"], ["--text", "--cutoff"]):
            with self.subTest(args=args):
                code, stdout, err = heapref("analyze", *(args + [g.binary, g.dump]))
                self.assertEqual(code, 2, err)
                self.assertEqual(stdout, "")
                self.assertTrue(err.startswith("heapref: "), err)


if __name__ == "__main__":
    unittest.main()
