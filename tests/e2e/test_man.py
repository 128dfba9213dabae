# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the man pages and the bash completion that the build generates
(heapref_manpages, src/cli/manpages.c) from the --help texts of src/cli/usage.c.

docs/cli.md quotes every `heapref help COMMAND` verbatim and test_cli.py checks that it
does; this module checks the pages against the same help, which closes the triangle:
help, docs/cli.md and the man pages cannot drift apart.

  - one page per command `heapref --help` lists, and heapref.1, no other;
  - each heapref-COMMAND.1, its roff stripped, says in order the words of
    `heapref help COMMAND` (but "usage:"), nothing dropped, reordered or added, its
    synopsis under SYNOPSIS and its entries as the items of OPTIONS; its NAME is the
    command's description in `heapref --help` (up to a ';'); heapref.1 says the words of
    `heapref --help` in order, its commands and exit statuses as items, and points at
    every command's page;
  - every '-' of a page is a \- (an option's dash, not a hyphen);
  - `groff -man -ww -z` warns of nothing on any page (skipped without groff);
  - `man -l` renders each page at 80 columns with every option the help names;
  - the completion script, sourced by `bash --norc`, completes commands, each command's
    options (those its help names), the values the help names (--format, --pause-mode,
    --attribution), processes after --pid and files elsewhere.

Environment: HEAPREF (the binary), MANPAGES (the directory the pages were written to;
by default BUILD/man next to HEAPREF).
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
from test_cli import options_of, top_level_entries  # noqa: E402

HEAPREF = progs.HEAPREF
MANPAGES = os.path.abspath(os.environ.get("MANPAGES") or
                           os.path.join(os.path.dirname(HEAPREF), "man"))
COMPLETION = os.path.join(MANPAGES, "heapref.bash-completion")
# Requests and macros that carry no text of their own.
NO_TEXT = {"TP", "PP", "br", "na", "ad", "YS"}
# Macros whose arguments are text: set in one font (B) or alternating fonts (BR).
ONE_FONT = {"B", "I", "SY"}
ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}


