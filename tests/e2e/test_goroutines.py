# SPDX-License-Identifier: Apache-2.0
"""`heapref goroutines` and the goroutine labels of the profile.

testprogs/leak starts 1000 workers from main.start, each allocating a 4 KiB buffer on
the heap and then blocking for ever on a channel no one sends on. They must come out as
one group: 1000 goroutines created by main.start, waiting in "chan receive", leaked by
the runtime's definition (the channel is theirs alone), holding at least their 1000 buffers (the channel and each worker's
waiting record, reached from their stacks too, come on top: at most 1 KiB a worker).

testprogs/blocked parks 600 goroutines on channels for good (chan send, chan receive,
select), each holding a heap buffer in a frame variable. While they wait, the runtime's
own frames point to each one's g and to the sudogs that queue it: that memory is the
goroutines' bookkeeping, charged to the roots `$goroutine (runtime.g)` and `$goroutine
(runtime.sudog)` (with the goroutine's labels), not to runtime variables such as
runtime.chansend.gp that topped the ranking.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402  (tests/e2e/profile.py, not the standard library's)
import progs  # noqa: E402
import reach  # noqa: E402

heapref = progs.heapref
COLUMNS = ["count", "bytes", "objects", "stack_bytes", "retained_bytes", "leaked", "status",
           "wait_reason", "created_by", "waited_s", "goids", "stack"]


class Goroutines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, cls.f = progs.prepare("leak", progs.WORK)
        cls.d = reach.load(cls.dump)

    def rows(self):
        code, out, err = heapref("goroutines", "--format", "tsv", self.binary, self.dump)
        self.assertEqual(code, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0].split("\t"), COLUMNS)
        return [dict(zip(COLUMNS, line.split("\t"))) for line in lines[1:]]

    def test_leaked_workers_are_one_group(self):
        f = self.f
        rows = self.rows()
        buf = min(s for s in set(self.d.sizes) if s >= f["buf_size"])
        top = rows[0]
        self.assertEqual((int(top["count"]), top["created_by"], top["status"],
                          top["wait_reason"], top["leaked"]),
                         (f["workers"], f["creator"], "waiting", "chan receive", "yes"), top)
        self.assertIn("main.worker", top["stack"].split())
        self.assertGreaterEqual(int(top["objects"]), f["workers"])
        self.assertGreaterEqual(int(top["bytes"]), f["workers"] * buf)
        self.assertLessEqual(int(top["bytes"]), f["workers"] * (buf + 1024))
        # every goroutine is in one group, the others not leaked
        self.assertEqual(sum(int(r["count"]) for r in rows), len(self.d.goroutines))
        self.assertEqual([r for r in rows[1:] if r["leaked"] == "yes"], [])
        # the channel they wait on is theirs alone: what only they keep alive is their
        # buffers (their g's and sudogs stay, on the runtime's list of goroutines)
        self.assertGreaterEqual(int(top["retained_bytes"]), f["workers"] * buf)
        self.assertLessEqual(int(top["retained_bytes"]), int(top["bytes"]))
        # no more memory than is reachable
        self.assertLessEqual(sum(int(r["bytes"]) for r in rows), reach.reachable(self.d).bytes)

    def test_profile_labels_samples_by_goroutine(self):
        """analyze, by default (as with --goroutine-labels): the samples of chains that start
        in goroutines' frames are split by goroutine and labelled (goroutine, created_by,
        status, wait_reason), so -tagfocus=created_by=main.start keeps exactly the leaked
        group's bytes, and -tags lists 1000 goroutine ids for it; the totals are still
        reach.py's. --no-goroutine-labels: the same chains, no goroutine label."""
        import re
        import subprocess
        import tempfile
        import profile
        group = self.rows()[0]
        with tempfile.TemporaryDirectory(prefix="heapref-goroutines-") as tmp:
            pb, plain = os.path.join(tmp, "p.pb.gz"), os.path.join(tmp, "plain.pb.gz")
            code, _, err = heapref("analyze", "-o", pb, self.binary, self.dump)
            self.assertEqual(code, 0, err)
            code, _, err = heapref("analyze", "--no-goroutine-labels", "-o", plain,
                                   self.binary, self.dump)
            self.assertEqual(code, 0, err)
            labelled = profile.read(pb)
            self.assertTrue(any("goroutine" in v for v in profile.parse_raw.labels.values()))
            self.assertEqual(profile.read(plain), labelled)  # labels last read: plain's
            self.assertFalse(any("goroutine" in v for v in profile.parse_raw.labels.values()))
            r = reach.reachable(self.d)
            self.assertEqual(profile.totals(profile.read(pb)), (r.objects, r.bytes))

            def pprof(*args):
                return subprocess.run([progs.GO, "tool", "pprof"] + list(args) + [pb],
                                      capture_output=True, text=True, check=True).stdout
            top = pprof("-top", "-nodefraction=0", "-unit=byte",
                        "-tagfocus=created_by=" + self.f["creator"])
            total = int(re.search(r"Showing nodes accounting for (\d+)B", top).group(1))
            self.assertEqual(total, int(group["bytes"]), top)
            tags = pprof("-tags", "-tagfocus=created_by=" + self.f["creator"])
            ids = tags.split(" goroutine: ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
            self.assertEqual(len(ids), self.f["workers"], tags[:2000])
            self.assertIn(" wait_reason: ", tags)

    def test_text_form(self):
        code, out, err = heapref("goroutines", self.binary, self.dump)
        self.assertEqual(code, 0, err)
        self.assertIn("%d goroutines in " % len(self.d.goroutines), out.splitlines()[0])
        self.assertIn(" yes ", out.splitlines()[3])



G_ROOT, SUDOG_ROOT = "$goroutine (runtime.g)", "$goroutine (runtime.sudog)"


class RuntimeBookkeeping(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, cls.f = progs.prepare("blocked", progs.WORK)
        cls.d = reach.load(cls.dump)
        cls.pb = os.path.join(os.path.dirname(cls.dump), "bookkeeping.pb.gz")
        code, _, err = heapref("analyze", "-o", cls.pb, cls.binary, cls.dump)
        if code != 0:
            raise AssertionError(err)
        cls.p = profile.read(cls.pb)
        cls.blocked = cls.f["senders"] + cls.f["receivers"] + cls.f["selectors"]

    def own(self, chain):
        return tuple(self.p.get(chain, (0, 0)))

    def test_no_runtime_variable_holds_them(self):
        roots = {c[0] for c in self.p}
        for name in ("runtime.chansend.gp", "runtime.chanrecv.gp", "runtime.selectgo.gp",
                     "runtime.chansend.mysg", "runtime.chanrecv.mysg"):
            self.assertNotIn(name, roots)
        self.assertIn(G_ROOT, roots)

    def test_each_goroutine_g_is_its_own(self):
        """Every blocked goroutine's g (the dump's goroutine records give its address;
        the object there is the g) is charged to the g root itself: one object each,
        of the g's size, and no more objects there than goroutines."""
        gs = {self.d.find(g.addr) for g in self.d.goroutines} - {None}
        size = {self.d.sizes[i] for i in gs}
        self.assertEqual(len(size), 1, size)
        objects, nbytes = self.own((G_ROOT,))
        self.assertGreaterEqual(objects, self.blocked)
        self.assertLessEqual(objects, len(gs))
        self.assertEqual(nbytes, objects * size.pop())

    def test_sudogs_are_bookkeeping(self):
        """One sudog per blocked send or receive and one per case of each select: 800,
        under the sudog root or below a g (its waiting list)."""
        sudogs = (profile.cum(self.p, (SUDOG_ROOT,))[0] +
                  profile.cum(self.p, (G_ROOT, "waiting. (*runtime.sudog)"))[0])
        self.assertGreaterEqual(sudogs, self.f["senders"] + self.f["receivers"] +
                                2 * self.f["selectors"])

    def test_buffers_stay_on_their_frames(self):
        size = reach.size_class(self.d, self.f["buf_size"])
        for fn, key in (("main.send", "senders"), ("main.receive", "receivers"),
                        ("main.choose", "selectors")):
            self.assertEqual(profile.cum(self.p, (fn + ".buf",)),
                             (self.f[key], self.f[key] * size), fn)

    def test_totals_are_what_is_reachable(self):
        r = reach.reachable(self.d)
        self.assertEqual(profile.totals(self.p), (r.objects, r.bytes))


if __name__ == "__main__":
    unittest.main()
