# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the binary reader (`heapref types`, `heapref vars`) on real
Go binaries, against independent truth: `go tool nm` and the facts the test
program testprogs/binfacts prints (unsafe.Sizeof/Offsetof, interface type
words, the values a local holds while its frame is on the stack in the dump).

Every check runs on a DWARF 5 binary (the machine's Go, 1.25+) and a DWARF 4
one (the toolchain of the go1.24 entry in toolchains.py, or HEAPREF_GO_DWARF4),
both built with -gcflags=all=-N -l so that locals live in the frame.

Environment: HEAPREF (the heapref binary), HEAPREF_WORK (a work directory),
HEAPREF_GO (go command, default "go").
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
import toolchains  # noqa: E402

HEAPREF = os.environ.get("HEAPREF", "heapref")
GO = os.environ.get("HEAPREF_GO", "go")
DWARF4_TOOLCHAIN = os.environ.get("HEAPREF_GO_DWARF4", toolchains.toolchain("go1.24"))
NOOPT = "all=-N -l"


def run(*args):
    p = subprocess.run([HEAPREF] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def fields(line):
    """'name\\tk=v\\tflag' -> (name, {k: v, flag: True})."""
    parts = line.split("\t")
    out = {}
    for part in parts[1:]:
        k, sep, v = part.partition("=")
        out[k] = v if sep else True
    return parts[0], out


def parse_types(text):
    """heapref types output -> {name: [(attrs, {member: attrs})]} (a name may repeat)."""
    types = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("\t"):
            name, attrs = fields(line[1:])
            cur[1][name] = attrs
        else:
            name, attrs = fields(line)
            cur = (attrs, {})
            types.setdefault(name, []).append(cur)
    return types


def nm_symbols(binary):
    p = subprocess.run([GO, "tool", "nm", binary], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300, check=True)
    syms = {}
    for line in p.stdout.decode().splitlines():
        parts = line.split()
        if len(parts) >= 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms


class Variant:
    """One build of binfacts: binary, dump, facts, and what nm says."""

    def __init__(self, work, env):
        self.binary, self.dump, self.facts = progs.prepare(
            "binfacts", work, go=GO, env=env, gcflags=NOOPT)
        self.nm = nm_symbols(self.binary)


@unittest.skipUnless(shutil.which(GO), "no go command")
class BinaryReaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-bin-")
        os.makedirs(cls.work, exist_ok=True)
        cls.variants = {
            5: Variant(cls.work, None),
            4: Variant(cls.work, {"GOTOOLCHAIN": DWARF4_TOOLCHAIN}),
        }

    def each(self):
        return sorted(self.variants.items())

    def test_dwarf_version(self):
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                rc, out, err = run("types", "--summary", v.binary)
                self.assertEqual(rc, 0, err)
                summary = dict(line.split("\t") for line in out.splitlines())
                self.assertEqual(int(summary["dwarf_version"]), version)
                self.assertGreater(int(summary["types"]), 500)
                self.assertGreater(int(summary["functions"]), 500)

    def test_globals_match_nm_and_facts(self):
        names = ["main.gEntry", "main.gCache", "main.gChan", "main.gAny", "main.gArr"]
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                rc, out, err = run("vars", v.binary, "main.g")
                self.assertEqual(rc, 0, err)
                found = {}
                for line in out.splitlines():
                    if line.startswith("global\t"):
                        name, attrs = fields(line[len("global\t"):])
                        found[name] = attrs
                for name in names:
                    self.assertIn(name, found)
                    addr = int(found[name]["addr"], 16)
                    self.assertEqual(addr, v.nm[name], name)
                    self.assertEqual(addr, v.facts["addr_" + name], name)
                self.assertEqual(found["main.gEntry"]["type"], "*main.Entry")
                self.assertEqual(found["main.gCache"]["type"], "map[string]*main.Entry")
                self.assertEqual(found["main.gArr"]["type"], "[3]main.Entry")

    def struct(self, types, name):
        """The structure (not the typedef) called name."""
        for attrs, members in types.get(name, []):
            if attrs.get("kind") == "struct" and members:
                return attrs, members
        self.fail("no struct %s" % name)

    def test_struct_layout_matches_unsafe(self):
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                rc, out, err = run("types", v.binary, "main.")
                self.assertEqual(rc, 0, err)
                types = parse_types(out)
                f = v.facts
                entry, members = self.struct(types, "main.Entry")
                self.assertEqual(int(entry["size"]), f["sizeof_main.Entry"])
                for m in ("Inner", "Next", "Vals", "Score"):
                    self.assertEqual(int(members[m]["offset"]), f["offsetof_main.Entry." + m], m)
                self.assertTrue(members["Inner"].get("embedded"))
                self.assertFalse(members["Next"].get("embedded"))
                self.assertEqual(members["Next"]["type"], "*main.Entry")
                inner, imembers = self.struct(types, "main.Inner")
                self.assertEqual(int(inner["size"]), f["sizeof_main.Inner"])
                self.assertEqual(int(imembers["Name"]["offset"]), f["offsetof_main.Inner.Name"])
                arr = types["[3]main.Entry"][0][0]
                self.assertEqual(int(arr["size"]), f["sizeof_[3]main.Entry"])
                self.assertEqual(arr["len"], "3")
                self.assertEqual(arr["elem"], "main.Entry")
                m = types["map[string]*main.Entry"][0][0]
                self.assertEqual(m["kind"], "map")
                self.assertEqual(m["key"], "string")
                self.assertEqual(m["elem"], "*main.Entry")
                ptr = types["*main.Entry"][0][0]
                self.assertEqual(ptr["kind"], "ptr")
                self.assertEqual(ptr["target"], "main.Entry")

    def test_runtime_type_words(self):
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                for name in ("*main.Entry", "main.Inner"):
                    word = v.facts["type_word_" + name]
                    rc, out, err = run("types", "--rtype", hex(word), v.binary)
                    self.assertEqual(rc, 0, err)
                    self.assertEqual(out.split("\t", 1)[0], name)
                    _, attrs = fields(out.splitlines()[0])
                    self.assertEqual(int(attrs["runtime_type"], 16),
                                     word - v.nm["runtime.types"])
                    # the offset types prints names the same type
                    rc, out, err = run("types", "--rtype", attrs["runtime_type"], v.binary)
                    self.assertEqual((rc, out.split("\t", 1)[0]), (0, name), err)
                # runtime types are aligned: 0x7 is neither an address nor an offset of one
                rc, _, err = run("types", "--rtype", "0x7", v.binary)
                self.assertEqual(rc, 1)
                self.assertIn("no type has its runtime type at 0x7", err)

    def test_local_at_known_pc(self):
        """At main.probe's entry PC (from nm) its local buf lives at a fixed CFA offset."""
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                entry = v.nm["main.probe"]
                rc, out, err = run("vars", "--pc", hex(entry), v.binary)
                self.assertEqual(rc, 0, err)
                lines = out.splitlines()
                self.assertTrue(lines[0].startswith("func\tmain.probe\t"), out)
                local = [l for l in lines if l.startswith("\tlocal\tbuf\t")]
                self.assertEqual(len(local), 1, out)
                _, attrs = fields(local[0].strip())
                self.assertEqual(attrs["type"], "[4]uintptr")
                self.assertRegex(attrs["loc"], r"^cfa-\d+$")
                # a PATTERN keeps only the variables it names, as docs/cli.md says
                self.assertGreater(len(lines), 2, "main.probe has more than buf")
                rc, out, err = run("vars", "--pc", hex(entry), v.binary, "buf")
                self.assertEqual(rc, 0, err)
                self.assertEqual(out.splitlines(), [lines[0], local[0]])

    def test_local_address_in_dump_frame(self):
        """In the dump, main.probe's frame holds buf's values where heapref places it.

        (The address the program printed is no proof: the goroutine's stack may be
        copied before the dump is written.)"""
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                rc, out, err = run("vars", "--dump", v.dump, v.binary, "main.probe")
                self.assertEqual(rc, 0, err)
                lines = out.splitlines()
                self.assertTrue(lines and lines[0].startswith("frame\t"), out)
                _, frame = fields(lines[0])
                self.assertEqual(frame["func"], "main.probe")
                buf = [l for l in lines if l.startswith("\tlocal\tbuf\t")]
                self.assertEqual(len(buf), 1, out)
                _, attrs = fields(buf[0].strip())
                offset = int(attrs["loc"][len("cfa"):])
                self.assertEqual(int(attrs["addr"], 16), int(frame["cfa"], 16) + offset)
                # the frame's memory there holds what probe stored: seed, seed+1, ...
                seed = v.facts["seed_main.probe"]
                words = [int(w, 16) for w in attrs["words"].split(",")]
                self.assertEqual(words, [seed + i for i in range(4)])

    def test_function_listing(self):
        for version, v in self.each():
            with self.subTest(dwarf=version, go=v.facts["go_version"]):
                rc, out, err = run("vars", v.binary, "main.probe")
                self.assertEqual(rc, 0, err)
                self.assertIn("func\tmain.probe\tlow_pc=%#x" % v.nm["main.probe"], out)
                self.assertIn("\tparam\tseed\ttype=int\t", out)
                self.assertIn("\tlocal\tbuf\ttype=[4]uintptr\tloc=cfa-", out)


@unittest.skipUnless(shutil.which(GO), "no go command")
class PositionIndependentTest(unittest.TestCase):
    """A PIE binary is loaded at a random base: globals, read from the dump's point of
    view, must be at the addresses the program itself printed (the load bias comes from
    the dump's data segment against the ELF's .data)."""

    def test_globals_at_run_time_addresses(self):
        work = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-pie-")
        binary, dump, facts = progs.prepare("cache", work, go=GO,
                                            env={"GOFLAGS": "-buildmode=pie"})
        code, out, err = run("vars", binary, "main.cache")
        self.assertEqual(code, 0, err)
        elf_addr = int(fields(out.splitlines()[0])[1]["addr"], 16)
        code, out, err = run("vars", "--dump", dump, binary, "main.cache")
        self.assertEqual(code, 0, err)
        name, attrs = fields([l for l in out.splitlines() if l.startswith("global\t")][0].split("\t", 1)[1])
        self.assertEqual(name, "main.cache")
        self.assertEqual(int(attrs["addr"], 16), facts["addr_main.cache"])
        self.assertNotEqual(elf_addr, facts["addr_main.cache"])  # it really was relocated


@unittest.skipUnless(shutil.which(GO), "no go command")
class StrippedBinaryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-bin-")
        cls.out = os.path.join(cls.work, "binfacts-stripped")

    def build(self, ldflags, name):
        return progs.build("binfacts", os.path.join(self.out, name), go=GO, ldflags=ldflags)

    def test_no_dwarf(self):
        binary = self.build("-w", "w")
        rc, out, err = run("types", binary)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")
        self.assertIn("heapref: %s: no DWARF" % binary, err)
        self.assertIn("ELF symbol", err)
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_no_symbols(self):
        binary = self.build("-s -w", "sw")
        rc, _, err = run("vars", binary)
        self.assertEqual(rc, 1)
        self.assertIn("no DWARF and no symbol table", err)
        self.assertIn("segment and offset", err)


class UsageTest(unittest.TestCase):
    def test_usage_errors(self):
        for args in (["types"], ["vars"], ["types", "--bogus", "x"], ["vars", "--pc"],
                     ["vars", "--pc", "0x1", "--dump", "d", "b"], ["types", "a", "b", "c"]):
            with self.subTest(args=args):
                rc, _, err = run(*args)
                self.assertEqual(rc, 2, err)
                self.assertTrue(err.startswith("heapref: "))

    def test_bad_files(self):
        rc, _, err = run("types", "/nonexistent/binary")
        self.assertEqual(rc, 1)
        self.assertEqual(err, "heapref: /nonexistent/binary: cannot open: No such file or directory\n")
        with tempfile.NamedTemporaryFile(suffix=".bin") as f:
            f.write(b"not an elf file at all")
            f.flush()
            rc, _, err = run("vars", f.name)
            self.assertEqual(rc, 1)
            self.assertEqual(err, "heapref: %s: not an ELF file\n" % f.name)


if __name__ == "__main__":
    unittest.main()
