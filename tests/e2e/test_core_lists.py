# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the core reader on cores whose runtime lists loop.

A core is hostile input. One word changed in a real core, a memory-profile bucket's
allnext or a span special's next pointing back into its list, once made
`heapref analyze BINARY CORE` walk that list up to 100,000,000 times: 41 s and 9.8 GB
of memory, then "out of memory". Every list the core reader follows is now held to
what the core can hold and checked for loops (src/core/core_bounds.c, docs/cores.md).

The cores are real: testprogs/allocs (every allocation sampled: dozens of memory-profile
buckets, profile specials on its spans) and testprogs/finalizer (finalizer specials,
queued finalizers in runtime.allfin), each held after its dump while
`heapref analyze --pid PID --save-core CORE` takes its core (as tests/e2e/test_core.py
does; under an emulator, the core the emulator writes). core_patch.py finds a list in
the core through the binary's symbols and DWARF and writes a copy with one link
pointing back into the list: to its own node, to the node before, from the last node to
the first. Each copy must be refused:

  - exit status 1 (bad input), nothing on stdout;
  - exactly one line on stderr, "heapref: CORE: LIST loops back to NODE 0xADDR after N
    entries (a corrupt core?)", naming the copy, the list, and a node of the loop, with
    N at most a small multiple of the list's length;
  - within BOUNDED_SECONDS, under an address-space limit of 4 times the core plus
    512 MiB (RLIMIT_AS; not under ASan, which reserves terabytes).

The unpatched cores are read (status 0), so the refusals are the patches' doing.
Cores are deleted as soon as the test is done with them.

