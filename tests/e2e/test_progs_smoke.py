# SPDX-License-Identifier: Apache-2.0
"""Smoke test for the Go test programs: each builds, runs, writes a heap
dump and prints sensible facts.

    python3 -m unittest tests/e2e/test_progs_smoke.py -v

Environment: HEAPREF_GO (go command, default "go"), HEAPREF_GOTOOLCHAIN
(optional, e.g. go1.22.12, passed as GOTOOLCHAIN).
"""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402

GO = os.environ.get("HEAPREF_GO", "go")
ENV = {"GOTOOLCHAIN": os.environ["HEAPREF_GOTOOLCHAIN"]} if os.environ.get("HEAPREF_GOTOOLCHAIN") else None


@unittest.skipUnless(shutil.which(GO), "no go command")
class ProgsSmokeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="heapref-progs-")
        cls.go_version = progs.go_version(GO, ENV)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_programs(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                binary, dump, facts = progs.prepare(name, self.work, go=GO, env=ENV)
                self.assertTrue(os.access(binary, os.X_OK))
                with open(dump, "rb") as f:
                    self.assertEqual(f.read(len(progs.DUMP_MAGIC)), progs.DUMP_MAGIC)
                self.assertEqual(facts["go_version"], self.go_version)
                self.assertIn("goarch", facts)
                self.assertGreater(facts["kept_objects"], 0)
                self.assertGreater(facts["kept_bytes"], 0)

    def test_prepare_caches(self):
        first = progs.prepare("cycle", self.work, go=GO, env=ENV)
        mtime = os.path.getmtime(first[1])
        progs._prepared.clear()  # force the on-disk cache path
        second = progs.prepare("cycle", self.work, go=GO, env=ENV)
        self.assertEqual(first, second)
        self.assertEqual(os.path.getmtime(second[1]), mtime)


if __name__ == "__main__":
    unittest.main()
