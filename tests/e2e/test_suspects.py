# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `heapref suspects`: the leak suspects of testprogs/suspects.

Each scenario of the program builds one leak whose holder, shape and element count
the program knows and prints as facts (a map of 7000 sessions, a slice of 6400
events, a list of 5000 nodes, a channel with 3000 jobs buffered, a registry shared by
two globals, 4000 records a map and a slice share (the records the pile), the records of one goroutine among 40, and twenty globals none of which
reaches the threshold). The suspect heapref names must be that holder, its
accumulation point that container with that count, and what piled up must hold the
program's elements. The text page and the JSON say the same; the retained view shows
the shared memory as a group of its two roots and names objects by their real type.
The Go matrix entries on both sides of the map change (bucket maps up to 1.23, swiss
maps after) and of allocation headers (1.22) run the map and list scenarios too. The
report is the same with one thread as with the dominator tree made beside the scan,
kept (map) or made again (static: a map only the heap walk finds, behind a Registry
the compiler put in the data segment).

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import bisect
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402
import reach  # noqa: E402
import toolchains  # noqa: E402

heapref = progs.heapref


def prepare(scenario, env=None):
    return progs.prepare("suspects", progs.WORK, args=("-scenario", scenario), env=env)


def suspects_json(binary, dump, *args):
    code, out, err = heapref("suspects", "--format", "json", *args, binary, dump)
    if code != 0:
        raise AssertionError("heapref suspects exited %d: %s" % (code, err))
    report = json.loads(out)
    if report["schema"] != "heapref-suspects/1":
        raise AssertionError("schema %r" % report["schema"])
    return report


