# SPDX-License-Identifier: Apache-2.0
"""`heapref hprof`: the heap of every scenario program as a Java hprof file, read back
by a real hprof reader.

The reader is the NetBeans profiler's heap library (the engine of VisualVM's heap
walker), from Maven Central (scripts/install-deps.sh --tests fetches it into ~/.m2);
hprof_reader/HprofCheck.java, compiled here, asks it what it parsed. For the dump of
each program of progs.PROGRAMS (built by the machine's Go):
  - the objects the reader finds (the goroutines' thread objects apart) and their bytes
    (fields, or elements, as the reader parsed them) are what reach.py, an independent
    reader of the dump, finds reachable: heapref's own totals, by its invariant;
  - the reader finds a path to a GC root for every one of them;
  - there is one thread object per goroutine of the dump;
  - no class name is mangled by the reader (a Go name it took for an array descriptor).
For testprogs/cache, from its facts: the class main.Entry has one instance per entry,
their field id holds 0 .. entries-1, and the reader's path from an Entry to its GC root
ends at the sticky-class root named after the global main.cache. For testprogs/goroutine,
the path from a main.Node ends at a Java-frame root of the worker goroutine's thread, in
the frame of main.worker.

Without the reader (or java/javac) the test skips, except in CI (CI=true), where it fails.
Environment: HEAPREF, HEAPREF_WORK (as every e2e test); HPROF_READER_JAR to use another
copy of the library.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dumpfmt  # noqa: E402
import progs  # noqa: E402
import reach  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
READER_ARTIFACT = ("org/netbeans/modules/org-netbeans-lib-profiler/RELEASE190/"
                   "org-netbeans-lib-profiler-RELEASE190.jar")
READER_JAR = os.environ.get("HPROF_READER_JAR") or os.path.join(
    os.path.expanduser("~"), ".m2", "repository", READER_ARTIFACT)
CHECKER = os.path.join(HERE, "hprof_reader", "HprofCheck.java")


def missing_reader():
    if not os.path.exists(READER_JAR):
        return "no hprof reader at %s (scripts/install-deps.sh --tests fetches it)" % READER_JAR
    for tool in ("java", "javac"):
        if not shutil.which(tool):
            return "no %s on PATH (scripts/install-deps.sh --tests installs a JDK)" % tool
    return None


def skip_reason():
    """Why the test cannot run here; None in CI, where a missing reader is a failure."""
    if os.environ.get("CI") == "true":
        return None
    return missing_reader()


@unittest.skipIf(skip_reason(), skip_reason())
class Hprof(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = missing_reader()
        if why:
            raise AssertionError(why)
        cls.tmp = tempfile.mkdtemp(prefix="heapref-hprof-")
        classes = os.path.join(cls.tmp, "classes")
        subprocess.run(["javac", "-d", classes, "-cp", READER_JAR, CHECKER], check=True,
                       timeout=300)
        cls.classpath = READER_JAR + os.pathsep + classes

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def export_and_read(self, name, *queries, convert=None):
        """(the reader's report, the parsed dump) of program name's heap; with convert,
        of its dump rewritten by convert (bytes -> bytes) first."""
        binary, dump, facts = progs.prepare(name, progs.WORK)
        # a fresh directory each time: the reader caches its index next to the file
        tmp = tempfile.mkdtemp(prefix=name, dir=self.tmp)
        out, given = os.path.join(tmp, "heap.hprof"), dump
        if convert:
            given = os.path.join(tmp, "converted.dump")
            with open(dump, "rb") as f, open(given, "wb") as g:
                g.write(convert(f.read()))
        rc, _, err = progs.heapref("hprof", "-o", out, binary, given)
        self.assertEqual(rc, 0, err)
        p = subprocess.run(["java", "-Xmx2g", "-cp", self.classpath, "HprofCheck", out] +
                           list(queries), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        return json.loads(p.stdout), reach.load(dump), facts

    def test_every_program(self):
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                got, d, _ = self.export_and_read(name)
                r = reach.reachable(d)
                self.assertEqual((got["objects"], got["bytes"]), (r.objects, r.bytes))
                self.assertEqual(got["unrooted"], 0, "objects with no path to a GC root")
                self.assertEqual(got["threads"], len(d.goroutines))
                # a Go name read as a JVM array descriptor comes out as "]..." or "...;"
                self.assertEqual([c for c in got["classes"] if c[0] in "];" or c[-1] == ";"],
                                 [])

    def test_cache(self):
        got, _, facts = self.export_and_read("cache", "--field", "main.Entry", "id",
                                             "--path", "main.Entry")
        self.assertIn("main.Entry", got["classes"])
        self.assertIn("main.cache", got["classes"])
        self.assertEqual(sorted(int(v) for v in got["field"]), list(range(facts["entries"])))
        path = got["path"]
        self.assertEqual(path["classes"][0], "main.Entry")
        self.assertEqual((path["root_kind"], path["root_class"]), ("sticky class", "main.cache"))

    def test_goroutine_frame_root(self):
        got, _, facts = self.export_and_read("goroutine", "--path", "main.Node")
        self.assertIn("main.Node", got["classes"])
        path = got["path"]
        self.assertEqual(path["root_kind"], "Java frame")
        self.assertTrue(path["root_thread"].startswith("goroutine %d " % facts["worker_goid"]),
                        path["root_thread"])
        self.assertEqual(path["root_method"], facts["worker_function"])

    def test_prerelease_root_pointers(self):
        """The pre-release go1.3 layout gives roots as pointers: stack roots are still
        Java-frame roots of their goroutine's thread, in their frame (the worker's 1 MiB
        buffer: its objects are typed by the records only, so by its size); nothing is
        unrooted."""
        binary, dump, facts = progs.prepare("goroutine", progs.WORK)
        got, d, facts = self.export_and_read(
            "goroutine", "--path-sized", "byte[]", str(facts["buf_size"]),
            convert=dumpfmt.convert_prerelease)
        r = reach.reachable(d)
        self.assertEqual((got["objects"], got["bytes"]), (r.objects, r.bytes))
        self.assertEqual(got["unrooted"], 0, "objects with no path to a GC root")
        path = got["path"]
        self.assertEqual(path["root_kind"], "Java frame")
        self.assertTrue(path["root_thread"].startswith("goroutine %d " % facts["worker_goid"]),
                        path["root_thread"])
        self.assertEqual(path["root_method"], facts["worker_function"])

    def test_unwritable_output_leaves_nothing(self):
        binary, dump, _ = progs.prepare("cache", progs.WORK)
        out = os.path.join(self.tmp, "no-such-dir", "heap.hprof")
        rc, _, err = progs.heapref("hprof", "-o", out, binary, dump)
        self.assertEqual(rc, 3)
        self.assertIn("heap.hprof", err)
        self.assertFalse(os.path.exists(os.path.dirname(out)))


if __name__ == "__main__":
    unittest.main()
