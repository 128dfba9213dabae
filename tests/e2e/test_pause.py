#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Low-pause live snapshots: `heapref analyze --pid` copies while the process runs.

heapref tracks the process's writes (a userfaultfd in asynchronous write-protect mode,
made in the process by a system call run in one of its waiting threads) and stops it
only for what it wrote since its last round. Checked here, on real Go programs:

- a quiet process gives the same profile, chain for chain, with the default and with
  --pause-mode=stop (the same state, taken both ways);
- a process rewriting its heap fast (testprogs/mutator: records relinked, a map grown
  and shrunk, a slice appended to, buffers swapped between records through one global)
  gives snapshots that each reach exactly its records and its buffers: a torn snapshot
  (a page copied before a write and another after) loses buffers or counts one twice;
- heapref killed while it tracks the writes, or while it holds the borrowed thread,
  leaves the process running, without a userfaultfd and with no page write-protected;
- a process under a seccomp filter is stopped for the whole copy, with one line saying
  why; --pause-mode takes auto or stop, and only with --pid;
- a core that lies (another dumper's: a mapping cut short, or pages it missed while the
  process ran, read as zeros) is read with a warning naming how much allocated memory
  it lacks, not silently counted unreachable; one without the heap at all is refused.
"""

import os
import re
import shutil
import struct
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutator_reach  # noqa: E402
import profile  # noqa: E402
import progs  # noqa: E402

RECORDS = 20000
TRACKED = re.compile(r"stopped for \d+\.\d+ s \(\d+ threads, [\d.]+ MB copied stopped; "
                     r"[\d.]+ MB copied while it ran, in \d+ rounds\)")


def _live_snapshots_here():
    """Why low-pause snapshots cannot be checked on this machine, or None."""
    if os.uname().machine != "x86_64":
        return "heapref borrows a thread on x86-64 only"
    release = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    if release < (6, 7):
        return "Linux %s has no PAGEMAP_SCAN" % os.uname().release
    return None


class Mutator:
    """testprogs/mutator running: started, asked for its tick gaps, ended."""

    def __init__(self, binary, *args):
        self.proc = subprocess.Popen([binary, "-records", str(RECORDS), "-buffer", "1000"]
                                     + list(args), stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready "):
            self.proc.kill()
            raise AssertionError("mutator did not start: %r" % line)
        self.pid = int(line.split()[1])

    def gap_ms(self):
        """The longest gap between its 1 ms ticks since the last ask: it answers, so it runs."""
        os.kill(self.pid, signal.SIGUSR1)
        line = self.proc.stdout.readline()
        return float(line.split()[1])

    def end(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


def _userfaultfds(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += "userfaultfd" in os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    return n


def _write_protected(pid):
    """Whether a mapping of pid is registered for userfaultfd write protection ("uw")."""
    with open("/proc/%d/smaps" % pid) as f:
        return any(line.startswith("VmFlags:") and " uw" in line for line in f)


def _stopped_threads(pid):
    return sum(s in "tT" for s in progs._thread_states(pid))


def _until(cond, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


@unittest.skipIf(_live_snapshots_here(), _live_snapshots_here())
class LowPause(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="heapref-pause-")
        cls.mutator = progs.build("mutator", cls.work)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def analyze(self, pid, *args, env=None):
        out = os.path.join(self.work, "p%d.pb.gz" % time.monotonic_ns())
        p = subprocess.run([progs.HEAPREF, "analyze", "--pid", str(pid), "-o", out] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=300, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = profile.load(out)
        os.unlink(out)
        return got, p.stderr

    def started(self, *args):
        m = Mutator(self.mutator, *args)
        self.addCleanup(m.end)
        return m

    def test_quiet_process_same_profile_both_ways(self):
        """Nothing changes: the default and a stop agree exactly on the program's own roots."""
        work = tempfile.mkdtemp(prefix="heapref-pause-quiet-")
        self.addCleanup(shutil.rmtree, work, True)
        binary = progs.build("cache", work)

        def while_held(pid):
            return self.analyze(pid), self.analyze(pid, "--pause-mode=stop")

        _, ((tracked, err_t), (stopped, err_s)) = progs.run_held(
            binary, os.path.join(work, "cache.dump"), while_held)
        self.assertRegex(err_t, TRACKED)
        self.assertNotIn("while it ran", err_s)
        self.assertNotIn("not copied while it ran", err_s)
        # The program changes nothing while held, but its runtime may: a timer,
        # the scavenger or sysmon can move an M's sudog cache or weak pointer
        # between the two snapshots (seen in CI). Only the program's own roots
        # are held still, so only they must agree exactly.
        self.assertEqual(self.own(tracked), self.own(stopped))
        self.assertGreater(profile.cum(tracked, ("main.cache",))[0], 100)

    @staticmethod
    def own(p):
        """The profile's chains rooted at the program's own globals."""
        return {c: v for c, v in p.items() if c[0].startswith("main.")}

    def test_snapshots_of_a_mutating_process_are_whole(self):
        """Each snapshot of a process rewriting its heap holds every record and buffer once."""
        m = self.started("-rate", "20")
        for mode in ("auto", "auto", "auto", "stop"):
            got, err = self.analyze(m.pid, "--pause-mode=" + mode)
            if mode == "auto":
                self.assertRegex(err, TRACKED)
            self.assertEqual(mutator_reach.reached(got), (RECORDS, RECORDS),
                             "a %s snapshot is torn:\n%s" % (mode, err))
        self.assertGreaterEqual(m.gap_ms(), 0)  # it still runs

    def killed_while(self, env_name, held, what):
        """heapref killed at a hold point: the process runs on, nothing of heapref's in it."""
        m = self.started("-rate", "0.01")
        env = dict(os.environ, **{env_name: "60"})
        h = subprocess.Popen([progs.HEAPREF, "analyze", "--pid", str(m.pid), "-o",
                              os.path.join(self.work, "killed.pb.gz")], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.assertTrue(_until(lambda: held(m.pid), 60), "heapref never reached " + what)
        finally:
            h.send_signal(signal.SIGKILL)
            h.wait()
        self.assertTrue(_until(lambda: not _write_protected(m.pid), 10),
                        "pages stayed write-protected after heapref was killed " + what)
        self.assertEqual(_userfaultfds(m.pid), 0)
        self.assertTrue(_until(lambda: _stopped_threads(m.pid) == 0, 10),
                        "a thread stayed stopped after heapref was killed " + what)
        m.gap_ms()
        self.assertLess(m.gap_ms(), 1000, "the process does not tick after heapref was killed")

    def test_killed_while_tracking(self):
        self.killed_while("HEAPREF_TEST_HOLD_TRACKING", _write_protected,
                          "while it tracked the writes")

    def test_killed_while_borrowing_a_thread(self):
        self.killed_while("HEAPREF_TEST_HOLD_BORROWED", lambda pid: _stopped_threads(pid) == 1,
                          "while it held the borrowed thread")

    def test_seccomp_filter_falls_back(self):
        m = self.started("-seccomp", "-rate", "0.01")
        got, err = self.analyze(m.pid)
        self.assertIn("process %d: not copied while it ran (it runs under a seccomp filter"
                      % m.pid, err)
        self.assertRegex(err, r"process %d stopped for \d+\.\d+ s \(\d+ threads, [\d.]+ MB "
                         r"copied\)" % m.pid)
        self.assertEqual(mutator_reach.reached(got), (RECORDS, RECORDS))


def _heap_segment(path, addr):
    """(offset in the file of its program header, p_offset, p_filesz) of the PT_LOAD
    segment holding heap address addr."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            ptype, _, off, vaddr, _, filesz, memsz = struct.unpack("<IIQQQQQ", f.read(48))
            if ptype == 1 and vaddr <= addr < vaddr + memsz:
                return phoff + i * phentsize, off, filesz
    raise AssertionError("%s: no segment holds 0x%x" % (path, addr))


def _lying_copy(core, out, how, addr):
    """A copy of core (holes kept) whose heap segment is cut to a part ("cut", as a dumper
    that stops at a size does; "none": nothing of it) or has its middle half zeroed
    ("zeroed": pages a dumper missed while the process wrote them)."""
    subprocess.run(["cp", "--sparse=always", core, out], check=True)
    if how == "copy":
        return out
    ph, off, filesz = _heap_segment(out, addr)
    with open(out, "r+b") as f:
        if how in ("cut", "none"):
            f.seek(ph + 32)  # p_filesz; p_memsz stays
            f.write(struct.pack("<Q", filesz // 2 // 4096 * 4096 if how == "cut" else 0))
        else:
            start = off + filesz // 4 // 4096 * 4096
            f.seek(start)
            f.write(bytes(filesz // 2 // 4096 * 4096))
    return out


@unittest.skipIf(_live_snapshots_here(), _live_snapshots_here())
class CoresThatLie(unittest.TestCase):
    """Cores another dumper might write: the missing memory is said, never silent."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="heapref-lies-")
        cls.binary = progs.build("mutator", cls.work)
        cls.core = os.path.join(cls.work, "mutator.core")
        m = Mutator(cls.binary, "-rate", "0")  # quiet: its 20,000 records and buffers
        try:
            st, _, err = progs.heapref("analyze", "--pid", m.pid, "--save-core", cls.core,
                                       cls.binary, "-o", os.path.join(cls.work, "whole.pb.gz"))
        finally:
            m.end()
        if st:
            raise AssertionError(err)
        cls.whole = profile.totals(profile.load(os.path.join(cls.work, "whole.pb.gz")))
        st, out, err = progs.heapref("why", cls.binary, cls.core, "main.Rec")
        cls.rec = int(re.search(r"in object (0x[0-9a-f]+)", out).group(1), 16)  # in the heap

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def read(self, how):
        core = _lying_copy(self.core, os.path.join(self.work, how + ".core"), how, self.rec)
        out = os.path.join(self.work, how + ".pb.gz")
        st, _, err = progs.heapref("analyze", "-o", out, self.binary, core)
        got = profile.totals(profile.load(out)) if st == 0 else None
        os.unlink(core)
        return st, err, got

    def test_whole_core_says_nothing(self):
        st, err, got = self.read("copy")
        self.assertEqual(st, 0, err)
        self.assertNotIn("warning", err)
        self.assertEqual(got, self.whole)

    def test_mapping_cut_short(self):
        st, err, got = self.read("cut")
        self.assertEqual(st, 0, err)
        m = re.search(r"warning: .*: (\d+) allocated objects \(([\d.]+) MB\) in memory the "
                      r"core does not hold \(a dumper that cut its mappings short\?\)", err)
        self.assertTrue(m, err)
        self.assertGreater(int(m.group(1)), 100)
        self.assertLess(got[1], self.whole[1])

    def test_pages_missed_read_as_zeros(self):
        st, err, got = self.read("zeroed")
        self.assertEqual(st, 0, err)
        m = re.search(r"warning: .*: (\d+) allocated objects \(([\d.]+) MB\) read as never "
                      r"written", err)
        self.assertTrue(m, err)
        self.assertGreater(int(m.group(1)), 64)

    def test_no_heap_at_all_is_refused(self):
        st, err, _ = self.read("none")
        self.assertEqual(st, 1, err)
        self.assertIn("the heap's memory is not in the core", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)


class PauseModeOption(unittest.TestCase):
    def refused(self, args, needle):
        p = subprocess.run([progs.HEAPREF] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(needle, p.stderr)

    def test_values(self):
        self.refused(("analyze", "--pid", "1", "--pause-mode=later"),
                     "--pause-mode takes auto or stop, not later")

    def test_needs_pid(self):
        self.refused(("analyze", "--pause-mode=stop", "a", "b"), "--pause-mode goes with --pid")


if __name__ == "__main__":
    unittest.main()