class Scenarios(unittest.TestCase):
    """The holder, the accumulation point and its count, for each shape."""

    def check_scenario(self, scenario, env=None):
        binary, dump, f = prepare(scenario, env)
        report = suspects_json(binary, dump)
        self.assertGreaterEqual(len(report["suspects"]), 1)
        s = report["suspects"][0]
        if "roots" in f:
            self.assertEqual(s["kind"], "shared")
            self.assertEqual(sorted(s["roots"]), sorted(f["roots"]))
        else:
            self.assertEqual(s["kind"], "root")
            self.assertEqual(s["roots"], [f["root"]])
        p = s["accumulation_point"]
        self.assertEqual(p["kind"], f["kind"], p)
        self.assertEqual(p["count"], f["count"], p)
        self.assertEqual(p["type"], f["type"], p)
        # what piled up: the program's elements, each counted once
        by_type = {t["type"]: t for t in s["types"]}
        self.assertIn(f["element"], by_type, s["types"])
        self.assertEqual(by_type[f["element"]]["objects"], f["count"], s["types"])
        # the point retains most of the suspect, and the suspect most of the heap
        self.assertGreaterEqual(p["bytes"], 0.7 * s["bytes"])
        self.assertGreater(s["bytes"], 0.5 * report["reachable"]["bytes"])
        self.assertLessEqual(s["bytes"], report["reachable"]["bytes"])
        # the path goes from the (first) root to the point, which it ends at
        self.assertEqual(s["path"][0]["type"], s["roots"][0])
        self.assertEqual(s["path"][-1]["address"], p["address"])
        self.assertTrue(s["examples"])
        return binary, dump, f, report

    def test_map(self):
        _, _, f, report = self.check_scenario("map")
        s = report["suspects"][0]
        self.assertEqual(len(s["path"]), 2)  # main.sessions -> its map
        self.assertEqual([t for t in s["types"] if t["type"] == "[]uint8"][0]["bytes"],
                         f["count"] * f["element_bytes"])

    def test_slice(self):
        _, _, f, report = self.check_scenario("slice")
        self.assertIn("capacity %d" % f["capacity"],
                      report["suspects"][0]["accumulation_point"]["what"])

    def test_list(self):
        _, _, _, report = self.check_scenario("list")
        self.assertIn("linked by .next", report["suspects"][0]["accumulation_point"]["what"])

    def test_chan(self):
        _, _, f, report = self.check_scenario("chan")
        self.assertIn("capacity %d" % f["capacity"],
                      report["suspects"][0]["accumulation_point"]["what"])

    def test_spread(self):
        # the map and the slice share the records, no one of which keeps 70% of them:
        # the records themselves are the pile, and everything they retain is counted
        _, _, f, report = self.check_scenario("spread")
        s = report["suspects"][0]
        p = s["accumulation_point"]
        self.assertEqual((p["bytes"], p["objects"]), (s["bytes"], s["objects"]))
        self.assertIn("%d main.Record that these roots share" % f["count"], p["what"])
        self.assertEqual(s["path"][-1]["type"], "main.Record")
        by_type = {t["type"]: t for t in s["types"]}
        self.assertEqual(by_type["[]uint8"]["objects"], f["count"], s["types"])

    def test_shared(self):
        _, dump, f, report = self.check_scenario("shared")
        s = report["suspects"][0]
        # what the two globals share, read from the dump by reach.py: both reach the same
        # objects (nothing else does), and the suspect is exactly those
        d = reach.load(dump)
        reached = [reach.reachable_from(d, reach.segment_words(d, f["addr_" + root], 8))
                   for root in f["roots"]]
        self.assertEqual(reached[0], reached[1])
        self.assertEqual((s["bytes"], s["objects"]),
                         (sum(d.sizes[k] for k in reached[0]), len(reached[0])))
        # the path: a root, its *Registry, the map in its field metrics
        self.assertEqual([h["field"] for h in s["path"]], ["", "", ".metrics"])
        self.assertEqual(s["path"][1]["type"], "main.Registry")

    def test_frame_variable_of_one_goroutine(self):
        _, _, f, report = self.check_scenario("frame")
        g = report["suspects"][0]["goroutine"]
        self.assertIsNotNone(g)
        self.assertEqual(g["id"], f["goid"])
        self.assertEqual(g["creator"], "main.build")
        self.assertEqual(g["goroutines"], f["workers"])

    def test_leaked_goroutines(self):
        """200 goroutines blocked for good, each with a 16 KiB buffer: their group is a
        suspect of its own (by the runtime's definition of leaked), and the frame
        variable that holds the buffers says its goroutines are leaked."""
        binary, dump, f = prepare("goroutines")
        report = suspects_json(binary, dump)
        groups = [s for s in report["suspects"] if s["kind"] == "goroutines"]
        self.assertEqual(len(groups), 1, report["suspects"])
        g = groups[0]
        self.assertEqual(g["roots"], [f["creator"]])
        self.assertEqual(g["accumulation_point"]["count"], f["goroutines"])
        self.assertEqual(g["goroutine"]["goroutines"], f["goroutines"])
        self.assertEqual(g["goroutine"]["leaked"], f["goroutines"])
        self.assertGreaterEqual(g["bytes"], f["goroutines"] * f["buf"])
        self.assertIn("chan send", g["accumulation_point"]["what"])
        frames = [s for s in report["suspects"] if s["kind"] == "root"]
        self.assertTrue(frames, report["suspects"])
        self.assertTrue(frames[0]["roots"][0].endswith(".buf"), frames[0]["roots"])
        self.assertEqual(frames[0]["goroutine"]["leaked"], f["goroutines"])
        self.assertEqual(frames[0]["goroutine"]["creator"], f["creator"])
        self.assertEqual(frames[0]["bytes"], f["goroutines"] * f["buf"])

    def test_no_suspect_over_the_threshold(self):
        binary, dump, f = prepare("none")
        report = suspects_json(binary, dump)
        self.assertEqual(report["suspects"], [])
        self.assertEqual(report["threshold"]["percent"], 10)
        # each global holds about 4.7%: under a 4% threshold all twenty are suspects
        low = suspects_json(binary, dump, "--threshold", "4")
        roots = sorted(s["roots"][0] for s in low["suspects"])
        self.assertEqual(roots, ["main.s%02d" % i for i in range(f["globals"])])
        for s in low["suspects"]:
            self.assertEqual(s["bytes"], f["global_bytes"])
            self.assertEqual(s["accumulation_point"]["kind"], "slice")
        code, out, _ = heapref("suspects", binary, dump)
        self.assertEqual(code, 0)
        self.assertIn("no suspect", out)

    def test_matrix(self):
        """Bucket maps and no allocation headers (1.21), headers with bucket maps (1.23),
        swiss maps (1.24), the newest (1.27)."""
        for name in ("go1.21", "go1.23", "go1.24", "go1.27"):
            entry = toolchains.entry(name)
            for scenario in ("map", "list", "slice"):
                with self.subTest(entry=name, scenario=scenario):
                    self.check_scenario(scenario, entry.env)


