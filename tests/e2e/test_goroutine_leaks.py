# SPDX-License-Identifier: Apache-2.0
"""Leaked goroutines by the runtime's own definition (heapref goroutines, analyze's
`leaked` label), checked against the runtime's goroutine leak profile.

testprogs/goleaks starts goroutines leaked on a channel send, receive, select, a
sync.Mutex, WaitGroup and Cond, a pair where each waits on a channel only the other
leaked one holds, one whose buffer is on its stack only and one on a nil channel, each
kind from a function of its own (main.leak*), beside goroutines that wait for good
reasons (main.start*: a pool on a global channel, sleepers, a ticker, a global mutex, a
loopback listener and connection). After its dump it writes the runtime's goroutine
leak profile where the toolchain has one (Go 1.27; Go 1.26 with
GOEXPERIMENT=goroutineleakprofile), whose debug=2 form marks each leaked goroutine
"(leaked)".

- Against the runtime (Go 1.26 with the experiment, Go 1.27): the goroutines heapref
  calls leaked, by id, are the profile's, from the dump and from a core taken after the
  profile ran (its leaked goroutines then have the runtime's "leaked" status).
- On every entry of the matrix (Go 1.19 to 1.27, arm64): every main.leak* group is
  leaked, every main.start* group is not (nor the HTTP server's and client's idle
  connections); a sync.Cond waiter before Go 1.26 is "unknown" (those runtimes keep its
  queue entry where a snapshot cannot find it). A core of each (--pid; not arm64, which
  runs emulated) gives the same verdicts.
- What a leak costs: the stack-only leak's stacks are in stack_bytes; a leaked group's
  retained_bytes are its buffers; analyze's samples carry the verdict as `leaked`, and
  -tagfocus=leaked=yes keeps what the leaked goroutines' stacks reached first.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
import toolchains  # noqa: E402

heapref = progs.heapref
COLUMNS = ["count", "bytes", "objects", "stack_bytes", "retained_bytes", "leaked", "status",
           "wait_reason", "created_by", "waited_s", "goids", "stack"]
# Toolchains with the runtime's goroutine leak profile, and how to build with it.
WITH_PROFILE = {"go1.26 (experiment)": {"GOEXPERIMENT": "goroutineleakprofile"},
                "go1.27": {"GOTOOLCHAIN": "go1.27.4"}}


def profile_leaked(path):
    """The ids of the goroutines a debug=2 leak profile marks "(leaked)"."""
    with open(path) as f:
        return {int(m.group(1)) for m in re.finditer(r"^goroutine (\d+) \[[^\]]*\(leaked\)",
                                                     f.read(), re.M)}


def rows_of(out):
    lines = out.splitlines()
    assert lines[0].split("\t") == COLUMNS, lines[0]
    return [dict(zip(COLUMNS, line.split("\t"))) for line in lines[1:]]


def goroutine_rows(*inputs):
    code, out, err = heapref("goroutines", "--format", "tsv", *inputs)
    if code != 0:
        raise AssertionError("heapref goroutines exited %d: %s" % (code, err))
    return rows_of(out)


def ids(rows, verdict):
    return {int(g) for r in rows if r["leaked"] == verdict for g in r["goids"].split()}


class AgainstRuntime(unittest.TestCase):
    """heapref's verdicts are the runtime's, goroutine by goroutine."""

    def check_dump(self, env):
        binary, dump, facts = progs.prepare("goleaks", progs.WORK, env=env)
        self.assertIn("leak_profile", facts, "the toolchain wrote no leak profile")
        want = profile_leaked(facts["leak_profile"])
        rows = goroutine_rows(binary, dump)
        self.assertEqual(ids(rows, "yes"), want)
        self.assertEqual(ids(rows, "unknown"), set())
        # each of the program's leaked kinds, 3 goroutines (the chain 2 x 3, nil 1)
        self.assertEqual(len(want), 3 * (len(facts["leaked_creators"]) - 1) + 3 + 1)
        return rows, facts

    def test_dumps(self):
        for name, env in WITH_PROFILE.items():
            with self.subTest(toolchain=name):
                self.check_dump(env)

    def test_core_after_the_profile(self):
        """A core of the process once the profile ran: its leaked goroutines have the
        runtime's "leaked" status, are read with their stacks, and are leaked here too."""
        for name, env in WITH_PROFILE.items():
            with self.subTest(toolchain=name):
                binary, dump, _ = progs.prepare("goleaks", progs.WORK, env=env)
                with tempfile.TemporaryDirectory(prefix="heapref-goleaks-") as tmp:
                    def while_held(pid):
                        return heapref("goroutines", "--format", "tsv", "--pid", pid, binary)

                    facts, (code, out, err) = progs.run_held(
                        binary, os.path.join(tmp, "again.dump"), while_held,
                        args=("-hold-after-profile",))
                    self.assertEqual(code, 0, err)
                    rows = rows_of(out)
                    want = profile_leaked(facts["leak_profile"])
                self.assertEqual(ids(rows, "yes"), want)
                self.assertEqual({r["status"] for r in rows if r["leaked"] == "yes"},
                                 {"leaked"})


