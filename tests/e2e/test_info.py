# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `heapref info` and `heapref object` on real dumps.

Every program in testprogs/ is built with the machine's Go, run to write a real heap
dump, and the dump is read by the real heapref binary. The figures checked come from
outside heapref: `go env GOVERSION`, and the facts each program prints about what it
allocated (counts and sizes it computed itself, addresses from unsafe.Pointer).

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (a cache directory for
built programs and dumps).
"""

import os
import re
import subprocess
import tempfile
import unittest

import progs
import reach
import toolchains

HEAPREF = os.environ.get("HEAPREF", os.path.join(progs.TESTPROGS, "..", "build", "heapref"))
WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")


def heapref(*args, check=True):
    p = subprocess.run([HEAPREF] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    out, err = p.stdout.decode(), p.stderr.decode()
    if check and p.returncode != 0:
        raise AssertionError("heapref %s exited %d: %s" % (" ".join(map(str, args)),
                                                           p.returncode, err))
    return p.returncode, out, err


def parse_info(text):
    """The summary as a dict of its 'label: value' lines plus its tables."""
    info = {"record table": {}, "size table": [], "goroutine table": []}
    section = None
    for line in text.splitlines():
        if not line.startswith("  "):
            section = None
            label, _, value = line.partition(":")
            info[label.strip()] = value.strip()
            if label in ("records", "object sizes", "goroutines"):
                section = label
            continue
        fields = line.split()
        if section == "records":
            info["record table"][" ".join(fields[:-1])] = int(fields[-1])
        elif section == "object sizes" and fields[0] != "size":
            info["size table"].append((fields[0], int(fields[1]), int(fields[2])))
        elif section == "goroutines":
            m = re.match(r"\s+(\S+)\s+(\d+)(?:\s+\((.*)\))?$", line)
            info["goroutine table"].append((m.group(1), int(m.group(2)), m.group(3)))
    return info


class InfoOnEveryProgram(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.go_version = progs.go_version()
        cls.runs = {name: progs.prepare(name, WORK) for name in progs.PROGRAMS}

    def info(self, name):
        _, dump, facts = self.runs[name]
        _, out, _ = heapref("info", dump)
        return parse_info(out), facts

    def test_version_and_arch(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                info, facts = self.info(name)
                self.assertEqual(info["go version"], self.go_version)
                self.assertEqual(info["go version"], facts["go_version"])
                self.assertTrue(info["arch"].startswith(facts["goarch"] + " (8-byte pointers, little-endian)"))
                self.assertEqual(info["format"], "go1.7 heap dump")

    def test_objects_at_least_what_the_program_keeps(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                info, facts = self.info(name)
                m = re.match(r"(\d+) objects, (\d+) bytes, (\d+) pointer words", info["objects"])
                objects, nbytes = int(m.group(1)), int(m.group(2))
                self.assertGreaterEqual(objects, facts["kept_objects"])
                self.assertGreaterEqual(nbytes, facts["kept_bytes"])
                self.assertEqual(objects, info["record table"]["object"])
                # the histogram partitions the objects
                self.assertEqual(sum(c for _, c, _ in info["size table"]), objects)
                self.assertEqual(sum(b for _, _, b in info["size table"]), nbytes)

    def test_memstats_agree_with_the_objects(self):
        # After runtime.GC() the dump holds every allocated slot, HeapAlloc/HeapObjects
        # count the same slots (read just before the dump). They differ by the runtime's
        # own slack (slots the dump lists as allocated in cached spans: measured at
        # 100-400 objects, under 8%), never by whole spans of lost or doubled records.
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                info, _ = self.info(name)
                m = re.match(r"HeapAlloc (\d+) bytes in (\d+) objects; the dump holds (\d+) bytes in (\d+) objects",
                             info["memstats"])
                heap_alloc, heap_objects, nbytes, objects = map(int, m.groups())
                self.assertLessEqual(abs(heap_alloc - nbytes), max(128 << 10, heap_alloc // 10))
                self.assertLessEqual(abs(heap_objects - objects), max(512, heap_objects // 10))

    def test_blocked_goroutine_and_segments(self):
        info, _ = self.info("goroutine")
        groups = info["goroutine table"]
        waiting = {reason: n for status, n, reason in groups if status == "waiting"}
        self.assertGreaterEqual(waiting.get("chan receive", 0), 1)
        self.assertEqual(sum(n for _, n, _ in groups), int(info["goroutines"]))
        self.assertEqual(int(info["goroutines"]), info["record table"]["goroutine"])
        self.assertRegex(info["data segment"], r"^0x[0-9a-f]+, [1-9]\d* bytes, [1-9]\d* pointer words$")
        self.assertRegex(info["bss segment"], r"^0x[0-9a-f]+, [1-9]\d* bytes, [1-9]\d* pointer words$")
        self.assertGreater(info["record table"]["stack frame"], 0)

    def test_finalizers(self):
        info, facts = self.info("finalizer")
        m = re.match(r"(\d+) registered, (\d+) queued", info["finalizers"])
        registered, queued = int(m.group(1)), int(m.group(2))
        self.assertGreaterEqual(registered + queued, 1)
        self.assertEqual(registered, info["record table"]["finalizer"])
        self.assertEqual(queued, info["record table"]["queued finalizer"])

    def test_object_lookup_of_known_pointers(self):
        # Every heap pointer a program printed lies inside an object of the index,
        # interior pointers included (unsafecast's &echo().B).
        checked = 0
        for name in progs.PROGRAMS:
            _, dump, facts = self.runs[name]
            ptrs = {k: v for k, v in facts.items() if k.startswith("ptr_") and isinstance(v, int) and v}
            if not ptrs:
                continue
            _, out, _ = heapref("object", dump, *["0x%x" % v for v in ptrs.values()])
            lines = out.splitlines()
            for (key, addr), line in zip(ptrs.items(), [l for l in lines if l.startswith("0x")]):
                with self.subTest(program=name, fact=key):
                    m = re.match(r"0x([0-9a-f]+): object 0x([0-9a-f]+)\+(\d+), (\d+) bytes", line)
                    self.assertIsNotNone(m, line)
                    self.assertEqual(int(m.group(1), 16), addr)
                    base, off, size = int(m.group(2), 16), int(m.group(3)), int(m.group(4))
                    self.assertEqual(base + off, addr)
                    self.assertLess(off, size)
                    checked += 1
        self.assertGreater(checked, 5)

    def test_object_lookup_in_data_and_bss(self):
        # static/main.go's main.registry points to a Registry the compiler put in data
        # or bss, main.alias to the global main.target: not heap objects, and `object`
        # says which segment holds them, at which offset (from reach.py's segments).
        _, dump, facts = self.runs["static"]
        d = reach.load(dump)
        addrs = [facts["sptr_main.registry"], facts["sptr_main.alias"]]
        _, out, _ = heapref("object", dump, *["0x%x" % a for a in addrs])
        lines = [l for l in out.splitlines() if l.startswith("0x")]
        self.assertEqual(len(lines), 2, out)
        for addr, line in zip(addrs, lines):
            segs = [(n, s) for n, recs in (("data", d.data), ("bss", d.bss)) for s in recs
                    if s.addr <= addr < s.addr + s.size]
            self.assertEqual(len(segs), 1, "0x%x in no data/bss segment" % addr)
            name, seg = segs[0]
            self.assertTrue(line.startswith("0x%x: not in any heap object; in the %s segment at "
                                            "+0x%x " % (addr, name, addr - seg.addr)), line)


class InfoOnOtherToolchains(unittest.TestCase):
    """Dumps written by the other entries of the matrix (toolchains.py): older Go releases
    fetched as toolchain modules (before allocation headers, bucket maps, swiss maps,
    DWARF 4 and 5) and linux/arm64 under qemu. An entry that cannot be had fails the test
    rather than skipping it."""

    ENTRIES = [e for e in toolchains.MATRIX if e.env]

    def test_version_and_objects(self):
        for entry in self.ENTRIES:
            for name in ("cache", "list", "goroutine"):
                with self.subTest(entry=entry.name, program=name):
                    _, dump, facts = progs.prepare(name, WORK, env=entry.env)
                    _, out, _ = heapref("info", dump)
                    info = parse_info(out)
                    self.assertEqual(info["go version"], facts["go_version"])
                    self.assertTrue(toolchains.expected_version_ok(entry, facts["go_version"]),
                                    "%s wants %s, the program says %s" % (
                                        entry.name, entry.toolchain or toolchains.MACHINE_GO,
                                        facts["go_version"]))
                    goarch = entry.goarch or toolchains.host_goarch()
                    self.assertEqual(facts["goarch"], goarch)
                    self.assertTrue(info["arch"].startswith(
                        goarch + " (8-byte pointers, little-endian)"), info["arch"])
                    m = re.match(r"(\d+) objects, (\d+) bytes", info["objects"])
                    self.assertGreaterEqual(int(m.group(1)), facts["kept_objects"])
                    self.assertGreaterEqual(int(m.group(2)), facts["kept_bytes"])


class InfoOnBadInput(unittest.TestCase):
    def test_truncated_real_dump(self):
        _, dump, _ = progs.prepare("cache", WORK)
        data = open(dump, "rb").read()
        with tempfile.TemporaryDirectory() as d:
            for cut in (len(data) // 2, len(data) - 1, 10):
                path = os.path.join(d, "cut.dump")
                with open(path, "wb") as f:
                    f.write(data[:cut])
                code, out, err = heapref("info", path, check=False)
                self.assertEqual(code, 1)
                self.assertEqual(out, "")
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertRegex(err, r"^heapref: %s: byte \d+: " % re.escape(path))

    def test_missing_file_directory_and_usage(self):
        code, _, err = heapref("info", "/nonexistent/x.dump", check=False)
        self.assertEqual(code, 1)
        self.assertIn("/nonexistent/x.dump: cannot open: No such file or directory", err)
        with tempfile.TemporaryDirectory() as d:
            code, _, err = heapref("info", d, check=False)
            self.assertEqual(code, 1)
            self.assertIn("is a directory", err)
        self.assertEqual(heapref("info", check=False)[0], 2)
        self.assertEqual(heapref("frobnicate", check=False)[0], 2)


if __name__ == "__main__":
    unittest.main()
