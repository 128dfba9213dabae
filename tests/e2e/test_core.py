# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the core reader: a core of a process gives the profile its dump gives.

    heapref analyze --pid PID [--save-core FILE] [BINARY]
    heapref analyze BINARY CORE

The oracle is the runtime itself. Each scenario program writes its heap dump and then
holds, changing nothing (testprogs/internal/dump: hold), while the test takes a core of
the same process state with heapref's own --pid --save-core (and, once, with gdb's
gcore). The profile of the core must equal the profile of the dump: the same chains
with the same objects and bytes, but for what the runtime's own goroutines allocate
between the dump and the core under runtime roots (RUNTIME_SLACK_*). Nothing here compares heapref
with itself on one input: the dump is written by runtime.WriteHeapDump from the
runtime's own view of the heap, the core is read by heapref from the runtime's raw
structures (spans, bitmaps, allgs, pclntab), two independent routes to one answer.

testprogs/deadslot leaves a dead stack slot holding the address of memory a long list
has since reused: the list must be main.head's whole in both profiles, nothing charged
through the dead slot.

Also: a process is never left stopped (heapref killed while it holds the process);
a core without its binary, a truncated core and a core of another binary are refused
with one line.

Which Go builds the programs: the matrix entry HEAPREF_MATRIX names (ctest runs this
module once per entry, e2e_core_<entry>); without it the machine's Go. arm64 programs
run under qemu-user, whose process is not the program's: there the core is the one
qemu writes of the program when it dies of SIGABRT (GOTRACEBACK=crash) once held.
Cores are deleted as soon as their test has read them.
"""

import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402
import progs  # noqa: E402
import reach  # noqa: E402
import toolchains  # noqa: E402

ENTRY = toolchains.selected()
BUILDS = (("default", None), ("noopt", "all=-N -l"))
# Between the dump and the core the program holds still, but the runtime does not: its
# own goroutines may allocate or let go (seen: a P's timer heap, one 16-byte slice under
# runtime.allp; in testprogs/server, net/http's timers firing, 9 objects), and which M runs which goroutine changes which runtime root reaches an
# M first (runtime.allm or runtime.allgptr). So chains under runtime roots may differ,
# and the totals by at most this much; every other chain must be equal to the byte.
RUNTIME_SLACK_OBJECTS = 32
RUNTIME_SLACK_BYTES = 32768


def _differences(a, b, limit=12):
    """The chains whose values differ between profiles a and b, as text lines."""
    out = []
    for chain in sorted(set(a) | set(b)):
        va, vb = a.get(chain, [0, 0]), b.get(chain, [0, 0])
        if list(va) != list(vb):
            out.append("  %s: dump %s, core %s" % (" > ".join(chain), va, vb))
    return out[:limit] + (["  ... %d more" % (len(out) - limit)] if len(out) > limit else [])


def _program(test, name, prefix):
    """(work dir, binary): name built into a fresh directory, removed after the test;
    skips under an emulator, whose process --pid would read instead of the program's."""
    if toolchains.emulator_for(ENTRY.goarch):
        test.skipTest("emulated")
    work = tempfile.mkdtemp(prefix=prefix)
    test.addCleanup(shutil.rmtree, work, True)
    return work, progs.build(name, work, env=ENTRY.env)


