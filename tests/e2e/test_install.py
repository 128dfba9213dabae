# SPDX-License-Identifier: Apache-2.0
"""The README's "Install" section, followed as written, in a copy of the source tree.

Each command of its three parts runs as it is written there, with bash, in a fresh copy
of the tree (the files git tracks, or would: `git ls-files -co --exclude-standard`):

  - "One static file": scripts/build-static.sh for amd64 and arm64; each file is
    static and for its processor; then the pod commands, with kubectl replaced by
    fake_kubectl.py: the pod's service is testprogs/example, held after its dump as
    PID 1 of a process namespace of its own, and the debugging container an empty
    root in that namespace. `analyze --text --pid 1` there must report the example's
    roots as the dynamic build does on the same process, and the profile copied out
    must be read by the real `go tool pprof`;
  - "The Debian package": built, installed with dpkg: /usr/bin/heapref runs and says
    static, man finds heapref(1) and a page per command `heapref --help` lists,
    completion and docs are in place, lintian (where installed) reports no error or
    warning; `apt-get remove` then leaves none of its files;
  - "From source": installed under a temporary HOME's ~/.local: the binary runs, its
    man pages and completion are there.

`sudo` is a stand-in that runs the command (the tests run as root). Needs root
(unshare, chroot, dpkg). Skips without root, in an ASan build (it runs once, in the
plain build), or where a heapref package is installed already (never replaced here).
Environment: HEAPREF (the dynamic build, set by ctest), HEAPREF_WORK.
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
from test_cli import top_level_entries  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HEAPREF = os.environ.get("HEAPREF", os.path.join(progs.TESTPROGS, "..", "build", "heapref"))
WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")
ROOT = os.path.normpath(os.path.join(progs.TESTPROGS, ".."))
README = os.path.join(ROOT, "README.md")


def run(cmd, timeout=900, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, **kw)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def package_installed():
    st, out, _ = run(["dpkg-query", "-W", "-f=${Status}", "heapref"])
    return st == 0 and "install ok installed" in out


def install_blocks():
    """The sh blocks of each ### part of the README's ## Install section, by heading."""
    with open(README) as f:
        text = f.read()
    section = text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    parts = {}
    for part in re.split(r"\n### ", section)[1:]:
        heading, body = part.split("\n", 1)
        parts[heading.strip()] = [
            [ln for ln in block.splitlines() if ln.strip()]
            for block in re.findall(r"```sh\n(.*?)```", body, re.S)]
    return parts


def commands_listed():
    """The commands `heapref --help` lists."""
    return list(top_level_entries(run([HEAPREF, "--help"])[1]))


