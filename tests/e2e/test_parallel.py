"""heapref's threads change nothing: the profile is the same, byte for byte, with one
thread or several.

Three stages use more than one thread when the process may run on two processors:
reading the second half of a dump's records (above 64 MiB of records, dump_reader.c),
pass 1's walk of heap objects (pass1_threads.c: --threads N, by default one per
processor) and pass 2's marking (a drain of more than 8192 objects, mark.c).

Pass1Threads: every scenario program, analysed with --threads 1, 2 and 3, and with
HEAPREF_TEST_PASS1_CHUNK=1, which sends every queued object through the workers one by
one (a small heap is otherwise mostly walked by one thread, its queue being short):
the profiles (plain, --by-type, --examples), `retained` and `goroutines` must be
identical, and --stats must show that the workers walked objects.

SecondThreads: the gen program writes a dump big enough for all three stages (a
million objects, about 120 MB); analysed with a binary without DWARF, every object is
left to pass 2, whose first drain takes in most of the heap. Each analysis runs as
usual, with --threads 3, and under `taskset -c 0` (one processor: no second thread);
the decompressed profiles must be identical, run after run, and their totals must be
what reach.py computes.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (cache of built programs),
HEAPREF_GO / HEAPREF_GOTOOLCHAIN (as test_analyze.py).
"""

import gzip
import os
import re
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

    def analyze(self, binary, dump, one_cpu, name, extra=()):
        """Runs analyze (--force: the stripped binary has no symbols to pair the dump
        with); returns the decompressed profile and its path."""
        out = os.path.join(self.tmp, name + ".pb.gz")
        cmd = ([shutil.which("taskset"), "-c", "0"] if one_cpu else []) + [
            HEAPREF, "analyze", "--force", "-o", out] + list(extra) + [binary, dump]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        with gzip.open(out, "rb") as f:
            return f.read(), out

    def check_same(self, label, **build):
        binary, dump, _ = progs.prepare("gen", WORK, args=GEN_ARGS, go=GO, env=ENV, **build)
        self.assertGreater(os.path.getsize(dump), 64 << 20, "too small to be read in halves")
        one, _ = self.analyze(binary, dump, True, label + "-one")
        for run in range(3):
            extra = ["--threads", "3"] if run == 2 else []
            two, path = self.analyze(binary, dump, False, "%s-two-%d" % (label, run), extra)
            self.assertEqual(two, one, "%s: two processors %s, run %d: another profile than "
                             "one processor's" % (label, extra, run))
        r = reach.reachable(reach.load(dump))
        self.assertEqual(tuple(profile.totals(profile.read(path))), (r.objects, r.bytes))

    def test_typed_walk_same_profile(self):
        """With DWARF: the dump read in halves, pass 1 on the processors' threads."""
        self.check_same("dwarf")

    def test_marking_same_profile(self):
        """Without DWARF or symbols: everything is pass 2's marking, shared by two
        threads."""
        self.check_same("stripped", ldflags="-s -w")


# (--threads, HEAPREF_TEST_PASS1_CHUNK): the first is the reference
THREAD_RUNS = [(1, None), (2, None), (2, "1"), (3, "1"), (2, "5")]
WORKERS_RE = re.compile(r"heapref: threads of pass 1: (\d+); heap objects walked by workers: "
                        r"(\d+) of (\d+) queued")
REACHED_RE = re.compile(r"heapref: reachable: (\d+) objects")


@unittest.skipIf(not shutil.which(GO), "no go command")
class Pass1Threads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="heapref-pass1-threads-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_heapref(self, threads, chunk, args):
        """heapref with --threads and the chunk knob; returns (stdout, stderr)."""
        env = dict(os.environ)
        env.pop("HEAPREF_TEST_PASS1_CHUNK", None)
        if chunk:
            env["HEAPREF_TEST_PASS1_CHUNK"] = chunk
        cmd = [HEAPREF, args[0], "--threads", str(threads)] + list(args[1:])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, "%s: %s" % (cmd, p.stderr.decode(errors="replace")))
        return p.stdout, p.stderr.decode(errors="replace")

    def outputs(self, binary, dump, threads, chunk):
        """What each command writes: profiles decompressed, reports as printed."""
        got = {}
        for label, opts in (("plain", []), ("by-type", ["--by-type"]),
                            ("examples", ["--examples", "2"])):
            out = os.path.join(self.tmp, "%s-%d-%s.pb.gz" % (label, threads, chunk))
            _, err = self.run_heapref(threads, chunk, ["analyze", "--stats", "-o", out] +
                                      opts + [binary, dump])
            with gzip.open(out, "rb") as f:
                got[label] = f.read()
            if label == "plain":
                m = WORKERS_RE.search(err)
                self.assertIsNotNone(m, err)
                got["workers"] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
                got["reached"] = int(REACHED_RE.search(err).group(1))
        for cmd in ("retained", "goroutines"):
            got[cmd], _ = self.run_heapref(threads, chunk, [cmd, "--format", "tsv", binary,
                                                             dump])
        return got

    def test_every_program_same_outputs(self):
        for name in progs.PROGRAMS:
            binary, dump, _ = progs.prepare(name, WORK, go=GO, env=ENV)
            big = sum(1 for size in reach.load(dump).sizes if size > 64 << 10)
            ref = None
            for threads, chunk in THREAD_RUNS:
                with self.subTest(program=name, threads=threads, chunk=chunk):
                    got = self.outputs(binary, dump, threads, chunk)
                    used, by_workers, queued = got.pop("workers")
                    self.assertEqual(used, threads)
                    # objects without pointers are reached, not queued: their walk
                    # would do nothing (hr_dump_span_pointer_free())
                    self.assertLess(queued, got["reached"], name)
                    self.assertGreater(queued, 0, name)
                    if threads == 1:
                        self.assertEqual(by_workers, 0)
                    if chunk == "1":
                        # every queued object went through the workers, save those over
                        # 64 KiB, which the thread applying their work walks in turn
                        self.assertGreaterEqual(by_workers, queued - big, "%s: %d of %d "
                                                "objects walked by workers" % (
                                                    name, by_workers, queued))
                    if ref is None:
                        ref = got
                        continue
                    for what in ref:
                        self.assertEqual(got[what], ref[what], "%s: %s with --threads %d, "
                                         "chunk %s differs from one thread's" % (
                                             name, what, threads, chunk))


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