def heapref(*args):
    p = subprocess.run([HEAPREF] + list(args), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("heapref %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                          p.stderr))
    return p.stdout


def commands():
    """The commands heapref --help lists, in its order."""
    return list(top_level_entries(heapref("--help")))


def page_path(cmd):
    return os.path.join(MANPAGES, "heapref.1" if cmd is None else "heapref-%s.1" % cmd)


def unescape(text):
    """The text roff prints for text: font changes and zero-width escapes dropped, \\- a
    '-', the unbreakable spaces spaces. Fails on an escape the generator should not write."""
    def one(m):
        known = {"-": "-", "e": "\\", " ": " ", "~": " ", "%": "", "&": ""}
        if m.group(1).startswith("f"):
            return ""
        if m.group(1) not in known:
            raise AssertionError("unexpected roff escape \\%s in %r" % (m.group(1), text))
        return known[m.group(1)]
    return re.sub(r"\\(f[BIRP]|.)", one, text)


def macro_args(rest):
    """The arguments of a macro call: words, or strings in double quotes."""
    return [m.group(1) if m.group(1) is not None else m.group(2)
            for m in re.finditer(r'"([^"]*)"|(\S+)', rest)]


class Page:
    """A generated page: its sections (heading -> text, in order) and the tags of its
    .TP items by section."""

    def __init__(self, path):
        with open(path) as f:
            self.source = f.read()
        self.sections, self.tags = {}, {}
        section, tag_next = None, False
        for line in self.source.splitlines():
            if line.startswith(('.\\"', "'\\\"")):
                continue
            if line.startswith((".", "'")):
                name, _, rest = line[1:].partition(" ")
                if name == "TH":
                    continue
                if name == "SH":
                    section = " ".join(macro_args(rest))
                    if section in self.sections:
                        raise AssertionError("%s: section %s twice" % (path, section))
                    self.sections[section], self.tags[section] = "", []
                    continue
                if name == "TP":
                    tag_next = True
                if name in NO_TEXT:
                    if rest:
                        raise AssertionError("%s: .%s with arguments" % (path, name))
                    continue
                args = [unescape(a) for a in macro_args(rest)]
                if name in ONE_FONT:
                    text = " ".join(args)
                elif name in ALTERNATING:
                    text = "".join(args)
                else:
                    raise AssertionError("%s: unexpected request .%s" % (path, name))
            else:
                text = unescape(line)
            if section is None:
                raise AssertionError("%s: text before the first section: %r" % (path, line))
            if tag_next:  # the first line of text after .TP
                self.tags[section].append(" ".join(text.split()))
                tag_next = False
            self.sections[section] += text + "\n"

    def words(self, *sections):
        """The words of the given sections (all if none), in order."""
        names = sections or self.sections
        return [w for s in self.sections if s in names for w in self.sections[s].split()]


def help_words(cmd):
    """The words of heapref help CMD, but its first, "usage:"."""
    words = heapref("help", cmd).split()
    assert words[0] == "usage:", words[:3]
    return words[1:]


def synopsis_words(cmd):
    """The words of the usage lines of heapref help CMD: the first and those indented by
    more than two spaces after it."""
    lines = heapref("help", cmd).splitlines()
    n = 1
    while n < len(lines) and re.match(r"^ {3}", lines[n]):
        n += 1
    return " ".join(lines[:n]).split()[1:]


def entry_terms(cmd):
    """The terms of heapref help CMD's entries: "--pid PID", "DUMP": an option, or an
    operand in capitals before a description in column 18."""
    terms = []
    for line in heapref("help", cmd).splitlines()[1:]:
        described = len(line) > 18 and line[17] == " " and line[18] != " "
        if line.startswith("  -"):
            terms.append(" ".join((line[2:18] if described else line[2:]).split()))
        elif described and re.match(r"^  [A-Z_]+ +$", line[:18]):
            terms.append(line[2:18].strip())
    return terms


def summary(cmd):
    """The command's description in heapref --help, its lines joined, up to a ';'."""
    lines = top_level_entries(heapref("--help"))[cmd].splitlines()
    first = re.match(r"^  [a-z]+(?: {2,}(\S.*))?", lines[0]).group(1)
    desc = ([first] if first else []) + [l.strip() for l in lines[1:]
                                         if l.startswith(" " * 16)]
    return " ".join(desc).split(";")[0]


def is_subsequence(needle, haystack):
    """The index in needle of the first word not found, in order, in haystack; None if
    every one is."""
    it = iter(haystack)
    for i, w in enumerate(needle):
        if not any(w == h for h in it):
            return i
    return None


class PagesTest(unittest.TestCase):
    def test_one_page_per_command(self):
        self.assertTrue(os.path.isdir(MANPAGES), MANPAGES)
        want = {"heapref.1"} | {"heapref-%s.1" % c for c in commands()}
        have = {f for f in os.listdir(MANPAGES) if f.endswith(".1")}
        self.assertEqual(have, want)
        self.assertEqual(len(commands()), 14)

    def test_command_pages_say_the_help(self):
        for cmd in commands():
            with self.subTest(command=cmd):
                page = Page(page_path(cmd))
                sections = list(page.sections)
                self.assertEqual(sections[:2], ["NAME", "SYNOPSIS"])
                self.assertEqual(sections[-1], "SEE ALSO")
                self.assertTrue(set(sections[2:-1]) <= {"DESCRIPTION", "OPTIONS"}, sections)
                # everything but NAME and SEE ALSO is the help, word for word
                body = page.words(*sections[1:-1])
                self.assertEqual(body, help_words(cmd))
                self.assertEqual(page.words("SYNOPSIS"), synopsis_words(cmd))
                self.assertEqual(page.tags.get("OPTIONS", []), entry_terms(cmd))
                self.assertEqual(page.words("NAME"),
                                 ["heapref-%s" % cmd, "-"] + summary(cmd).split())
                self.assertEqual(page.words("SEE ALSO"), ["heapref(1)"])
        # the entries the structure check relies on are there
        self.assertIn("--pause-mode MODE", entry_terms("analyze"))
        self.assertIn("DUMP", entry_terms("object"))
        self.assertIn("--threshold PCT", entry_terms("suspects"))

    def test_heapref_page_says_the_help(self):
        page = Page(page_path(None))
        top = heapref("--help")
        self.assertEqual(list(page.sections), ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS",
                                               "EXIT STATUS", "SEE ALSO"])
        self.assertEqual(page.words("NAME"),
                         "heapref - which variables keep a Go program's memory alive".split())
        # the help's labels are the page's headings; the exit statuses are items whose
        # words args.h's meanings follow, so a ',' between two may become a ';'
        text = re.sub(r"^(usage|commands|exit status):", "", top, flags=re.M)
        needle = [w.rstrip(",;") for w in text.split()]
        haystack = [w.rstrip(",;") for w in page.words()]
        missing = is_subsequence(needle, haystack)
        self.assertIsNone(missing, "heapref.1 lacks, in order: %s" %
                          " ".join(needle[missing:missing + 12] if missing is not None else []))
        self.assertEqual(page.tags["COMMANDS"], commands())
        statuses = " ".join(top.split("\nexit status:")[1].split())
        self.assertEqual(page.tags["EXIT STATUS"], re.findall(r"(?:^|, )(\d) ", statuses))
        self.assertEqual(page.tags["EXIT STATUS"], ["0", "1", "2", "3", "4"])
        self.assertEqual(page.words("SEE ALSO"),
                         ["heapref-%s(1)," % c for c in commands()] + ["go", "tool", "pprof"])
        commands_text = " ".join(page.words("COMMANDS"))
        for cmd in commands():
            self.assertIn(" See heapref-%s(1). " % cmd, commands_text + " ")

    def test_dashes_are_minus_signs(self):
        # a '-' is a hyphen to roff (U+2010 in UTF-8 on some systems): options need \-
        for cmd in [None] + commands():
            with open(page_path(cmd)) as f:
                self.assertEqual(re.findall(r".{0,20}(?<!\\)-.{0,20}", f.read()), [],
                                 page_path(cmd))

    def test_groff_warns_of_nothing(self):
        if not shutil.which("groff"):
            self.skipTest("no groff")
        for cmd in [None] + commands():
            with self.subTest(page=os.path.basename(page_path(cmd))):
                p = subprocess.run(["groff", "-man", "-ww", "-z", page_path(cmd)],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual((p.returncode, p.stderr), (0, ""))

    def test_man_renders_every_option(self):
        if not shutil.which("man"):
            self.skipTest("no man")
        env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
        for cmd in [None] + commands():
            with self.subTest(page=os.path.basename(page_path(cmd))):
                p = subprocess.run(["man", "-l", page_path(cmd)], capture_output=True,
                                   text=True, env=env, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertNotIn("warning", p.stderr)
                out = p.stdout
                self.assertIn("heapref" if cmd is None else "heapref-" + cmd, out)
                help_text = heapref("help", cmd) if cmd else heapref("--help")
                for opt in sorted(options_of(help_text)):
                    # whole, neither hyphenated nor set with a Unicode hyphen or minus
                    self.assertRegex(out, r"(?<![\w-])%s(?![\w-])" % re.escape(opt))
                self.assertTrue(all(len(l) <= 80 for l in out.splitlines()))


def complete(*words, cwd=None):
    """What the completion script offers for the command line words, the last being the
    word completed: its completion function's COMPREPLY, in bash --norc."""
    prog = ('source "$1" || exit 9; shift; '
            'spec=$(complete -p heapref) || exit 8; '
            'fn=${spec#*-F }; fn=${fn%% *}; '
            'COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
            'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; '
            '"$fn" heapref "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; '
            'printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "--norc", "-c", prog, "bash", COMPLETION] + list(words),
                       capture_output=True, text=True, cwd=cwd, timeout=60)
    if p.returncode != 0 or p.stderr:
        raise AssertionError("completing %r: exit %d: %s" % (words, p.returncode, p.stderr))
    return [w for w in p.stdout.split("\n") if w]


class CompletionTest(unittest.TestCase):
    def test_commands(self):
        self.assertEqual(complete("heapref", "an"), ["analyze"])
        self.assertEqual(sorted(complete("heapref", "")), sorted(commands()))
        self.assertEqual(complete("heapref", "help", "ret"), ["retained"])
        self.assertEqual(sorted(complete("heapref", "help", "")), sorted(commands()))

    def test_options(self):
        self.assertEqual(complete("heapref", "analyze", "--pa"), ["--pause-mode"])
        # each command's options are those its help names, and --help (after heapref
        # help comes a command)
        for cmd in set(commands()) - {"help"}:
            with self.subTest(command=cmd):
                self.assertEqual(set(complete("heapref", cmd, "-")),
                                 options_of(heapref("help", cmd)) | {"--help"})

    def test_values(self):
        self.assertEqual(sorted(complete("heapref", "analyze", "--pause-mode", "")),
                         ["auto", "stop"])
        self.assertEqual(sorted(complete("heapref", "why", "--pause-mode", "s")), ["stop"])
        # --pause-mode=: readline makes "=" a word of its own
        self.assertEqual(sorted(complete("heapref", "goroutines", "--pause-mode", "=")),
                         ["auto", "stop"])
        self.assertEqual(sorted(complete("heapref", "suspects", "--format", "")),
                         sorted(["text", "json", "html"]))
        self.assertEqual(sorted(complete("heapref", "retained", "--format", "")),
                         ["text", "tsv"])
        self.assertEqual(sorted(complete("heapref", "analyze", "--attribution", "")),
                         ["dominator", "first"])

    def test_pids(self):
        self.assertIn(str(os.getpid()), complete("heapref", "retained", "--pid", ""))
        self.assertTrue(all(w.isdigit() for w in complete("heapref", "why", "--pid", "1")))

    def test_files(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("leak.hdump", "leak.bin", "other"):
                open(os.path.join(d, name), "w").close()
            want = ["leak.bin", "leak.hdump"]
            self.assertEqual(sorted(complete("heapref", "analyze", "le", cwd=d)), want)
            self.assertEqual(sorted(complete("heapref", "analyze", "--text", "le", cwd=d)),
                             want)
            self.assertEqual(sorted(complete("heapref", "analyze", "-o", "le", cwd=d)), want)
            self.assertEqual(complete("heapref", "analyze", "--save-core", "ot", cwd=d),
                             ["other"])
            # after an option that takes a number, nothing: not the files
            self.assertEqual(complete("heapref", "analyze", "--max-depth", "", cwd=d), [])


if __name__ == "__main__":
    unittest.main()
