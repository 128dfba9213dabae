# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests: does the dump go with the binary, and does heapref know their Go?

`heapref analyze` refuses (exit status 4) a dump that the binary cannot have written:
a different Go build version, or data/bss segments of other sizes or at another
distance from each other than the ELF's .data and .bss. `--force` goes on with a
warning. A Go release outside the tested range (go1.19 to go1.27) is warned about and
analysed anyway.

The expectations come from outside heapref: the Go version the program reports
(runtime.Version(), in its facts), the dump's segments as parsed by reach.py, and the
ELF section headers read here with struct.

Environment: HEAPREF, HEAPREF_WORK (as test_analyze.py).
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
import reach  # noqa: E402

HEAPREF = os.environ.get("HEAPREF", os.path.join(progs.TESTPROGS, "..", "build", "heapref"))
WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")
# An older toolchain for the version comparison; CI installs it (scripts/install-deps.sh).
OTHER_TOOLCHAIN = os.environ.get("HEAPREF_PAIRING_TOOLCHAIN", "go1.22.12")
EXIT_MISMATCH = 4


def elf_sections(path):
    """{name: (addr, size)} from the section headers of a little-endian ELF64 file."""
    with open(path, "rb") as f:
        elf = f.read()
    assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not a little-endian ELF64"
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]   # sh_offset of the section-name table

    def name(off):
        end = elf.index(b"\0", names_at + off)
        return elf[names_at + off:end].decode()
    return {name(h[0]): (h[3], h[5]) for h in headers}


def segment(records):
    """(addr, size) of a dump's data or bss record."""
    return records[0].addr, records[0].size


def patch_version(src, dst, old, new):
    """Copies src to dst with every occurrence of the bytes old replaced by new (same length)."""
    assert len(old) == len(new)
    with open(src, "rb") as f:
        data = f.read()
    assert old in data, "%s does not hold %r" % (src, old)
    with open(dst, "wb") as f:
        f.write(data.replace(old, new))
    os.chmod(dst, 0o755)


class PairingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.globals = progs.prepare("globals", WORK)
        cls.cache = progs.prepare("cache", WORK)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="heapref-pairing-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def analyze(self, binary, dump, *extra):
        out = os.path.join(self.tmp, "out.pb.gz")
        p = subprocess.run([HEAPREF, "analyze", "-o", out] + list(extra) + [binary, dump],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        return p.returncode, p.stderr.decode(), out

    def test_matching_pair_is_analysed(self):
        binary, dump, _ = self.cache
        rc, err, _ = self.analyze(binary, dump)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("was not written by", err)
        self.assertNotIn("warning", err)

    def test_other_program_is_refused_naming_the_segments(self):
        binary, _, _ = self.globals
        _, dump, _ = self.cache
        d = reach.load(dump)
        sections = elf_sections(binary)
        data_addr, data_size = segment(d.data)
        bss_addr, bss_size = segment(d.bss)
        # small programs of one toolchain often share segment sizes: expect what differs
        self.assertNotEqual((data_size, bss_size), (sections[".data"][1], sections[".bss"][1]))
        rc, err, out = self.analyze(binary, dump)
        self.assertEqual(rc, EXIT_MISMATCH, err)
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn("%s was not written by %s" % (dump, binary), lines[0])
        for seg, size in (("data", data_size), ("bss", bss_size)):
            said = ("the dump's %s segment is %d bytes, the binary's .%s section %d"
                    % (seg, size, seg, sections["." + seg][1]))
            if size != sections["." + seg][1]:
                self.assertIn(said, lines[0])
            else:
                self.assertNotIn("the dump's %s segment" % seg, lines[0])
        self.assertIn("--force", lines[0])
        self.assertFalse(os.path.exists(out))

    def test_program_of_the_same_layout_is_refused(self):
        """cache and chan: same toolchain, same data and bss sizes, main.main at the same
        address; their globals and frames still differ."""
        _, dump, _ = self.cache
        binary, _, _ = progs.prepare("chan", WORK)
        d = reach.load(dump)
        sections = elf_sections(binary)
        same_sizes = (segment(d.data)[1], segment(d.bss)[1]) == (sections[".data"][1],
                                                                 sections[".bss"][1])
        rc, err, _ = self.analyze(binary, dump)
        self.assertEqual(rc, EXIT_MISMATCH, err)
        self.assertIn("was not written by", err)
        if same_sizes:
            self.assertNotIn("segment is", err)

    def test_refusal_leaves_an_existing_output_untouched(self):
        binary, _, _ = self.globals
        _, dump, _ = self.cache
        out = os.path.join(self.tmp, "out.pb.gz")
        with open(out, "wb") as f:
            f.write(b"previous profile")
        rc, err, _ = self.analyze(binary, dump)
        self.assertEqual(rc, EXIT_MISMATCH, err)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"previous profile")
        self.assertEqual([n for n in os.listdir(self.tmp) if n != "out.pb.gz"], [])
        os.unlink(out)

    def test_force_analyses_anyway_with_a_warning(self):
        binary, _, _ = self.globals
        _, dump, _ = self.cache
        rc, err, out = self.analyze(binary, dump, "--force")
        self.assertEqual(rc, 0, err)
        self.assertIn("heapref: warning: %s does not look written by %s" % (dump, binary), err)
        self.assertTrue(os.path.getsize(out) > 0)
        # the totals stay the bitmap reachability, whatever names the wrong binary gives
        r = reach.reachable(reach.load(dump))
        self.assertIn("reachable: %d objects, %d bytes" % (r.objects, r.bytes), err)

    def test_other_go_release_is_refused_naming_both_versions(self):
        binary, _, facts = self.cache
        _, old_dump, old_facts = progs.prepare("cache", WORK, env={"GOTOOLCHAIN": OTHER_TOOLCHAIN})
        self.assertNotEqual(facts["go_version"], old_facts["go_version"])
        rc, err, _ = self.analyze(binary, old_dump)
        self.assertEqual(rc, EXIT_MISMATCH, err)
        self.assertIn("the dump was written by %s, the binary built by %s"
                      % (old_facts["go_version"], facts["go_version"]), err)

    def patched_pair(self, new_version):
        """The cache program's binary and dump, both claiming to be Go new_version."""
        binary, dump, facts = self.cache
        old = facts["go_version"].encode()
        new = new_version.encode()[:len(old)].ljust(len(old), b"0")
        pb = os.path.join(self.tmp, "cache-%s" % new.decode())
        pd = pb + ".dump"
        patch_version(binary, pb, old, new)
        patch_version(dump, pd, old, new)
        return pb, pd, new.decode()

    def test_newer_go_is_warned_about_once_and_analysed(self):
        binary, dump, version = self.patched_pair("go1.99.8")
        rc, err, _ = self.analyze(binary, dump)
        self.assertEqual(rc, 0, err)
        warnings = [l for l in err.splitlines() if "warning" in l]
        self.assertEqual(len(warnings), 1, err)
        self.assertIn("%s: %s is newer than the Go releases heapref is tested with "
                      "(go1.19 to go1.27)" % (dump, version), warnings[0])
        r = reach.reachable(reach.load(dump))
        self.assertIn("reachable: %d objects, %d bytes" % (r.objects, r.bytes), err)

    def test_older_go_is_warned_about(self):
        binary, dump, version = self.patched_pair("go1.10.8")
        rc, err, _ = self.analyze(binary, dump)
        self.assertEqual(rc, 0, err)
        self.assertIn("%s is older than the Go releases heapref is tested with" % version, err)


if __name__ == "__main__":
    unittest.main()
