# SPDX-License-Identifier: Apache-2.0
"""The static files of scripts/build-static.sh, each alone in an empty root.

Where heapref is needed is next to the service: in its container, often distroless
(no shell, no libraries, no /etc). scripts/build-static.sh builds heapref linked
statically, for linux/amd64 and, cross-compiled, linux/arm64. Here each file is copied
alone into an empty directory and run there with chroot(2), with nothing else in
that root but its inputs, and what it says is compared with the ordinary (dynamic)
build of the same source run outside it:

  - amd64: a dump, and a live process (--pid; /proc mounted in the root, in a mount
    namespace of its own, as a container has it): the same report as the dynamic
    build's on the same dump and the same held process;
  - arm64, under qemu-user (qemu-aarch64-static, itself static, copied in beside it):
    the dump of the arm64 test program, the same report as the amd64 dynamic build's
    on that dump, so the arm64 host reads what the amd64 host reads;
  - --version: says static, the processor, and the commit the source tree is at.

Environment: HEAPREF (the dynamic build, set by ctest), HEAPREF_STATIC_AMD64 and
HEAPREF_STATIC_ARM64 (the static files; scripts/test.sh builds them first), HEAPREF_WORK.
Needs root (chroot, mount). Without the static files or root every test skips; in
an ASan build it skips too (scripts/test.sh runs it once, in the plain build).
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
import toolchains  # noqa: E402

HEAPREF = os.environ.get("HEAPREF", os.path.join(progs.TESTPROGS, "..", "build", "heapref"))
WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")
STATIC = {"amd64": os.environ.get("HEAPREF_STATIC_AMD64"),
          "arm64": os.environ.get("HEAPREF_STATIC_ARM64")}
QEMU = shutil.which("qemu-aarch64-static")
ROOT = os.path.normpath(os.path.join(progs.TESTPROGS, ".."))
PROCESSOR = {"amd64": "x86_64", "arm64": "aarch64"}


def skip_reason(arch):
    if not STATIC[arch]:
        return "HEAPREF_STATIC_%s not set (scripts/test.sh builds the static files)" % arch.upper()
    if os.geteuid() != 0:
        return "chroot and mount need root"
    if progs.is_asan_build(HEAPREF):
        return "runs once, in the plain build"
    if arch == "arm64" and not QEMU:
        return "no qemu-aarch64-static"
    return None


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, **kw)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


class EmptyRoot:
    """A directory holding nothing but what is put in it; removed after."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="heapref-root-", dir=WORK)

    def put(self, src, name):
        shutil.copy2(src, os.path.join(self.path, name))
        return "/" + name

    def files(self):
        return sorted(os.listdir(self.path))

    def chroot(self, *argv, proc=False):
        """Runs argv in the root, with /proc mounted there (in a private mount namespace
        of its own) when proc is set; the caller's namespace never sees the mount."""
        if not proc:
            return run(["chroot", self.path] + list(argv))
        os.makedirs(os.path.join(self.path, "proc"), exist_ok=True)
        script = 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"'
        return run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                    self.path] + list(argv))

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


class StaticFile:
    """The tests of one static file (a mixin: Amd64 and Arm64 say which)."""
    arch = None

    def setUp(self):
        why = skip_reason(self.arch)
        if why:
            self.skipTest(why)
        self.root = EmptyRoot()
        self.addCleanup(self.root.remove)
        self.heapref = self.root.put(STATIC[self.arch], "heapref")
        self.command = [self.heapref]
        if self.arch == "arm64":
            self.command = [self.root.put(QEMU, "qemu-aarch64-static"), self.heapref]

    def outside(self, *args):
        st, out, err = run([HEAPREF] + list(args))
        self.assertEqual(st, 0, err)
        return out

    def inside(self, *args, proc=False):
        st, out, err = self.root.chroot(*(self.command + list(args)), proc=proc)
        self.assertEqual(st, 0, "in the empty root: %s" % err)
        return out

    def test_version(self):
        out = self.inside("--version")
        self.assertRegex(out, r"^heapref \d+\.\d+\.\d+\n")
        self.assertIn("\nbuilt static, linux/%s, " % PROCESSOR[self.arch], out)
        # built from a profile of its own runs (scripts/build-pgo.sh; arm64's under qemu)
        self.assertRegex(out, r"\nbuilt static, [^\n]*, Release, profile-guided\n")
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if commit.returncode == 0:
            self.assertRegex(out, r"\ncommit %s(-modified)?\n" %
                             re.escape(commit.stdout.decode().strip()))
        self.assertRegex(out, r"\nlibraries libdwarf \d+")

    def dump_report(self, entry_env):
        """The --text report of the example's dump, inside and outside the root."""
        binary, dump, _ = progs.prepare("example", WORK, env=entry_env)
        self.root.put(binary, "example")
        self.root.put(dump, "example.dump")
        inside = self.inside("analyze", "--text", "--examples", "2", "/example",
                             "/example.dump")
        # the same relative names outside, so that the reports may be equal byte for byte
        outside = run([os.path.abspath(HEAPREF), "analyze", "--text", "--examples", "2",
                       "example", "example.dump"], cwd=self.root.path)
        self.assertEqual(outside[0], 0, outside[2])
        return inside.replace("/example", "example"), outside[1]


class Amd64(StaticFile, unittest.TestCase):
    arch = "amd64"

    def test_dump(self):
        inside, outside = self.dump_report(None)
        self.assertIn("main.sessions", inside)
        self.assertEqual(inside, outside)
        self.assertEqual(self.root.files(), ["example", "example.dump", "heapref"])

    def test_live_process(self):
        binary, _, _ = progs.prepare("example", WORK)

        def while_held(pid):
            args = ["analyze", "--text", "--examples", "2", "--pid", str(pid)]
            return self.inside(*args, proc=True), self.outside(*args)

        _, (inside, outside) = progs.run_held(binary, os.path.join(self.root.path, "held.dump"),
                                              while_held)
        self.assertIn("main.sessions", inside)
        self.assertEqual(inside, outside)
        # it wrote nothing into the root: the core of --pid is kept in memory
        self.assertEqual(sorted(f for f in self.root.files() if f != "held.dump"),
                         ["heapref", "proc"])


class Arm64(StaticFile, unittest.TestCase):
    arch = "arm64"

    def test_dump_of_an_arm64_program(self):
        entry = next(e for e in toolchains.MATRIX if e.goarch == "arm64")
        inside, outside = self.dump_report(entry.env)
        self.assertIn("main.sessions", inside)
        self.assertEqual(inside, outside)


if __name__ == "__main__":
    unittest.main()