class Matrix(unittest.TestCase):
    """Every Go of the matrix: the program's leaked kinds leaked, the healthy ones not."""

    def check_entry(self, entry):
        binary, dump, facts = progs.prepare("goleaks", progs.WORK, env=entry.env)
        rows = goroutine_rows(binary, dump)
        by_creator = {}
        for r in rows:
            by_creator.setdefault(r["created_by"], set()).add(r["leaked"])
        old = tuple(int(x) for x in facts["go_version"][4:].split(".")[:1]) < (26,)
        for c in facts["leaked_creators"]:
            want = "unknown" if c == "main.leakCond" and old else "yes"
            self.assertEqual(by_creator.get(c), {want}, c)
        for c in facts["healthy_creators"]:
            self.assertEqual(by_creator.get(c), {"no"}, c)
        return rows, facts

    def test_matrix(self):
        for entry in toolchains.MATRIX:
            with self.subTest(entry=entry.name):
                self.check_entry(entry)

    def test_matrix_cores(self):
        """The same verdicts from a core of the process (--pid), on every entry whose
        program runs here natively (not the emulated arm64 one): by creator, as the
        core is of another run than the dump."""
        for entry in toolchains.MATRIX:
            if entry.goarch:
                continue
            with self.subTest(entry=entry.name):
                dump_rows, _ = self.check_entry(entry)
                binary, _, _ = progs.prepare("goleaks", progs.WORK, env=entry.env)
                with tempfile.TemporaryDirectory(prefix="heapref-goleaks-") as tmp:
                    _, (code, out, err) = progs.run_held(
                        binary, os.path.join(tmp, "again.dump"),
                        lambda pid: heapref("goroutines", "--format", "tsv", "--pid", pid,
                                            binary))
                self.assertEqual(code, 0, err)

                def verdicts(rows):
                    return sorted((r["created_by"], r["leaked"], int(r["count"]))
                                  for r in rows if r["created_by"].startswith("main."))
                self.assertEqual(verdicts(rows_of(out)), verdicts(dump_rows))


class Cost(unittest.TestCase):
    """What the leaked goroutines hold, in the columns and in the profile's label."""

    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, cls.f = progs.prepare("goleaks", progs.WORK)
        cls.rows = goroutine_rows(cls.binary, cls.dump)

    def group(self, creator, func=None):
        found = [r for r in self.rows if r["created_by"] == creator and
                 (func is None or func in r["stack"].split())]
        self.assertEqual(len(found), 1, (creator, found))
        return found[0]

    def test_stack_only_leak_costs_its_stacks(self):
        """main.stackBuffer keeps a 16 KiB array on its stack: no heap of its own, but
        each of the three stacks holds it."""
        r = self.group("main.leakStack")
        self.assertEqual(r["leaked"], "yes")
        self.assertEqual(int(r["retained_bytes"]), 0)
        self.assertGreaterEqual(int(r["stack_bytes"]), 3 * 16 << 10)

    def test_retained_is_the_buffers(self):
        """Only the leaked receivers hold their 1 KiB buffers: retained_bytes is those, at
        least; a healthy group has none."""
        for creator in ("main.leakRecv", "main.leakSelect", "main.leakMutex",
                        "main.leakWaitGroup"):
            r = self.group(creator)
            self.assertGreaterEqual(int(r["retained_bytes"]), 3 * self.f["buf_size"], creator)
            self.assertLessEqual(int(r["retained_bytes"]), int(r["bytes"]), creator)
        self.assertEqual(self.group("main.startPool")["retained_bytes"], "")

    def test_leaked_groups_first_and_text_aligned(self):
        code, out, err = heapref("goroutines", self.binary, self.dump)
        self.assertEqual(code, 0, err)
        lines = out.splitlines()
        leaked = sum(int(r["count"]) for r in self.rows if r["leaked"] == "yes")
        self.assertRegex(lines[0], r"^\d+ goroutines in \d+ groups; %d leaked " % leaked)
        self.assertTrue(lines[1].startswith("leaked groups: "), lines[1])
        table = lines[2:]
        # whatever the length of a wait reason or creator, each column starts where its
        # header does: the creator and the stack after two spaces, never cut
        for title in ("created by", "stack, innermost first"):
            col = table[0].index(title)
            for line in table[1:]:
                self.assertEqual(line[col - 2:col], "  ", line)
                self.assertNotEqual(line[col], " ", line)
        verdicts = [line.split()[5] for line in table[1:]]
        self.assertEqual(verdicts, sorted(verdicts, key=lambda v: v != "yes"))

    def test_profile_label(self):
        with tempfile.TemporaryDirectory(prefix="heapref-goleaks-") as tmp:
            pb = os.path.join(tmp, "p.pb.gz")
            code, _, err = heapref("analyze", "-o", pb, self.binary, self.dump)
            self.assertEqual(code, 0, err)
            leaked = sum(int(r["count"]) for r in self.rows if r["leaked"] == "yes")
            heap = sum(int(r["bytes"]) for r in self.rows if r["leaked"] == "yes")
            self.assertRegex(err, r"heapref: goroutines: \d+, %d leaked holding %d heap bytes "
                             % (leaked, heap))
            top = subprocess.run([progs.GO, "tool", "pprof", "-top", "-nodefraction=0",
                                  "-unit=byte", "-tagfocus=leaked=yes", pb],
                                 capture_output=True, text=True, check=True).stdout
            total = int(re.search(r"Showing nodes accounting for (\d+)B", top).group(1))
            self.assertEqual(total, heap, top)


if __name__ == "__main__":
    unittest.main()