Which Go builds the programs: the matrix entry HEAPREF_MATRIX names, else the
machine's Go. Environment: HEAPREF, HEAPREF_WORK as for every end-to-end test.
"""

import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import core_patch  # noqa: E402
import progs  # noqa: E402
import toolchains  # noqa: E402

ENTRY = toolchains.selected()
RUN_TIMEOUT = 120       # seconds before a run counts as a hang
LOOP_LINE = re.compile(r"^heapref: (?P<core>.+): (?P<list>.+) loops back to (?P<node>.+) "
                       r"0x(?P<addr>[0-9a-f]+) after (?P<n>\d+) entr(y|ies) "
                       r"\(a corrupt core\?\)$")


ASAN = progs.is_asan_build(progs.HEAPREF) if os.path.exists(progs.HEAPREF) else False
BOUNDED_SECONDS = 20 if ASAN else 5


def address_space_limit(core, binary):
    """RLIMIT_AS for a run: 4 x its inputs + 512 MiB (None under ASan)."""
    if ASAN:
        return None
    return 4 * (os.path.getsize(core) + os.path.getsize(binary)) + (512 << 20)


def analyze(binary, core, out):
    """heapref analyze BINARY CORE -o out, limited; (status, stdout, stderr, seconds)."""
    limit = address_space_limit(core, binary)

    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t0 = time.monotonic()
    try:
        p = subprocess.run([progs.HEAPREF, "analyze", binary, core, "-o", out],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=RUN_TIMEOUT,
                           preexec_fn=preexec if limit else None)
    except subprocess.TimeoutExpired:
        return None, "", "still running after %d s" % RUN_TIMEOUT, RUN_TIMEOUT
    return (p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"),
            time.monotonic() - t0)


class LoopingLists(unittest.TestCase):
    """A real core with one list patched into a loop: refused at once, with one line."""

    @classmethod
    def setUpClass(cls):
        toolchains.check(ENTRY, progs.go_version(env=ENTRY.env))
        cls.work = tempfile.mkdtemp(prefix="heapref-lists-")
        cls.cores = {}
        try:
            for name in ("allocs", "finalizer"):
                cls.cores[name] = cls.take_core(name)
        except Exception:
            shutil.rmtree(cls.work, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    @classmethod
    def take_core(cls, name):
        """(binary, core) of testprogs/name, held after its dump."""
        d = os.path.join(cls.work, name)
        binary = progs.build(name, d, env=ENTRY.env)
        dump = os.path.join(d, name + ".dump")
        if toolchains.emulator_for(ENTRY.goarch):
            return binary, progs.emulated_core(binary, dump, d)
        core = os.path.join(d, name + ".core")

        def while_held(pid):
            return progs.heapref("analyze", "--pid", pid, "--save-core", core, binary,
                                 "-o", os.path.join(d, "pid.pb.gz"))

        _, (st, _, err) = progs.run_held(binary, dump, while_held)
        if st != 0:
            raise AssertionError("cannot take the core of %s: %s" % (name, err))
        os.remove(dump)
        return binary, core

    def refused(self, prog, patch, list_name, node_kind, loop):
        """Patches prog's core with patch; checks the refusal names list_name and a node
        (node_kind, one of loop's addresses); returns the count of entries it gives."""
        binary, core = self.cores[prog]
        path, what = patch(core, binary, self.work)
        try:
            st, out, err, seconds = analyze(binary, path, os.path.join(self.work, "x.pb.gz"))
        finally:
            os.remove(path)
        lines = err.splitlines()
        self.assertEqual(st, 1, "%s: exit %s: %s" % (what, st, err))
        self.assertEqual(out, "")
        self.assertEqual(len(lines), 1, "%s: %s" % (what, err))
        m = LOOP_LINE.match(lines[0])
        self.assertTrue(m, "%s: %s" % (what, lines[0]))
        self.assertEqual(m.group("core"), path)
        self.assertEqual(m.group("list"), list_name, lines[0])
        self.assertEqual(m.group("node"), node_kind, lines[0])
        self.assertIn(int(m.group("addr"), 16), loop, lines[0])
        self.assertLess(seconds, BOUNDED_SECONDS, "%s: %.1f s" % (what, seconds))
        self.assertFalse(os.path.exists(os.path.join(self.work, "x.pb.gz")))
        return int(m.group("n"))

    def test_unpatched_cores_are_read(self):
        for prog, (binary, core) in sorted(self.cores.items()):
            st, _, err, _ = analyze(binary, core, os.path.join(self.work, prog + ".pb.gz"))
            self.assertEqual(st, 0, "%s: %s" % (prog, err))

    # -- runtime.mbuckets: bucket.allnext -----------------------------------------------

    def buckets(self):
        binary, core = self.cores["allocs"]
        return core_patch.nodes(core, binary, "mbuckets")

    def test_bucket_pointing_to_itself(self):
        b = self.buckets()
        n = self.refused("allocs", core_patch.bucket_self_loop, "runtime.mbuckets", "bucket",
                         b[:1])
        self.assertEqual(n, 1)

    def test_two_buckets_pointing_to_each_other(self):
        b = self.buckets()
        n = self.refused("allocs", core_patch.bucket_two_node_loop, "runtime.mbuckets",
                         "bucket", b[:2])
        self.assertEqual(n, 2)

    def test_last_bucket_pointing_to_the_first(self):
        b = self.buckets()
        self.assertGreater(len(b), 10, "testprogs/allocs has few buckets")
        n = self.refused("allocs", core_patch.bucket_whole_loop, "runtime.mbuckets", "bucket",
                         b)
        self.assertGreaterEqual(n, len(b))
        self.assertLessEqual(n, 3 * len(b), "found late")

    # -- a span's specials: special.next --------------------------------------------------

    def specials(self, prog):
        binary, core = self.cores[prog]
        return core_patch.nodes(core, binary, "specials")

    def test_profile_special_pointing_to_itself(self):
        sp = self.specials("allocs")
        self.assertEqual(self.refused("allocs", core_patch.special_self_loop,
                                      self.specials_list("allocs"), "special", sp[:1]), 1)

    def test_profile_specials_pointing_to_each_other(self):
        sp = self.specials("allocs")
        self.assertEqual(self.refused("allocs", core_patch.special_two_node_loop,
                                      self.specials_list("allocs"), "special", sp[:2]), 2)

    def test_finalizer_special_pointing_to_itself(self):
        sp = self.specials("finalizer")
        self.assertEqual(self.refused("finalizer", core_patch.special_self_loop,
                                      self.specials_list("finalizer"), "special", sp[:1]), 1)

    def test_finalizer_specials_pointing_to_each_other(self):
        sp = self.specials("finalizer")
        self.assertEqual(self.refused("finalizer", core_patch.special_two_node_loop,
                                      self.specials_list("finalizer"), "special", sp[:2]), 2)

    def specials_list(self, prog):
        """How the refusal names the list of specials core_patch patches."""
        binary, core = self.cores[prog]
        return "the list of specials of span 0x%x" % core_patch.specials_of(core, binary)[0]

    # -- runtime.allm, runtime.allfin ------------------------------------------------------

    def test_m_pointing_to_itself(self):
        binary, core = self.cores["allocs"]
        ms = core_patch.nodes(core, binary, "allm")
        self.assertEqual(self.refused("allocs", core_patch.m_self_loop, "runtime.allm", "M",
                                      ms[:1]), 1)

    def test_finalizer_block_pointing_to_itself(self):
        binary, core = self.cores["finalizer"]
        fb = core_patch.nodes(core, binary, "allfin")
        self.assertEqual(self.refused("finalizer", core_patch.finblock_self_loop,
                                      "runtime.allfin", "finalizer block", fb[:1]), 1)


if __name__ == "__main__":
    unittest.main()