def in_heap(d, addr):
    """Whether addr lies in one of dump d's heap objects (reach.load())."""
    i = bisect.bisect_right(d.addrs, addr) - 1
    return i >= 0 and addr < d.addrs[i] + d.sizes[i]


class MadeBesideTheScan(unittest.TestCase):
    """The dominator tree is made beside pass 1's heap walk, from the root edges known
    once the roots are walked, and kept only if the scan's final graph is that one:
    the report is the same as with one thread (--threads 1, where it is made after the
    scan), whether the tree was kept or made again."""

    def stats_and_report(self, binary, dump, *args):
        out = os.path.join(tempfile.mkdtemp(prefix="heapref-beside-"), "s.json")
        self.addCleanup(shutil.rmtree, os.path.dirname(out), True)
        code, _, err = heapref("suspects", "--stats", "--format", "json", "-o", out, *args,
                               binary, dump)
        self.assertEqual(code, 0, err)
        made = re.search(r"^heapref: the dominator tree: (.*)$", err, re.M)
        self.assertTrue(made, err)
        with open(out) as f:
            return made.group(1), f.read()

    def check(self, scenario, beside):
        binary, dump, f = prepare(scenario)
        made, report = self.stats_and_report(binary, dump)
        alone, report_alone = self.stats_and_report(binary, dump, "--threads", "1")
        self.assertEqual(alone, "made after the scan")
        if len(os.sched_getaffinity(0)) > 1:
            self.assertEqual(made, beside)
        self.assertEqual(report, report_alone)
        return dump, f, json.loads(report)

    def test_kept(self):
        self.check("map", "made beside pass 1's heap walk")

    def test_made_again(self):
        # the static Registry's map is found only as the heap walk reaches the Registry
        # (through main.holders): a root edge the tree made beside the walk had not
        dump, f, report = self.check(
            "static", "made beside pass 1's heap walk, then again: the walk of the heap "
            "found more root edges")
        self.assertFalse(in_heap(reach.load(dump), f["addr_registry"]),
                         "the Registry is a heap object: nothing static")
        s = report["suspects"][0]
        self.assertIn("main.holders", s["roots"])
        self.assertEqual((s["accumulation_point"]["type"], s["accumulation_point"]["count"]),
                         (f["type"], f["count"]))


class Forms(unittest.TestCase):
    """The text page says what the JSON says."""

    def test_text_matches_json(self):
        for scenario in ("map", "shared", "frame"):
            with self.subTest(scenario=scenario):
                binary, dump, f = prepare(scenario)
                report = suspects_json(binary, dump)
                code, text, err = heapref("suspects", binary, dump)
                self.assertEqual(code, 0, err)
                for s in report["suspects"]:
                    p = s["accumulation_point"]
                    self.assertIn("retains %d bytes" % s["bytes"], text)
                    self.assertIn("piles up in %s at %s" % (p["what"], p["address"]), text)
                    for t in s["types"]:
                        self.assertRegex(text, r"\b%d +%d  %s\n" % (
                            t["bytes"], t["objects"], t["type"].replace("[", r"\[")
                            .replace("]", r"\]").replace("*", r"\*")))
                if scenario == "shared":
                    self.assertIn("shared by main.", text)
                if scenario == "frame":
                    self.assertIn("goroutine %d (created by main.build" % f["goid"], text)

    def test_output_file(self):
        binary, dump, _ = prepare("map")
        out = os.path.join(progs.WORK, "suspects-map.json")
        try:
            code, stdout, err = heapref("suspects", "--format", "json", "-o", out, binary, dump)
            self.assertEqual(code, 0, err)
            self.assertEqual(stdout, "")
            with open(out) as fp:
                self.assertEqual(json.load(fp)["suspects"][0]["roots"], ["main.sessions"])
        finally:
            if os.path.exists(out):
                os.remove(out)

    def test_bad_options(self):
        binary, dump, _ = prepare("map")
        for args, msg in ((["--format", "xml"], "--format takes text, json or html"),
                          (["--threshold", "200"], "--threshold takes a percentage")):
            code, _, err = heapref("suspects", *args, binary, dump)
            self.assertEqual(code, 2, err)
            self.assertIn(msg, err)


