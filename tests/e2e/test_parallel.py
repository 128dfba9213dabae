"""heapref's second threads change nothing: the profile is the same, byte for byte, with
one processor or two.

Two stages start a second thread when the process may run on two processors: reading the
second half of a dump's records (above 64 MiB of records, dump_reader.c) and pass 2's
marking (a drain of more than 8192 objects, mark.c). The gen program writes a dump big
enough for both (a million objects, about 120 MB); analysed with a binary without DWARF,
every object is left to pass 2, whose first drain takes in most of the heap. Each
analysis runs as usual and under `taskset -c 0` (one processor: no second thread); the
decompressed profiles must be identical, run after run, and their totals must be what
reach.py computes.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (cache of built programs),
HEAPREF_GO / HEAPREF_GOTOOLCHAIN (as test_analyze.py).
"""

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402
import progs  # noqa: E402
import reach  # noqa: E402

ROOT, HEAPREF, WORK, GO, ENV = progs.ROOT, progs.HEAPREF, progs.WORK, progs.GO, progs.ADHOC_ENV
GEN_ARGS = ["-objects", "1000000", "-bytes", "100000000"]
TIMEOUT = 600


def skip_reason():
    if not shutil.which(GO):
        return "no go command"
    if not shutil.which("taskset"):
        return "no taskset (util-linux) to run heapref on one processor"
    if len(os.sched_getaffinity(0)) < 2:
        return "this process may use one processor only: there is no second thread to test"
    return None


@unittest.skipIf(skip_reason(), skip_reason())
class SecondThreads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="heapref-parallel-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def analyze(self, binary, dump, one_cpu, name):
        """Runs analyze (--force: the stripped binary has no symbols to pair the dump
        with); returns the decompressed profile and its path."""
        out = os.path.join(self.tmp, name + ".pb.gz")
        cmd = ([shutil.which("taskset"), "-c", "0"] if one_cpu else []) + [
            HEAPREF, "analyze", "--force", "-o", out, binary, dump]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        with gzip.open(out, "rb") as f:
            return f.read(), out

    def check_same(self, label, **build):
        binary, dump, _ = progs.prepare("gen", WORK, args=GEN_ARGS, go=GO, env=ENV, **build)
        self.assertGreater(os.path.getsize(dump), 64 << 20, "too small to be read in halves")
        one, _ = self.analyze(binary, dump, True, label + "-one")
        for run in range(2):
            two, path = self.analyze(binary, dump, False, "%s-two-%d" % (label, run))
            self.assertEqual(two, one, "%s: two processors, run %d: another profile than "
                             "one processor's" % (label, run))
        r = reach.reachable(reach.load(dump))
        self.assertEqual(tuple(profile.totals(profile.read(path))), (r.objects, r.bytes))

    def test_typed_walk_same_profile(self):
        """With DWARF: the dump read in halves, pass 1 as ever."""
        self.check_same("dwarf")

    def test_marking_same_profile(self):
        """Without DWARF or symbols: everything is pass 2's marking, shared by two
        threads."""
        self.check_same("stripped", ldflags="-s -w")


@unittest.skipIf(not shutil.which("strace"), "no strace (scripts/install-deps.sh --tests installs it)")
class ProcessorCountAskedOnce(unittest.TestCase):
    """Pass 2 drains once per root word it follows: with a stripped binary, once per
    pointer word of data and bss. How many processors may be used is asked once per
    analysis, not per drain (it was a sched_getaffinity call per drain: 4 million on a
    large heap). strace counts the calls: one for the dump reader, one for the scan."""

    def test_one_call_per_stage(self):
        binary, dump, _ = progs.prepare("globals", WORK, go=GO, env=ENV, ldflags="-s -w")
        d = reach.load(dump)
        heap_words = sum(1 for rec in d.data + d.bss for v in d.words(rec)
                         if d.find(v) is not None)
        self.assertGreater(heap_words, 50, "too few data/bss words point into the heap")
        with tempfile.TemporaryDirectory(prefix="heapref-strace-") as tmp:
            log = os.path.join(tmp, "strace.txt")
            # LeakSanitizer cannot run under ptrace (the sanitizer build): leaks are
            # checked by every other test
            env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") +
                                                 ":detect_leaks=0").lstrip(":"))
            p = subprocess.run(["strace", "-f", "-c", "-o", log, "-e",
                                "trace=sched_getaffinity", HEAPREF, "analyze", "--force",
                                "-o", os.path.join(tmp, "p.pb.gz"), binary, dump],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=TIMEOUT, env=env)
            self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
            with open(log) as f:
                calls = [int(line.split()[3]) for line in f
                         if line.split()[-1:] == ["sched_getaffinity"]]
        self.assertLessEqual(sum(calls), 2, "sched_getaffinity calls: %s" % calls)


if __name__ == "__main__":
    unittest.main()
