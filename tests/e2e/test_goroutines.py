# SPDX-License-Identifier: Apache-2.0
"""`heapref goroutines` and the goroutine labels of the profile.

testprogs/leak starts 1000 workers from main.start, each allocating a 4 KiB buffer on
the heap and then blocking for ever on a channel no one sends on. They must come out as
one group: 1000 goroutines created by main.start, waiting in "chan receive", marked as
likely leaked, holding at least their 1000 buffers (the channel and each worker's
waiting record, reached from their stacks too, come on top: at most 1 KiB a worker).

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
import reach  # noqa: E402

heapref = progs.heapref
COLUMNS = ["count", "bytes", "objects", "status", "wait_reason", "created_by",
           "likely_leaked", "waited_s", "stack"]


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
                          top["wait_reason"], top["likely_leaked"]),
                         (f["workers"], f["creator"], "waiting", "chan receive", "yes"), top)
        self.assertIn("main.worker", top["stack"].split())
        self.assertGreaterEqual(int(top["objects"]), f["workers"])
        self.assertGreaterEqual(int(top["bytes"]), f["workers"] * buf)
        self.assertLessEqual(int(top["bytes"]), f["workers"] * (buf + 1024))
        # every goroutine is in one group, the others not leaked
        self.assertEqual(sum(int(r["count"]) for r in rows), len(self.d.goroutines))
        self.assertEqual([r for r in rows[1:] if r["likely_leaked"] == "yes"], [])
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
        self.assertIn("LEAK?", out.splitlines()[2])


if __name__ == "__main__":
    unittest.main()