class Growth(unittest.TestCase):
    """--baseline: testprogs/grow adds `added` entries to main.cache between its two
    dumps, and nothing to its other globals: main.cache grew most, by exactly those
    Entries and their buffers (at their size classes, read from the dump by reach.py),
    and its growth piles up in the buffers' chain."""

    def test_grown_map_first(self):
        binary, old, f = progs.prepare("grow", progs.WORK)
        new = old + ".2"
        report = suspects_json(binary, new, "--baseline", binary, old)
        d = reach.load(new)
        n = f["added"]
        entry = reach.size_class(d, f["sizeof_main.Entry"])
        buf = reach.size_class(d, f["buf_size"])
        g = report["growth"][0]
        self.assertEqual(g["root"], "main.cache")
        self.assertEqual((g["bytes"], g["objects"]), (n * (entry + buf), 2 * n))
        self.assertEqual(g["chain"], "main.cache -> $mapval. (*main.Entry) -> buf. ([]uint8)")
        self.assertEqual((g["chain_bytes"], g["chain_objects"]), (n * buf, n))
        self.assertEqual(g["new_bytes"] - g["old_bytes"], g["bytes"])
        mine = [r["root"] for r in report["growth"] if r["root"].startswith("main.")]
        self.assertEqual(mine, ["main.cache"])
        # options anywhere; the text says the same
        code, text, err = heapref("suspects", binary, new, "--baseline", binary, old)
        self.assertEqual(code, 0, err)
        self.assertIn("%+d %+10d" % (g["bytes"], g["objects"]), text)
        self.assertIn("main.cache: " + g["chain"], text)
        # without a baseline: no growth (null)
        self.assertIsNone(suspects_json(binary, new)["growth"])

    def test_bad_baseline(self):
        binary, old, _ = progs.prepare("grow", progs.WORK)
        code, _, err = heapref("suspects", binary, old + ".2", "--baseline", binary)
        self.assertEqual(code, 2, err)
        self.assertIn("--baseline takes OLD_BINARY OLD_DUMP", err)
        code, _, err = heapref("suspects", "--baseline", old, binary, binary, old + ".2")
        self.assertEqual(code, 2, err)
        self.assertIn("wrong way round", err)
        code, _, err = heapref("suspects", "--baseline", binary, old, "-o", old, binary,
                               old + ".2")
        self.assertNotEqual(code, 0)
        self.assertIn("baseline", err)