def copy_tree(dst):
    """The source tree as a fresh clone would have it, with uncommitted edits."""
    st, out, err = run(["git", "-C", ROOT, "ls-files", "-z", "-co", "--exclude-standard"])
    if st != 0:
        raise unittest.SkipTest("the source tree is not a git work tree: %s" % err)
    for rel in filter(None, out.split("\0")):
        src = os.path.join(ROOT, rel)
        if not os.path.isfile(src):
            continue  # deleted, not yet committed
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel))


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("unshare, chroot and dpkg need root")
        if progs.is_asan_build(HEAPREF):
            raise unittest.SkipTest("runs once, in the plain build")
        cls.blocks = install_blocks()
        cls.tmp = tempfile.mkdtemp(prefix="heapref-install-", dir=WORK)
        cls.src = os.path.join(cls.tmp, "src")
        copy_tree(cls.src)
        cls.bin = os.path.join(cls.tmp, "bin")
        os.makedirs(cls.bin)
        with open(os.path.join(cls.bin, "sudo"), "w") as f:
            f.write('#!/bin/sh\n# the tests run as root: sudo runs the command\nexec "$@"\n')
        shutil.copy(os.path.join(HERE, "fake_kubectl.py"), os.path.join(cls.bin, "kubectl"))
        for tool in ("sudo", "kubectl"):
            os.chmod(os.path.join(cls.bin, tool), 0o755)
        cls.home = os.path.join(cls.tmp, "home")
        os.makedirs(cls.home)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sh(self, line, env=None):
        """One README line, as written, in bash in the copy of the tree."""
        e = dict(os.environ, PATH=self.bin + ":" + os.environ["PATH"], HOME=self.home,
                 PAGER="cat", MANPAGER="cat", MANWIDTH="80", DEBIAN_FRONTEND="noninteractive")
        e.update(env or {})
        st, out, err = run(["bash", "-euo", "pipefail", "-c", line], cwd=self.src, env=e)
        self.assertEqual(st, 0, "README line failed: %s\n%s%s" % (line, out, err))
        return out

    def static_files(self):
        lines = self.blocks["One static file, for a container or a node"][0]
        for line in lines:
            self.sh(line)
        for arch, machine in (("amd64", "x86-64"), ("arm64", "ARM aarch64")):
            path = os.path.join(self.src, "build-static-%s" % arch, "heapref")
            kind = run(["file", "-b", path])[1]
            self.assertIn(machine, kind)
            self.assertIn("statically linked", kind)

    def test_1_static_file_in_a_pod(self):
        self.static_files()
        pod_cmds = self.blocks["One static file, for a container or a node"][1]
        self.assertTrue(all(c.startswith(("kubectl ", "go tool pprof ")) for c in pod_cmds),
                        pod_cmds)
        binary, _, _ = progs.prepare("example", WORK)
        state = os.path.join(self.tmp, "pod.json")
        pod_dir = os.path.join(self.tmp, "pod")
        os.makedirs(pod_dir)

        def in_pod(wrapper_pid):
            service = self.child_of(wrapper_pid)
            with open(state, "w") as f:
                json.dump({"pod": "POD", "app": "APP", "service_pid": service,
                           "dir": pod_dir}, f)
            outs = [self.sh(c, env={"FAKE_POD": state}) for c in pod_cmds]
            dynamic = run([HEAPREF, "analyze", "--text", "--pid", str(service)])
            return outs, dynamic

        _, (outs, dynamic) = progs.run_held(
            binary, os.path.join(self.tmp, "held.dump"), in_pod,
            wrap=["unshare", "--pid", "--fork", "--kill-child"])
        text = outs[pod_cmds.index(next(c for c in pod_cmds if "--text --pid 1" in c))]
        self.assertIn("main.sessions", text)
        self.assertEqual(dynamic[0], 0, dynamic[2])
        self.assertEqual(text, dynamic[1])
        top = outs[-1]
        self.assertIn("main.sessions", top)  # go tool pprof -top read the copied profile
        # what the debugging container holds: the file copied in and the profile it wrote
        self.assertEqual(sorted(os.listdir(os.path.join(pod_dir, "heapref", "tmp"))),
                         ["heapref", "heapref.pb.gz"])

    @staticmethod
    def child_of(pid):
        """The process unshare --fork made: the service, PID 1 in its namespace."""
        for _ in range(100):
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
            time.sleep(0.05)
        raise AssertionError("unshare made no process")

    def test_2_package(self):
        if package_installed():
            self.skipTest("a heapref package is installed already: not replacing it")
        lines = self.blocks["The Debian package"][0]
        self.assertEqual(len(lines), 4, lines)
        build, install, man, remove = lines
        self.sh(build)
        deb = re.search(r"(build-static-amd64/heapref_\S+\.deb)", build).group(1)
        files = run(["dpkg-deb", "-c", os.path.join(self.src, deb)])[1]
        self.addCleanup(lambda: package_installed() and run(["dpkg", "--purge", "heapref"]))
        self.sh(install)
        self.assertTrue(package_installed())
        self.assertIn("--pause-mode", self.sh(man))
        self.check_installed()
        if shutil.which("lintian"):
            st, out, err = run(["lintian", "--fail-on", "error,warning",
                                os.path.join(self.src, deb)])
            self.assertEqual(st, 0, "lintian:\n" + out + err)
        self.sh(remove)
        self.assertFalse(package_installed())
        left = [p for p in re.findall(r"\./(usr/\S+[^/])$", files, re.M)
                if os.path.isfile("/" + p)]
        self.assertEqual(left, [], "files the removal left behind")

    def check_installed(self):
        st, out, err = run(["/usr/bin/heapref", "--version"])
        self.assertEqual(st, 0, err)
        self.assertIn("\nbuilt static, ", out)
        for page in ["heapref"] + ["heapref-" + c for c in commands_listed()]:
            st, out, err = run(["man", "-w", page])
            self.assertEqual((st, out.strip()), (0, "/usr/share/man/man1/%s.1.gz" % page),
                             "man -w %s: %s" % (page, err))
        self.assertTrue(os.path.isfile("/usr/share/bash-completion/completions/heapref"))
        for doc in ("README.md", "cli.md", "copyright", "changelog.gz"):
            self.assertTrue(os.path.isfile("/usr/share/doc/heapref/" + doc), doc)

    def test_3_from_source(self):
        for line in self.blocks["From source"][0]:
            self.sh(line)
        local = os.path.join(self.home, ".local")
        st, out, err = run([os.path.join(local, "bin", "heapref"), "--version"])
        self.assertEqual(st, 0, err)
        self.assertIn("\nbuilt dynamic, ", out)
        for c in commands_listed():
            page = os.path.join(local, "share", "man", "man1", "heapref-%s.1" % c)
            self.assertTrue(os.path.isfile(page) or os.path.isfile(page + ".gz"), page)
        completion = os.path.join(local, "share", "bash-completion", "completions", "heapref")
        self.assertTrue(os.path.isfile(completion))
        self.assertTrue(os.stat(os.path.join(local, "bin", "heapref")).st_mode & stat.S_IXUSR)


if __name__ == "__main__":
    unittest.main()
