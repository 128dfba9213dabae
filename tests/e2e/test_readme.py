# SPDX-License-Identifier: Apache-2.0
"""The README's "Which view answers which question", run on testprogs/example.

example/main.go keeps main.sessions (200 sessions with payloads and events), main.pool
(32 connections with two 32 KiB buffers) and a blocked goroutine's 512 KiB scratch
buffer: its facts give a lower bound of what each keeps, and they are far apart, so the
ranking is sessions, pool, janitor. The README's commands must give that ranking
(pprof's -tags on the `root` label, analyze --text), must show one variable alone
(-tagfocus), and the profile must name its binary (mapping: file name and the build ID
`go tool buildid` prints) so pprof no longer says "Main binary filename not available".
Each command checked here is also checked to be written in the README as it is run.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402  (tests/e2e/profile.py, not the standard library's)
import progs  # noqa: E402

README = os.path.join(progs.ROOT, "README.md")
QUICKSTART = os.path.join(progs.ROOT, "scripts", "quickstart.sh")
heapref = progs.heapref


def pprof(*args):
    p = subprocess.run([progs.GO, "tool", "pprof"] + list(args), capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError("go tool pprof %s: %s" % (" ".join(args), p.stderr))
    return p.stdout, p.stderr


def tag_ranking(text, key):
    """The values of label key in `go tool pprof -tags` output, in the order shown."""
    section = text.split(" %s: " % key, 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\s+\S+ \(\s*[0-9.]+%\): (.+)$", section, re.M)]


class Readme(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, cls.facts = progs.prepare("example", progs.WORK)
        cls.tmp = tempfile.TemporaryDirectory(prefix="heapref-readme-")
        cls.pb = os.path.join(cls.tmp.name, "heapref.pb.gz")
        code, _, err = heapref("analyze", "-o", cls.pb, cls.binary, cls.dump)
        if code != 0:
            raise AssertionError(err)
        with open(README) as f:
            cls.readme = f.read()
        cls.p = profile.read(cls.pb)
        janitor = cls.facts["janitor_function"]
        roots = {c[0] for c in cls.p}
        cls.janitor = janitor + ".scratch" if janitor + ".scratch" in roots else janitor
        cls.expected = ["main.sessions", "main.pool", cls.janitor]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def in_readme(self, command):
        self.assertIn(command, self.readme, "the README does not say `%s`" % command)

    def test_shape_implies_the_ranking(self):
        """Independent of the commands: each root's kept bytes (facts) against the
        others' cumulative values, so the expected order is the only possible one."""
        f = self.facts
        kept = [f["kept_bytes_main.sessions"], f["kept_bytes_main.pool"], f["kept_bytes_janitor"]]
        self.assertEqual(kept, sorted(kept, reverse=True))
        for root, at_least in zip(self.expected, kept):
            self.assertGreaterEqual(profile.cum(self.p, (root,))[1], at_least, root)
        others = [profile.cum(self.p, (r,))[1] for r in {c[0] for c in self.p}
                  if r not in self.expected]
        self.assertLess(max(others), kept[2], "another root keeps more than the janitor")

    def test_tags_rank_the_variables(self):
        self.in_readme("go tool pprof -tags -tagshow=root heapref.pb.gz")
        out, _ = pprof("-tags", "-tagshow=root", self.pb)
        self.assertEqual(tag_ranking(out, "root")[:3], self.expected, out)

    def test_quickstart_shows_the_root_ranking(self):
        """scripts/quickstart.sh's ranking step, run as it is written (its pprof options
        and its `head`) on this profile: the `root` ranking, the three variables first,
        not the goroutine labels (`created_by`, `goroutine` sort before `root`)."""
        with open(QUICKSTART) as f:
            line = next(l for l in f if l.startswith("go tool pprof -tags"))
        m = re.fullmatch(r'go tool pprof (.*) "\$work/example\.pb\.gz" 2>/dev/null \| head -(\d+)\n',
                         line)
        self.assertTrue(m, line)
        out, _ = pprof(*m.group(1).split(), self.pb)
        shown = "".join(out.splitlines(True)[:int(m.group(2))])
        self.assertTrue(shown.startswith(" root: "), shown)
        self.assertNotIn("created_by", shown)
        self.assertEqual(tag_ranking(shown, "root")[:3], self.expected, shown)

    def test_text_report_ranks_the_variables(self):
        self.in_readme("heapref analyze --text BINARY DUMP")
        code, out, err = heapref("analyze", "--text", self.binary, self.dump)
        self.assertEqual(code, 0, err)
        roots = [m.group(1) for m in re.finditer(r"^\s+\d+\s+[0-9.]+%\s+\d+    (\S.*)$", out,
                                                 re.M)]
        self.assertEqual([r for r in roots if r != "<other>"][:3], self.expected, out)

    def test_tagfocus_shows_one_variable(self):
        self.in_readme("go tool pprof -top -cum -unit=MB -tagfocus=root=main.sessions heapref.pb.gz")
        out, _ = pprof("-top", "-cum", "-nodefraction=0", "-unit=byte",
                       "-tagfocus=root=main.sessions", self.pb)
        total = int(re.search(r"Showing nodes accounting for (\d+)B", out).group(1))
        self.assertEqual(total, profile.cum(self.p, ("main.sessions",))[1], out)
        for other in self.expected[1:]:
            self.assertNotIn(" " + other + "\n", out)

    def test_profile_names_its_binary(self):
        out, err = pprof("-top", self.pb)
        self.assertNotIn("Main binary filename not available", out + err)
        self.assertIn("File: " + os.path.basename(self.binary), out)
        raw, _ = pprof("-raw", self.pb)
        mappings = raw.split("\nMappings\n", 1)[1].strip().splitlines()
        build_id = subprocess.run([progs.GO, "tool", "buildid", self.binary],
                                  capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(len(mappings), 1, raw)
        self.assertIn(" %s %s " % (self.binary, build_id), mappings[0].replace("//", "/"))


if __name__ == "__main__":
    unittest.main()