class CoreMatchesDump(unittest.TestCase):
    """Every scenario, both builds: analyze of the core == analyze of the dump."""

    @classmethod
    def setUpClass(cls):
        toolchains.check(ENTRY, progs.go_version(env=ENTRY.env))
        cls.emulated = bool(toolchains.emulator_for(ENTRY.goarch))
        cls.work = tempfile.mkdtemp(prefix="heapref-core-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def held_profiles(self, name, gcflags, extra_env=None):
        """Builds and runs name holding; returns (dump profile, core profile, pid profile).

        A program under an emulator (arm64 here) cannot be read with --pid (the process
        is the emulator's): the emulator writes the program's own core instead, when
        the program is made to crash once held, and the pid profile is the core's."""
        d = os.path.join(self.work, "%s-%s-%s" % (name, gcflags is not None, bool(extra_env)))
        binary = progs.build(name, d, env=dict(ENTRY.env or {}, **(extra_env or {})),
                             gcflags=gcflags)
        dump, core = os.path.join(d, name + ".dump"), os.path.join(d, name + ".core")
        out = {k: os.path.join(d, k + ".pb.gz") for k in ("dump", "core", "pid")}
        if self.emulated:
            core = progs.emulated_core(binary, dump, d)
            out["pid"] = out["core"]
        else:
            self.take_core(binary, dump, core, out["pid"])
        try:
            st, _, err = progs.heapref("analyze", binary, core, "-o", out["core"])
            self.assertEqual(st, 0, err)
        finally:
            os.remove(core)
        st, _, err = progs.heapref("analyze", binary, dump, "-o", out["dump"])
        self.assertEqual(st, 0, err)
        if name == "deadslot":
            self.check_dead_slot(dump)
        return tuple(profile.load(out[k]) for k in ("dump", "core", "pid"))

    def check_dead_slot(self, dump):
        """The scenario holds: main.worker's frame keeps, in a slot its stack map says is
        dead, an address now inside a live heap object (the list reused the memory)."""
        d = reach.load(dump)
        word = d.word_reader()
        frames = [f for f in d.frames if f.name in ("main.worker", b"main.worker")]
        self.assertTrue(frames, "no main.worker frame in the dump")
        stale = []
        for f in frames:
            c, live = d.contents(f), set(f.offsets)
            stale += [off for off in range(0, len(c) - d.params.ptr_size + 1, d.params.ptr_size)
                      if off not in live and d.find(word(c, off)[0]) is not None]
        self.assertTrue(stale, "main.worker's frame holds no dead slot into the heap: the "
                        "scenario did not happen")

    def take_core(self, binary, dump, core, out):
        """Runs binary holding after its dump; heapref --pid --save-core takes its core."""

        def while_held(pid):
            return progs.heapref("analyze", "--pid", pid, "--save-core", core, binary,
                                 "-o", out)

        _, (st, _, err) = progs.run_held(binary, dump, while_held)
        self.assertEqual(st, 0, err)
        self.assertRegex(err, r"process \d+ stopped for \d+\.\d+ s")

    def test_cache_pie(self):
        """A position-independent binary: the core reader finds its load bias (AT_ENTRY)."""
        if self.emulated:
            self.skipTest("a PIE linux/arm64 program needs the arm64 dynamic loader, not here")
        self.check("cache", None, {"GOFLAGS": "-buildmode=pie"})

    def check(self, name, gcflags, extra_env=None):
        from_dump, from_core, from_pid = self.held_profiles(name, gcflags, extra_env)
        self.assertEqual(from_core, from_pid, "the saved core and --pid differ")
        report = "\n".join(_differences(from_dump, from_core))
        differing = [c for c in set(from_dump) | set(from_core)
                     if list(from_dump.get(c, [0, 0])) != list(from_core.get(c, [0, 0]))]
        self.assertEqual([c for c in differing if not c[0].startswith("runtime.")], [],
                         "chains of the program's roots differ:\n" + report)
        (co, cb), (do, db) = profile.totals(from_core), profile.totals(from_dump)
        self.assertLessEqual(abs(co - do), RUNTIME_SLACK_OBJECTS, report)
        self.assertLessEqual(abs(cb - db), RUNTIME_SLACK_BYTES, report)
        self.assertGreater(profile.totals(from_core)[0], 0)
        if name == "deadslot": # nothing lost to, nor charged through, the dead slot
            for p in (from_dump, from_core):
                self.assertEqual(profile.cum(p, ("main.head",)), (100000, 100000 * 48))
                self.assertEqual(profile.cum(p, ("main.worker",))[0], 0)


def _add_scenario_tests():
    for name in progs.PROGRAMS:
        for build, gcflags in BUILDS:
            def test(self, name=name, gcflags=gcflags):
                self.check(name, gcflags)
            test.__name__ = "test_%s_%s" % (name, build)
            setattr(CoreMatchesDump, test.__name__, test)


_add_scenario_tests()


class ProcessNeverLeftStopped(unittest.TestCase):
    """heapref killed while it holds the process: the kernel lets the process go."""

    def test_killed_while_stopped(self):
        work, binary = _program(self, "cache", "heapref-stop-")

        def while_held(pid):
            env = dict(os.environ, HEAPREF_TEST_HOLD_STOPPED="60")
            h = subprocess.Popen([progs.HEAPREF, "analyze", "--pid", str(pid), binary,
                                  "-o", os.path.join(work, "p.pb.gz")], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            stopped = progs.wait_all_stopped(pid, 60)
            h.send_signal(signal.SIGKILL)
            h.wait()
            return stopped, _wait_for_state(pid, "S", 10)

        _, (stopped, running) = progs.run_held(binary, os.path.join(work, "cache.dump"),
                                               while_held)
        self.assertTrue(stopped, "heapref never stopped the process")
        self.assertTrue(running, "the process stayed stopped after heapref was killed")


class OtherCommandsOnAProcess(unittest.TestCase):
    """why, retained and goroutines take --pid as analyze does, and info and object a core."""

    def test_commands(self):
        work, binary = _program(self, "cache", "heapref-pidcmds-")
        core = os.path.join(work, "cache.core")

        def while_held(pid):
            return {cmd: progs.heapref(*args) for cmd, args in (
                ("retained", ("retained", "--pid", pid, binary)),
                ("goroutines", ("goroutines", "--pid", pid)),
                ("why", ("why", "--pid", pid, "--save-core", core, binary, "main.Entry")))}

        _, got = progs.run_held(binary, os.path.join(work, "cache.dump"), while_held)
        for cmd, (st, out, err) in got.items():
            self.assertEqual(st, 0, "%s: %s" % (cmd, err))
            self.assertRegex(err, r"process \d+ stopped for", cmd)
        self.assertIn("main.cache", got["retained"][1])
        self.assertIn("dump.hold", got["goroutines"][1])  # the main goroutine, held
        self.assertIn("main.cache", got["why"][1])
        st, out, err = progs.heapref("info", binary, core)
        self.assertEqual(st, 0, err)
        self.assertIn("format:        core file", out)
        m = re.search(r"^\s+(0x[0-9a-f]+)", got["why"][1], re.M)
        if m:
            st, out, err = progs.heapref("object", binary, core, m.group(1))
            self.assertEqual(st, 0, err)


class Provenance(unittest.TestCase):
    """A core and a process are named as what they are, with the Go release that ran
    (the binary's, from the program's own runtime.Version()), never a dump format: the
    summary said "go1.0 amd64 dump" and info "go1.0 (the format's)", a GOEXPERIMENT and
    0 CPUs for every core and --pid run."""

    def test_core_and_process(self):
        work, binary = _program(self, "cache", "heapref-prov-")
        core = os.path.join(work, "cache.core")

        def while_held(pid):
            cpus = len(os.sched_getaffinity(pid))
            return cpus, progs.heapref("analyze", "--pid", pid, "--save-core", core, binary,
                                       "-o", os.path.join(work, "p.pb.gz"))

        facts, (cpus, (st, _, err)) = progs.run_held(binary, os.path.join(work, "c.dump"),
                                                     while_held)
        self.assertEqual(st, 0, err)
        arch = facts["goarch"]
        version = facts["go_version"]
        self.assertIn("heapref: %s %s process: " % (version, arch), err)
        st, _, err = progs.heapref("analyze", binary, core, "-o", os.path.join(work, "c.pb.gz"))
        self.assertEqual(st, 0, err)
        self.assertIn("heapref: %s %s core: " % (version, arch), err)
        self.assertNotIn("go1.0", err)
        st, out, err = progs.heapref("info", binary, core)
        self.assertEqual(st, 0, err)
        self.assertIn("go version:    %s\n" % version, out)
        self.assertNotIn("GOEXPERIMENT", out)
        self.assertNotIn("the format's", out)
        self.assertNotIn("by the dump's type records", out)
        # the processors the process could run on, as its runtime counts them (a note of
        # heapref's core: runtime.ncpu is not always in the binary)
        self.assertIn("(8-byte pointers, little-endian), %d CPUs\n" % cpus, out)


PIECE = 3 * 4096  # not a multiple of the runtime's 8 KiB pages: spans are cut


def _split_segments(core, out):
    """A copy of core whose memory segments of the heap's size are cut into pieces of
    PIECE bytes, laid out in the file in the reverse order: the same memory, in pieces of
    the file that do not follow one another, as a core of mappings the kernel kept apart
    holds it. Returns how many pieces there are."""
    with open(core, "rb") as f:
        data = bytearray(f.read())
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    headers, pieces = [], 0
    for i in range(phnum):
        ph = list(struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize))
        ptype, flags, offset, vaddr, _, filesz, memsz, align = ph
        if ptype != 1 or filesz != memsz or filesz < 64 * PIECE:
            headers.append(ph)
            continue
        cuts = list(range(0, filesz, PIECE))
        placed = {}
        for at in reversed(cuts):   # file order reversed
            n = min(PIECE, filesz - at)
            placed[at] = len(data)
            data.extend(data[offset + at:offset + at + n])
            data.extend(b"\0" * ((-len(data)) % 4096))
        for at in cuts:             # program headers in address order
            n = min(PIECE, filesz - at)
            headers.append([1, flags, placed[at], vaddr + at, vaddr + at, n, n, align])
        pieces += len(cuts)
    table = len(data)
    for ph in headers:
        data.extend(struct.pack("<IIQQQQQQ", *ph))
    struct.pack_into("<Q", data, 32, table)
    struct.pack_into("<H", data, 56, len(headers))
    with open(out, "wb") as f:
        f.write(data)
    return pieces


class SegmentsInPieces(unittest.TestCase):
    """A span whose memory the core holds in two pieces of the file is copied into the
    model (memory it owns), not refused: the profile of the core cut into pieces is the
    profile of the core."""

    def test_same_profile(self):
        work, binary = _program(self, "list", "heapref-pieces-")
        core = os.path.join(work, "list.core")

        def while_held(pid):
            return progs.heapref("analyze", "--pid", pid, "--save-core", core, binary,
                                 "-o", os.path.join(work, "p.pb.gz"))

        _, (st, _, err) = progs.run_held(binary, os.path.join(work, "l.dump"), while_held)
        self.assertEqual(st, 0, err)
        pieces = os.path.join(work, "pieces.core")
        self.assertGreater(_split_segments(core, pieces), 0)
        profiles = []
        for c in (core, pieces):
            out = os.path.join(work, os.path.basename(c) + ".pb.gz")
            st, _, err = progs.heapref("analyze", binary, c, "-o", out)
            self.assertEqual(st, 0, err)
            profiles.append(profile.load(out))
        self.assertEqual(profiles[1], profiles[0])


class AllocsFromACore(unittest.TestCase):
    """The memory profile read from a core (runtime.mbuckets, the profile specials) is the
    one the dump of the same state holds: `allocs` and `analyze --by-alloc` agree."""

    def test_allocs_and_by_alloc(self):
        work, binary = _program(self, "allocs", "heapref-allocs-core-")
        dump, core = os.path.join(work, "allocs.dump"), os.path.join(work, "allocs.core")

        def while_held(pid):
            return progs.heapref("analyze", "--pid", pid, "--save-core", core, binary,
                                 "--by-alloc", "-o", os.path.join(work, "core-by-alloc.pb.gz"))

        _, (st, _, err) = progs.run_held(binary, dump, while_held)
        self.assertEqual(st, 0, err)
        sites = {}
        for name, heap in (("dump", dump), ("core", core)):
            out = os.path.join(work, name + "-allocs.pb.gz")
            st, _, err = progs.heapref("allocs", binary, heap, "-o", out)
            self.assertEqual(st, 0, err)
            # allocation stacks with what is in use there; the runtime's allocations
            # after the dump make buckets whose counts are not published yet (zeros)
            sites[name] = {c: v for c, v in profile.load(out).items() if v != [0, 0]}
        self.assertTrue(any("main.allocBuf" in c for c in sites["dump"]))
        # names of inlined frames: from the PCs of a core, from file and line in a dump
        self.assertTrue(any(c[-2:] == ("main.newPair", "main.newConn") for c in sites["dump"]))
        self.assertEqual(sites["core"], sites["dump"], "the memory profiles differ")
        st, _, err = progs.heapref("analyze", "--by-alloc", binary, dump, "-o",
                                   os.path.join(work, "dump-by-alloc.pb.gz"))
        self.assertEqual(st, 0, err)
        by_dump = profile.load(os.path.join(work, "dump-by-alloc.pb.gz"))
        by_core = profile.load(os.path.join(work, "core-by-alloc.pb.gz"))
        for p in (by_dump, by_core):
            self.assertTrue(any("@ main.allocBuf" in c for c in p), "no allocation frames")
        self.assertEqual({c: v for c, v in by_core.items() if not c[0].startswith("runtime.")},
                         {c: v for c, v in by_dump.items() if not c[0].startswith("runtime.")})


class WaitTimes(unittest.TestCase):
    """A core heapref takes notes the runtime's clock: how long goroutines have waited is
    shown, within what the test's own clock allows."""

    def test_leaked_workers_waited(self):
        work, binary = _program(self, "leak", "heapref-wait-")
        pb = os.path.join(work, "p.pb.gz")
        started = time.monotonic()

        def while_held(pid):
            time.sleep(2)
            got = progs.heapref("goroutines", "--pid", pid, "--format", "tsv", binary)
            elapsed = time.monotonic() - started
            return got, elapsed, progs.heapref("analyze", "--pid", pid, "-o", pb, binary)

        facts, ((st, out, err), elapsed, (st2, _, err2)) = progs.run_held(
            binary, os.path.join(work, "leak.dump"), while_held)
        self.assertEqual(st, 0, err)
        self.assertEqual(st2, 0, err2)
        lines = out.splitlines()
        header = lines[0].split("\t")
        rows = [dict(zip(header, l.split("\t"))) for l in lines[1:]]
        workers = [r for r in rows if r["created_by"] == facts["creator"]]
        self.assertEqual(len(workers), 1, out)
        # blocked since before the program's GCs, which came after it started
        self.assertGreaterEqual(int(workers[0]["waited_s"]), 2)
        self.assertLessEqual(int(workers[0]["waited_s"]), elapsed + 1)
        tags = subprocess.run([progs.GO, "tool", "pprof", "-tags", pb], capture_output=True,
                              text=True, check=True).stdout
        self.assertIn("wait_time", tags)


class BadCores(unittest.TestCase):
    """A core refused with one line and status 1 (2 without its binary), never a crash."""

    @classmethod
    def setUpClass(cls):
        if toolchains.emulator_for(ENTRY.goarch):
            raise unittest.SkipTest("emulated")
        cls.work = tempfile.mkdtemp(prefix="heapref-badcore-")
        cls.binary = progs.build("cache", cls.work, env=ENTRY.env)
        cls.other = progs.build("list", cls.work, env=ENTRY.env)
        cls.core = os.path.join(cls.work, "cache.core")

        def while_held(pid):
            return progs.heapref("analyze", "--pid", pid, "--save-core", cls.core, cls.binary,
                                 "-o", os.path.join(cls.work, "p.pb.gz"))

        progs.run_held(cls.binary, os.path.join(cls.work, "cache.dump"), while_held)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def refused(self, args, status, *words):
        st, out, err = progs.heapref(*args)
        self.assertEqual(st, status, err)
        self.assertEqual(out, "")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("heapref: "), err)
        for w in words:
            self.assertIn(w, lines[0])
        return lines[0]

    def test_core_without_binary(self):
        self.refused(("info", self.core), 2, self.core, "give the binary")

    def test_core_of_another_binary(self):
        self.refused(("analyze", self.other, self.core, "-o", os.path.join(self.work, "x.pb.gz")),
                     4, self.core, "not a core of", "--force")
        self.assertFalse(os.path.exists(os.path.join(self.work, "x.pb.gz")))

    def test_truncated(self):
        size = os.path.getsize(self.core)
        for keep in (20, 64 + 56 * 2, size // 2, size - 1):
            cut = os.path.join(self.work, "cut.core")
            with open(self.core, "rb") as f, open(cut, "wb") as g:
                g.write(f.read(keep))
            line = self.refused(("analyze", self.binary, cut, "-o",
                                 os.path.join(self.work, "x.pb.gz")), 1, cut)
            self.assertRegex(line, r"byte \d+|cannot read", line)

    def test_no_such_process(self):
        self.refused(("analyze", "--pid", "999999999", self.binary), 1, "999999999")

    def test_core_and_binary_swapped(self):
        self.refused(("analyze", self.core, self.binary), 2, "wrong way round", "core file")

    def test_save_core_needs_pid(self):
        self.refused(("analyze", "--save-core", "x", self.binary, self.core), 2, "--pid")


def _state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wait_for_state(pid, state, seconds):
    """Whether process pid reaches the /proc state letter within seconds."""
    end = time.time() + seconds
    while time.time() < end:
        if _state(pid) == state:
            return True
        time.sleep(0.02)
    return False


if __name__ == "__main__":
    unittest.main()
