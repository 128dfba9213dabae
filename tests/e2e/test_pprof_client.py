# SPDX-License-Identifier: Apache-2.0
"""The pprof writer read back by the real pprof client, `go tool pprof`.

A fixture program (tests/unit/pprof_fixture.c) writes a known chain tree; pprof must
read it, list each chain root first, and report each node's own and cumulative values.

Environment: PPROF_FIXTURE (set by ctest).
"""

import os
import re
import subprocess
import tempfile
import unittest

FIXTURE = os.environ.get("PPROF_FIXTURE")


def pprof(*args):
    p = subprocess.run(["go", "tool", "pprof"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise AssertionError("go tool pprof %s: %s" % (" ".join(args), p.stderr.decode()))
    return p.stdout.decode()


class PprofClientReadsTheProfile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.profile = os.path.join(cls.dir.name, "fixture.pb.gz")
        subprocess.run([FIXTURE, cls.profile], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_traces_root_first_with_values(self):
        out = pprof("-traces", "-sample_index=inuse_space", self.profile)
        traces = {}
        for block in out.split("-----------+-------------------------------------------------------"):
            # a sample's labels ("      root:  main.cache") come first, a line each
            lines = [l.strip() for l in block.strip().splitlines()
                     if l.strip() and not re.match(r"^\s*[A-Za-z_][\w.]*:\s", l)]
            if not lines or not re.match(r"^\d", lines[0]):
                continue
            value, leaf = lines[0].split(None, 1)
            traces[tuple([leaf] + lines[1:])] = value
        # pprof prints a trace leaf first: the chain read backwards
        self.assertEqual(traces[("buf. ([]uint8)", "$mapval. (*main.Entry)", "main.cache")], "100kB")
        self.assertEqual(traces[("main.worker.buf",)], "1MB")
        self.assertEqual(traces[("main.cache",)], "4.75kB")

    def test_every_sample_names_its_root(self):
        """The label "root" of each sample is the first name of its chain: -tags sums
        the samples per root variable."""
        out = pprof("-tags", "-sample_index=inuse_objects", self.profile)
        section = out.split(" root: ", 1)[1]
        counts = dict((m.group(2), int(m.group(1))) for m in
                      re.finditer(r"^\s+(\d+) \(\s*[0-9.]+%\): (\S+)$", section, re.M))
        self.assertEqual(counts["main.cache"], 201)

    def test_top_cumulative_objects(self):
        out = pprof("-top", "-cum", "-sample_index=inuse_objects", self.profile)
        rows = {}
        for line in out.splitlines():
            m = re.match(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.+?)\s*$", line)
            if m:
                rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
        self.assertEqual(rows["main.cache"], (1, 201))
        self.assertEqual(rows["$mapval. (*main.Entry)"], (100, 200))
        self.assertEqual(rows["buf. ([]uint8)"], (100, 100))
        self.assertEqual(rows["main.worker.buf"], (1, 1))
        self.assertIn("Type: inuse_objects", out)

    def test_default_sample_type_is_inuse_space(self):
        self.assertIn("Type: inuse_space", pprof("-top", self.profile))


if __name__ == "__main__":
    unittest.main()
