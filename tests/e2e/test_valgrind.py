# SPDX-License-Identifier: Apache-2.0
"""heapref under valgrind's memcheck: no memory errors and no leaks on real runs.

    valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect ... heapref ...

A few end-to-end runs on small test programs: `info`, `analyze` to a file and to
standard output, `object`, a hand-built dump with a record of every kind (through
`analyze --force`: defers, panics, other roots), and error paths that free what they
had built (a truncated dump, a dump its binary did not write, an output that cannot be
written). Each must exit as heapref would without valgrind, with an error summary of
0 errors (definite and indirect leaks count as errors; memory still reachable at exit
does not).

memcheck cannot run a binary built with AddressSanitizer, so the test skips itself when
HEAPREF is one (scripts/test.sh runs the suite in both builds: this test checks the
normal one). It installs nothing: valgrind comes from scripts/install-deps.sh.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (cache of built programs),
HEAPREF_GO / HEAPREF_GOTOOLCHAIN (as test_analyze.py).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
import test_bad_inputs  # noqa: E402  (its hand-built dump with every record kind)

ROOT, HEAPREF, WORK, GO, ENV = progs.ROOT, progs.HEAPREF, progs.WORK, progs.GO, progs.ADHOC_ENV
VALGRIND = shutil.which("valgrind")
ERROR_EXIT = 97   # valgrind's exit status when it found errors; heapref never uses it
TIMEOUT = 600


def skip_reason():
    if not VALGRIND:
        return "valgrind is not installed (scripts/install-deps.sh installs it)"
    if not os.path.exists(HEAPREF):
        return "no heapref binary at %s" % HEAPREF
    if progs.is_asan_build(HEAPREF):
        return "%s is built with AddressSanitizer, which memcheck cannot run" % HEAPREF
    if not shutil.which(GO):
        return "no go command"
    return None


@unittest.skipIf(skip_reason(), skip_reason())
class Memcheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="heapref-valgrind-")
        cls.cycle = progs.prepare("cycle", WORK, go=GO, env=ENV)
        cls.finalizer = progs.prepare("finalizer", WORK, go=GO, env=ENV)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def memcheck(self, status, *args, stdout=subprocess.DEVNULL):
        """Runs heapref args under memcheck; asserts its exit status and a clean log."""
        log = os.path.join(self.tmp, "memcheck.log")
        cmd = [VALGRIND, "--tool=memcheck", "--error-exitcode=%d" % ERROR_EXIT,
               "--leak-check=full", "--show-leak-kinds=definite,indirect",
               "--errors-for-leak-kinds=definite,indirect", "--num-callers=30",
               "--log-file=" + log, HEAPREF] + [str(a) for a in args]
        p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT,
                           cwd=self.tmp)
        with open(log) as f:
            report = f.read()
        where = "heapref %s" % " ".join(map(str, args))
        summary = re.search(r"ERROR SUMMARY: (\d+) errors", report)
        self.assertIsNotNone(summary, "%s: no memcheck summary:\n%s" % (where, report[-3000:]))
        self.assertEqual(summary.group(1), "0", "%s:\n%s" % (where, report[-6000:]))
        self.assertNotEqual(p.returncode, ERROR_EXIT, "%s:\n%s" % (where, report[-6000:]))
        self.assertEqual(p.returncode, status, "%s: %s" % (where, p.stderr.decode()[-2000:]))
        return p

    def test_info_and_object(self):
        _, dump, facts = self.cycle
        self.memcheck(0, "info", "--stats", dump)
        self.memcheck(0, "object", dump, facts["ptr_a"], "0x1")

    def test_analyze(self):
        for binary, dump, _ in (self.cycle, self.finalizer):
            with self.subTest(program=os.path.basename(binary)):
                out = os.path.join(self.tmp, "p.pb.gz")
                self.memcheck(0, "analyze", "--stats", "-o", out, binary, dump)
                self.assertGreater(os.path.getsize(out), 0)

    def test_analyze_to_stdout(self):
        binary, dump, _ = self.cycle
        with tempfile.TemporaryFile() as out:
            self.memcheck(0, "analyze", "--max-depth", "3", "-o", "-", binary, dump, stdout=out)
            out.seek(0)
            self.assertEqual(out.read(2), b"\x1f\x8b", "not a gzip stream on stdout")

    def test_error_paths(self):
        binary, dump, _ = self.cycle
        other, _, _ = self.finalizer
        with open(dump, "rb") as f:
            data = f.read()
        cut = os.path.join(self.tmp, "cut.dump")
        with open(cut, "wb") as f:   # ends inside the records, after the params record
            f.write(data[:len(data) // 2])
        self.memcheck(1, "info", cut)
        self.memcheck(1, "analyze", "-o", os.path.join(self.tmp, "x.pb.gz"), binary, cut)
        # the binary and the dump are read and indexed, then refused
        self.memcheck(4, "analyze", "-o", os.path.join(self.tmp, "x.pb.gz"), other, dump)
        # the whole analysis, then the output fails
        self.memcheck(3, "analyze", "-o", os.path.join(self.tmp, "no-dir", "x.pb.gz"),
                      binary, dump)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.pb.gz")))

    def test_every_record_kind(self):
        binary, _, _ = self.cycle
        dump = os.path.join(self.tmp, "every-kind.dump")
        with open(dump, "wb") as f:
            f.write(test_bad_inputs.every_kind_dump().bytes())
        self.memcheck(0, "info", dump)
        self.memcheck(0, "analyze", "--force", "-o", os.path.join(self.tmp, "k.pb.gz"),
                      binary, dump)


if __name__ == "__main__":
    unittest.main()
