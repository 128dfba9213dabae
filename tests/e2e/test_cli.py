# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of heapref's command line conventions, on the real binary.

  - every command's --help, -h and `heapref help COMMAND` print the same usage, exit 0,
    ending its last line (one newline);
    and agree with the blocks quoted in docs/cli.md, as `heapref --help` does; the
    commands docs/cli.md quotes are the commands `heapref --help` lists;
  - `heapref --help` names every option of every command, in that command's entry;
  - an unknown option or command is echoed in one line pointing at the help (exit 2);
  - options may follow the operands: each command gives the same output either way;
  - analyze's output files get mode 0666 minus the umask;
  - `cmake --install BUILD --prefix P` installs P/bin/heapref, which runs.

Environment: HEAPREF (the binary, set by ctest; its directory is the build tree that
the install test installs from), HEAPREF_WORK (built programs and their dumps).
"""

import os
import re
import stat
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402

HEAPREF, WORK, ROOT = progs.HEAPREF, progs.WORK, progs.ROOT
CLI_DOC = os.path.join(ROOT, "docs", "cli.md")
COMMANDS = ("analyze", "why", "retained", "diff", "goroutines", "suspects", "allocs", "hprof", "info",
            "object", "types", "vars", "help", "version")


def heapref(*args, cwd=None, umask=None):
    def preexec():
        if umask is not None:
            os.umask(umask)
    p = subprocess.run([HEAPREF] + [str(a) for a in args], capture_output=True, text=True,
                       cwd=cwd, timeout=300, preexec_fn=preexec)
    return p.returncode, p.stdout, p.stderr


def doc_usages():
    """The fenced blocks of docs/cli.md that quote a usage, by command (None: heapref's)."""
    with open(CLI_DOC) as f:
        blocks = re.findall(r"^```\n(.*?)^```$", f.read(), re.S | re.M)
    out = {}
    for b in blocks:
        m = re.match(r"usage: heapref (\S+)", b)
        if m:
            cmd = None if m.group(1) == "<command>" else m.group(1)
            if cmd in out:
                raise AssertionError("docs/cli.md quotes the usage of %s twice" % cmd)
            out[cmd] = b
    return out


def top_level_entries(text):
    """heapref --help's command entries: command -> its synopsis and description lines."""
    body = text.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    entries = {}
    for line in body.splitlines():
        m = re.match(r"^  ([a-z]+)\b", line)
        if m:
            cmd = m.group(1)
            entries[cmd] = ""
        entries[cmd] += line + "\n"
    return entries


def options_of(usage):
    """The options a command's usage names (-o, --max-depth, ...)."""
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", usage)) - {"-h", "--help"}


class HelpTest(unittest.TestCase):
    def test_every_command_help_exits_0_and_agrees(self):
        for cmd in COMMANDS:
            with self.subTest(command=cmd):
                runs = [heapref(cmd, "--help"), heapref(cmd, "-h"), heapref("help", cmd)]
                for code, out, err in runs:
                    self.assertEqual((code, err), (0, ""))
                    self.assertTrue(out.startswith("usage: heapref %s" % cmd), out)
                    # ends its last line, or the shell's prompt follows it on that line
                    self.assertTrue(out.endswith("\n") and not out.endswith("\n\n"), out[-80:])
                    self.assertEqual(out, runs[0][1])
                self.assertNotIn("%%", runs[0][1])

    def test_help_matches_docs_cli_md(self):
        docs = doc_usages()
        code, top, _ = heapref("--help")
        self.assertEqual(code, 0)
        self.assertEqual(heapref("help")[1], top)
        self.assertEqual(top, docs.get(None), "heapref --help differs from docs/cli.md")
        self.assertEqual(set(top_level_entries(top)), set(COMMANDS))
        self.assertEqual(set(docs) - {None}, set(COMMANDS), "docs/cli.md quotes other commands")
        for cmd in COMMANDS:
            with self.subTest(command=cmd):
                self.assertEqual(heapref(cmd, "--help")[1], docs[cmd],
                                 "heapref %s --help differs from docs/cli.md" % cmd)

    def test_top_level_help_names_every_option(self):
        entries = top_level_entries(heapref("--help")[1])
        for cmd in COMMANDS:
            with self.subTest(command=cmd):
                wanted = options_of(heapref(cmd, "--help")[1])
                self.assertEqual(wanted - options_of(entries[cmd]), set(), entries[cmd])
        self.assertIn("--cutoff", entries["analyze"])   # those the issue found missing
        self.assertIn("--rtype", entries["types"])


class UsageErrorTest(unittest.TestCase):
    def test_unknown_option_is_echoed(self):
        for cmd in COMMANDS:
            with self.subTest(command=cmd):
                code, out, err = heapref(cmd, "--txt", "a", "b")
                self.assertEqual((code, out), (2, ""))
                self.assertEqual(err, "heapref: unknown option --txt (see heapref %s --help)\n"
                                 % cmd)

    def test_unknown_command_is_echoed(self):
        self.assertEqual(heapref("analyse", "a", "b"),
                         (2, "", "heapref: unknown command analyse (see heapref --help)\n"))
        self.assertEqual(heapref("help", "analyse"),
                         (2, "", "heapref: unknown command analyse (see heapref --help)\n"))
        self.assertEqual(heapref("--txt"),
                         (2, "", "heapref: unknown option --txt (see heapref --help)\n"))

    def test_missing_value(self):
        code, out, err = heapref("analyze", "a", "b", "--max-depth")
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err, "heapref: --max-depth needs a value (see heapref analyze --help)\n")


