# SPDX-License-Identifier: Apache-2.0
"""heapref's own stack unwinder (src/core: the Go function table and the unwinder the
core-file front end uses) against the frames the runtime itself wrote into heap dumps.

tests/unit/check_unwind (CHECK_UNWIND) unwinds every goroutine of a dump from its top
frame's PC and the goroutine's SP over the dump's stack memory and compares each frame
with the dump's frame record: sp, depth, child sp, size, entry, pc, continuation pc,
name and pointer bitmap. The runtime's records are the independent truth here.

Every scenario program (progs.PROGRAMS) is run in both flavors (optimised, and
-gcflags=all=-N -l), built by the matrix entry HEAPREF_MATRIX names (default: the
machine's Go); with HEAPREF_UNWIND_ALL=1, by every entry of the matrix in turn.
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

CHECK_UNWIND = os.environ.get("CHECK_UNWIND", os.path.join(
    progs.TESTPROGS, "..", "build", "tests", "check_unwind"))
WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")
GO = os.environ.get("HEAPREF_GO", "go")
FLAVORS = (("optimised", None), ("-N -l", "all=-N -l"))
SUMMARY = re.compile(r"^goroutines (\d+), frames (\d+), mismatches (\d+)$", re.M)


def entries():
    if os.environ.get("HEAPREF_UNWIND_ALL") == "1":
        return list(toolchains.MATRIX)
    return [toolchains.selected()]


class UnwindMatchesTheRuntime(unittest.TestCase):

    def check(self, entry, name, gcflags):
        binary, dump, _ = progs.prepare(name, WORK, go=GO, env=entry.env, gcflags=gcflags)
        r = subprocess.run([CHECK_UNWIND, binary, dump], capture_output=True, text=True,
                           timeout=300)
        m = SUMMARY.search(r.stdout)
        self.assertIsNotNone(m, "no summary from check_unwind: %s %s" % (r.stdout[-2000:], r.stderr))
        goroutines, frames, mismatches = (int(x) for x in m.groups())
        sys.stderr.write("%s %s %s: %s\n" % (entry.name, name, gcflags or "optimised", m.group(0)))
        self.assertEqual(mismatches, 0, r.stdout[-4000:])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(goroutines, 0)
        self.assertGreater(frames, goroutines)  # every goroutine has more than one frame

    def test_every_program(self):
        for entry in entries():
            try:
                toolchains.check(entry, progs.go_version(GO, entry.env))
            except (toolchains.MatrixError, progs.ProgError) as e:
                self.fail("matrix entry %s cannot run here: %s" % (entry.name, e))
            for name in progs.PROGRAMS:
                for flavor, gcflags in FLAVORS:
                    with self.subTest(entry=entry.name, program=name, flavor=flavor):
                        self.check(entry, name, gcflags)


if __name__ == "__main__":
    unittest.main()