class Dom(html.parser.HTMLParser):
    """The elements of a page that carry data-* attributes, and its text."""

    def __init__(self):
        super().__init__()
        self.elements, self.text, self.body = [], [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if any(k.startswith("data-") for k in a):
            self.elements.append((tag, a))

    def handle_data(self, data):
        self.text.append(data)


def browser():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("no chromium on PATH: scripts/install-deps.sh --tests installs it")


def rendered(page):
    """The page's DOM after its scripts ran in headless Chromium, and the console's
    error lines."""
    with tempfile.TemporaryDirectory(prefix="heapref-chromium-") as profile_dir:
        p = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + profile_dir, "--enable-logging=stderr",
                            "--v=0", "--dump-dom", "file://" + os.path.abspath(page)],
                           capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("chromium exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l]
    dom = Dom()
    dom.feed(p.stdout)
    return dom, errors


class Html(unittest.TestCase):
    """The page loads in a real browser without an error, draws each suspect, and its
    numbers are the JSON's."""

    def check_page(self, scenario):
        binary, dump, _ = prepare(scenario)
        report = suspects_json(binary, dump)
        with tempfile.TemporaryDirectory(prefix="heapref-html-") as tmp:
            page = os.path.join(tmp, "suspects.html")
            code, out, err = heapref("suspects", "--format", "html", "-o", page, binary, dump)
            self.assertEqual(code, 0, err)
            with open(page) as f:
                source = f.read()
            dom, errors = rendered(page)
        self.assertEqual(errors, [])
        self.assertEqual(dom.body.get("data-rendered"), "ok")
        # self-contained: nothing loaded from anywhere
        self.assertNotRegex(source, r"(?i)<(script|link|img|iframe)[^>]*\b(src|href)=")
        self.assertNotRegex(source, r"fetch\(|XMLHttpRequest|import\(")
        sections = [a for tag, a in dom.elements if tag == "section"]
        self.assertEqual(len(sections), len(report["suspects"]))
        text = "".join(dom.text)
        for a, s in zip(sections, report["suspects"]):
            p = s["accumulation_point"]
            self.assertEqual((int(a["data-rank"]), int(a["data-bytes"]), int(a["data-objects"]),
                              int(a["data-point-count"]), a["data-point-kind"],
                              a["data-roots"].split(" ")),
                             (s["rank"], s["bytes"], s["objects"], p["count"], p["kind"],
                              s["roots"]))
            self.assertIn("retains {:,} bytes".format(s["bytes"]), text)
            self.assertIn("piles up in " + p["what"], text)
        rows = [(a["data-type"], int(a["data-bytes"]), int(a["data-objects"]))
                for tag, a in dom.elements if tag == "tr" and "data-type" in a]
        self.assertEqual(rows, [(t["type"], t["bytes"], t["objects"])
                                for s in report["suspects"] for t in s["types"]])
        return dom, report, source

    def test_suspects_drawn(self):
        for scenario in ("shared", "frame", "list", "goroutines"):
            with self.subTest(scenario=scenario):
                dom, report, _ = self.check_page(scenario)
                # the icicle's first level: the chains under the roots, by retained size,
                # whose widths add up to at most the reachable heap
                rects = [int(a["data-chain-bytes"]) for tag, a in dom.elements
                         if tag == "rect" and "data-chain-bytes" in a]
                self.assertTrue(rects)
                self.assertIn(report["suspects"][0]["bytes"], rects)
                # the goroutine groups, one row per group
                counts = [int(a["data-count"]) for tag, a in dom.elements
                          if tag == "tr" and "data-count" in a]
                self.assertTrue(counts)

    def test_frame_goroutines_table(self):
        dom, _, _ = self.check_page("frame")
        _, _, f = prepare("frame")
        counts = [int(a["data-count"]) for tag, a in dom.elements
                  if tag == "tr" and "data-count" in a]
        self.assertIn(f["workers"], counts)

    def test_no_suspect(self):
        dom, report, _ = self.check_page("none")
        self.assertEqual(report["suspects"], [])
        self.assertIn("No suspect", "".join(dom.text))

    def test_script_in_names_stays_data(self):
        """A name with </script> in it (a map key type, a package path) is escaped
        in the JSON inside the page: the page still parses as one script."""
        _, _, source = self.check_page("map")
        data = re.search(r'<script type="application/json" id="report">(.*?)</script>',
                         source, re.S).group(1)
        self.assertEqual(json.loads(data)["schema"], "heapref-suspects/1")
        self.assertNotIn("<", data)


class Retained(unittest.TestCase):
    """retained: the shared registry as a group of its roots; objects by real type."""

    def test_group_and_types(self):
        binary, dump, f = prepare("shared")
        code, out, err = heapref("retained", "--format", "tsv", "-n", "0", binary, dump)
        self.assertEqual(code, 0, err)
        rows = [line.split("\t") for line in out.splitlines()[1:]]
        groups = {frozenset(r[1].split(" + ")): int(r[4]) for r in rows if r[0] == "group"}
        pair = frozenset(f["roots"])
        self.assertIn(pair, groups)
        # the group retains what the two globals reach (reach.py: nothing else reaches it)
        d = reach.load(dump)
        reached = reach.reachable_from(d, reach.segment_words(d, f["addr_main.requests"], 8))
        self.assertEqual(groups[pair], sum(d.sizes[k] for k in reached))
        suspect = suspects_json(binary, dump)["suspects"][0]
        types = {r[6]: r[2] for r in rows if r[0] == "object"}
        point = suspect["accumulation_point"]
        self.assertEqual(types[point["address"]], "map[string]*main.Metric")
        code, text, err = heapref("retained", binary, dump)
        self.assertIn("map[string]*main.Metric with %d entries" % f["count"], text)


if __name__ == "__main__":
    unittest.main()