class Program:
    """testprogs/cycle's binary and dump, the third node of its cycle (reached through
    two others: --full-chains gives it a longer chain) and main.main's entry PC."""

    def __init__(self):
        self.binary, self.dump, facts = progs.prepare("cycle", WORK)
        self.third_node = facts["ptr_c"]
        nm = subprocess.run([progs.GO, "tool", "nm", self.binary], capture_output=True,
                            text=True, check=True).stdout
        self.main_pc = next(int(line.split()[0], 16) for line in nm.splitlines()
                            if line.split()[-1] == "main.main")


class OptionsAfterOperandsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Program()
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def same_either_way(self, cmd, options, operands):
        before = heapref(cmd, *(options + operands), cwd=self.tmp.name)
        after = heapref(cmd, *(operands + options), cwd=self.tmp.name)
        self.assertEqual(before[0], 0, before[2])
        self.assertEqual(before[1], after[1])
        self.assertNotEqual(before[1], "")
        # an option that changes the output shows that it was taken, not ignored
        if options != ["--"]:
            plain = heapref(cmd, *operands, cwd=self.tmp.name)
            self.assertNotEqual(plain[1], before[1], "the options changed nothing")

    def test_every_command(self):
        p = self.p
        cases = (
            ("analyze", ["--text", "--cutoff", "0", "--max-depth=2", "-o", "-"],
             [p.binary, p.dump]),
            ("why", ["--full-chains"], [p.binary, p.dump, hex(p.third_node)]),
            ("why", ["-n", "3"], [p.binary, p.dump, hex(p.third_node)]),
            ("retained", ["--format", "tsv", "-n", "3"], [p.binary, p.dump]),
            ("diff", ["--text", "--by-index"], [p.binary, p.dump, p.binary, p.dump]),
            ("object", ["--"], [p.dump, hex(p.third_node)]),
            ("types", ["--summary"], [p.binary]),
            ("vars", ["--pc", hex(p.main_pc)], [p.binary]),
        )
        for cmd, options, operands in cases:
            with self.subTest(command=cmd):
                self.same_either_way(cmd, options, operands)
        # info has no option that changes standard output: --stats, on stderr
        plain = heapref("info", p.dump)
        code, out, err = heapref("info", p.dump, "--stats")
        self.assertEqual((code, out), (0, plain[1]), err)
        self.assertIn("stats:", err)


class OutputModeTest(unittest.TestCase):
    def test_mode_is_0666_minus_umask(self):
        p = Program()
        with tempfile.TemporaryDirectory() as d:
            for umask in (0o022, 0o077, 0o002):
                for text in ([], ["--text"]):
                    with self.subTest(umask=oct(umask), text=bool(text)):
                        out = os.path.join(d, "out")
                        code, _, err = heapref("analyze", *text, "-o", out, p.binary, p.dump,
                                               umask=umask)
                        self.assertEqual(code, 0, err)
                        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o666 & ~umask)
                        os.unlink(out)


class InstallTest(unittest.TestCase):
    def test_install_into_a_prefix(self):
        build = os.path.dirname(HEAPREF)
        if not os.path.exists(os.path.join(build, "cmake_install.cmake")):
            self.skipTest("HEAPREF is not in a CMake build tree")
        with tempfile.TemporaryDirectory() as prefix:
            p = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            installed = os.path.join(prefix, "bin", "heapref")
            self.assertTrue(os.access(installed, os.X_OK), os.listdir(prefix))
            v = subprocess.run([installed, "version"], capture_output=True, text=True)
            self.assertEqual((v.returncode, v.stdout), (0, heapref("version")[1]))
            self.assertTrue(os.path.exists(os.path.join(prefix, "share", "doc", "heapref",
                                                        "cli.md")))
            # the page docs/cli.md shows comes along with it
            self.assertTrue(os.path.exists(os.path.join(prefix, "share", "doc", "heapref",
                                                        "suspects-page.png")))


if __name__ == "__main__":
    unittest.main()
