# SPDX-License-Identifier: Apache-2.0
"""heapref's threads change nothing: the profile is the same, byte for byte, with one
thread or several.

Three stages use more than one thread when the process may run on two processors:
reading the second half of a dump's records (above 64 MiB of records, dump_reader.c),
pass 1's walk of heap objects (pass1_threads.c: --threads N, by default one per
processor) and pass 2's marking (a drain of more than 8192 objects, mark.c).

Pass1Threads: every scenario program, analysed with --threads 1, 2 and 3, with
HEAPREF_TEST_PASS1_CHUNK=1, which sends every queued object through the workers one by
one (a small heap is otherwise mostly walked by one thread, its queue being short), and
with HEAPREF_TEST_PASS1_STREAM=AFTER,CHUNK, which starts a stream (a worker walking part
of a narrow walk ahead) after AFTER objects walked alone, in chunks of CHUNK objects:
the profiles (plain, --by-type, --examples), `retained` and `goroutines` must be
identical, and --stats must show that the workers walked objects (streams: that some
were walked ahead, in the list program's list, ring and tree at least).

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
import dumpfmt  # noqa: E402
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

    def run_stats(self, binary, dump, one_cpu):
        cmd = ([shutil.which("taskset"), "-c", "0"] if one_cpu else []) + [
            HEAPREF, "analyze", "--stats", "-o", os.path.join(self.tmp, "stats.pb.gz"),
            binary, dump]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        err = p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, 0, err)
        lines = [l for l in err.splitlines() if l.startswith("heapref: reading: ")]
        self.assertEqual(len(lines), 1, err)
        return lines[0]

    def test_reading_stats(self):
        """--stats says how the records were read: on two processors by two threads,
        the second from an object record's start (found independently by dumpfmt), and a
        steal, if the second thread took one, from another one before it; on one
        processor by one thread."""
        binary, dump, _ = progs.prepare("gen", WORK, args=GEN_ARGS, go=GO, env=ENV)
        self.assertEqual(self.run_stats(binary, dump, True), "heapref: reading: one thread")
        line = self.run_stats(binary, dump, False)
        m = READING_RE.fullmatch(line)
        self.assertIsNotNone(m, line)
        with open(dump, "rb") as f:
            _, recs = dumpfmt.split(f.read())
        starts, at = set(), dumpfmt.HEADER_LEN
        for r in recs:
            if r.kind == dumpfmt.OBJECT:
                starts.add(at)
            at += len(r.raw)
        second = int(m.group(1))
        self.assertTrue(second in starts, "byte %d: no object record starts there" % second)
        self.assertIsNone(m.group(2), "gen's dump: the second thread's start is a record's, "
                          "so it is kept")
        if m.group(3):
            steal = int(m.group(3))
            self.assertTrue(steal in starts, "byte %d: no object record starts there" % steal)
            self.assertLess(steal, second)


READING_RE = re.compile(r"heapref: reading: two threads, the second from byte (\d+)"
                        r"( \(dropped: no record starts there\))?"
                        r"(?:; the second took on the first's rest from byte (\d+))?")

# (--threads, HEAPREF_TEST_PASS1_CHUNK, HEAPREF_TEST_PASS1_STREAM): the first is the
# reference
THREAD_RUNS = [(1, None, None), (2, None, None), (2, "1", None), (3, "1", None),
               (2, "5", None), (2, None, "1,1"), (3, None, "1,3"), (2, None, "16,64")]
WORKERS_RE = re.compile(r"heapref: threads of pass 1: (\d+); heap objects walked by workers: "
                        r"(\d+) of (\d+) queued, (\d+) of them ahead of a narrow walk "
                        r"\((\d+) times, (\d+) stopped by a claim\); (\d+) long runs queued "
                        r"in (\d+) pieces")
# pieces/main.go's long runs (walk.c's PIECE_*): elements of 8 bytes in objects of 64 KiB
# or more are queued 1024 to a piece
PIECE_ELEMENTS = 1024
REACHED_RE = re.compile(r"heapref: reachable: (\d+) objects")


@unittest.skipIf(not shutil.which(GO), "no go command")
class Pass1Threads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="heapref-pass1-threads-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_heapref(self, threads, chunk, stream, args):
        """heapref with --threads and the chunk and stream knobs; returns (stdout,
        stderr)."""
        env = dict(os.environ)
        for name, value in (("HEAPREF_TEST_PASS1_CHUNK", chunk),
                            ("HEAPREF_TEST_PASS1_STREAM", stream)):
            env.pop(name, None)
            if value:
                env[name] = value
        cmd = [HEAPREF, args[0], "--threads", str(threads)] + list(args[1:])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, "%s: %s" % (cmd, p.stderr.decode(errors="replace")))
        return p.stdout, p.stderr.decode(errors="replace")

    def outputs(self, binary, dump, threads, chunk, stream):
        """What each command writes: profiles decompressed, reports as printed."""
        got = {}
        for label, opts in (("plain", []), ("by-type", ["--by-type"]),
                            ("examples", ["--examples", "2"])):
            out = os.path.join(self.tmp, "%s-%d-%s-%s.pb.gz" % (label, threads, chunk, stream))
            _, err = self.run_heapref(threads, chunk, stream, ["analyze", "--stats", "-o",
                                                               out] + opts + [binary, dump])
            with gzip.open(out, "rb") as f:
                got[label] = f.read()
            if label == "plain":
                m = WORKERS_RE.search(err)
                self.assertIsNotNone(m, err)
                got["workers"] = tuple(int(m.group(k)) for k in range(1, 7))
                # the same with any threads: part of what is compared with one thread's
                got["pieces"] = (int(m.group(7)), int(m.group(8)))
                got["reached"] = int(REACHED_RE.search(err).group(1))
        for cmd in ("retained", "goroutines"):
            got[cmd], _ = self.run_heapref(threads, chunk, stream, [cmd, "--format", "tsv",
                                                                     binary, dump])
        return got

    def test_every_program_same_outputs(self):
        for name in progs.PROGRAMS:
            binary, dump, facts = progs.prepare(name, WORK, go=GO, env=ENV)
            big = sum(1 for size in reach.load(dump).sizes if size > 64 << 10)
            ref = None
            for threads, chunk, stream in THREAD_RUNS:
                with self.subTest(program=name, threads=threads, chunk=chunk, stream=stream):
                    got = self.outputs(binary, dump, threads, chunk, stream)
                    used, by_workers, queued, ahead, streams, stops = got.pop("workers")
                    self.assertEqual(used, threads)
                    # objects without pointers are reached, not queued: their walk
                    # would do nothing (hr_dump_span_pointer_free())
                    self.assertLess(queued, got["reached"], name)
                    self.assertGreater(queued, 0, name)
                    self.assertLessEqual(ahead, by_workers)
                    self.assertLessEqual(stops, streams)
                    runs, pieces = got["pieces"]
                    self.assertGreaterEqual(pieces, 2 * runs, name)
                    if name == "pieces":
                        # main.bigList's run, and main.tail's from its view on: no
                        # other object of this small heap holds a long run
                        want = [facts["big_n"], facts["other_n"] - facts["cut"]]
                        self.assertEqual((runs, pieces), (2, sum(-(-n // PIECE_ELEMENTS)
                                                                 for n in want)), name)
                    if threads == 1 or not stream:
                        self.assertEqual((ahead, streams), (0, 0))
                    if threads == 1:
                        self.assertEqual(by_workers, 0)
                    if stream and name == "list":
                        # the list, the ring and the tree: a narrow walk of 2 or more
                        # how many depends on when the walk turns narrow: on timing
                        self.assertGreater(streams, 0, "%s: no stream" % name)
                        self.assertGreater(ahead, 0, "%s: no object walked ahead" % name)
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
                                         "chunk %s, stream %s differs from one thread's" % (
                                             name, what, threads, chunk, stream))


@unittest.skipIf(not shutil.which(GO), "no go command")
class StreamStops(unittest.TestCase):
    """The merge program's lists run into each other and claim each other's nodes out of
    turn. Walked in two parts (a stream started as soon as the walk is narrow), the
    worker's part claims nodes the other part reached first, which stops the stream:
    the profile must still be one thread's, its totals what reach.py computes. Whether
    a given run stops a stream depends on how far ahead the worker is (about one run in
    fifteen does not): runs are repeated until one has."""

    RUNS = 10

    def run_heapref(self, tmp, threads, stream, run):
        out = os.path.join(tmp, "%d-%s-%d.pb.gz" % (threads, stream, run))
        env = dict(os.environ)
        env.pop("HEAPREF_TEST_PASS1_CHUNK", None)
        env.pop("HEAPREF_TEST_PASS1_STREAM", None)
        if stream:
            env["HEAPREF_TEST_PASS1_STREAM"] = stream
        cmd = [HEAPREF, "analyze", "--stats", "--threads", str(threads), "-o", out,
               self.binary, self.dump]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=TIMEOUT)
        err = p.stderr.decode(errors="replace")
        self.assertEqual(p.returncode, 0, err)
        m = WORKERS_RE.search(err)
        self.assertIsNotNone(m, err)
        with gzip.open(out, "rb") as f:
            return f.read(), out, int(m.group(5)), int(m.group(6))

    def test_stopped_streams_same_profile(self):
        self.binary, self.dump, _ = progs.prepare("merge", WORK, go=GO, env=ENV)
        with tempfile.TemporaryDirectory(prefix="heapref-streams-") as tmp:
            ref, path, _, _ = self.run_heapref(tmp, 1, None, 0)
            r = reach.reachable(reach.load(self.dump))
            self.assertEqual(tuple(profile.totals(profile.read(path))), (r.objects, r.bytes))
            stops = 0
            for run in range(self.RUNS):
                got, _, streams, stopped = self.run_heapref(tmp, 2, "1,1", run)
                self.assertEqual(got, ref, "run %d: %d streams, %d stopped: another "
                                 "profile than one thread's" % (run, streams, stopped))
                self.assertGreater(streams, 0)
                stops += stopped
                if stops:
                    break
            self.assertGreater(stops, 0, "no stream stopped by a claim in %d runs" % self.RUNS)


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
