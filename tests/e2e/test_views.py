# SPDX-License-Identifier: Apache-2.0
"""analyze --by-type and --types-first: the chain tree along the type axis.

On testprogs/example (main.sessions: 200 Sessions with an 8 KiB Payload and an Events
slice of 16 *Event with 256-byte Data; main.pool: 32 Conns with two 32 KiB buffers; the
janitor's 512 KiB scratch), read through the real pprof client:
  - every chain of the plain profile holds, in the --by-type profile, exactly what it
    held (the type leaves only split it), and the totals are reach.py's;
  - the types the program's shape implies sit under its chains: 200 `type []uint8`
    payloads, 200 `type main.Session`, 3200 `type main.Event`, the Events arrays as
    `type []*main.Event`;
  - transposed (--types-first), each chain's objects summed over the types are what the
    plain profile has under that chain: the two views are one table read by rows and by
    columns, as seed 004's cumulative cells add up.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (built programs, dumps).
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402  (tests/e2e/profile.py, not the standard library's)
import progs  # noqa: E402
import reach  # noqa: E402

heapref = progs.heapref


size_class = reach.size_class


class TypeAxis(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, cls.f = progs.prepare("example", progs.WORK)
        cls.tmp = tempfile.TemporaryDirectory(prefix="heapref-views-")
        cls.p = {}
        for view, args in (("plain", []), ("types", ["--by-type"]),
                           ("first", ["--types-first"])):
            out = os.path.join(cls.tmp.name, view + ".pb.gz")
            code, _, err = heapref("analyze", "-o", out, *args, cls.binary, cls.dump)
            if code != 0:
                raise AssertionError(err)
            cls.p[view] = profile.read(out)
        cls.d = reach.load(cls.dump)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_totals_are_what_is_reachable(self):
        r = reach.reachable(self.d)
        for view, p in self.p.items():
            self.assertEqual(profile.totals(p), (r.objects, r.bytes), view)

    def test_type_leaves_split_each_chain(self):
        plain, typed = self.p["plain"], self.p["types"]
        for chain in plain:
            self.assertEqual(profile.cum(typed, chain), profile.cum(plain, chain), chain)
        for chain in typed:
            self.assertTrue(chain[-1].startswith("type "), chain)

    def test_the_shape_s_types(self):
        f, d, p = self.f, self.d, self.p["types"]
        ns, ne = f["sessions"], f["events_per_session"]
        mv = ("main.sessions", "$mapval. (*main.Session)")
        own = lambda chain: tuple(p.get(chain, (0, 0)))  # noqa: E731
        self.assertEqual(own(mv + ("type main.Session",)),
                         (ns, ns * size_class(d, f["sizeof_main.Session"])))
        self.assertEqual(own(mv + ("Payload. ([]uint8)", "type []uint8")),
                         (ns, ns * size_class(d, f["payload_size"])))
        self.assertEqual(own(mv + ("Events. ([]*main.Event)", "type []*main.Event")),
                         (ns, ns * size_class(d, ne * f["pointer_size"])))
        events = [v for c, v in p.items() if c[-1] == "type main.Event" and c[:2] == mv]
        self.assertEqual(tuple(map(sum, zip(*events))),
                         (ns * ne, ns * ne * size_class(d, f["sizeof_main.Event"])))

    def test_types_first_is_the_same_table_by_columns(self):
        plain, first = self.p["plain"], self.p["first"]
        types = {c[0] for c in first}
        self.assertTrue(all(t.startswith("type ") for t in types), types)
        for chain in plain:
            summed = [profile.cum(first, (t,) + chain) for t in types]
            self.assertEqual(tuple(map(sum, zip(*summed))), profile.cum(plain, chain), chain)
        self.assertEqual(profile.cum(first, ("type main.Session",)),
                         profile.cum(self.p["types"], ("main.sessions", "$mapval. (*main.Session)",
                                                       "type main.Session")))

    def test_text_report_and_usage(self):
        code, out, err = heapref("analyze", "--text", "--types-first", "--cutoff", "0",
                                 self.binary, self.dump)
        self.assertEqual(code, 0, err)
        self.assertIn("    type []uint8\n", out)
        for args in (["--by-type", "--types-first"], ["--by-type", "--by-alloc"],
                     ["--by-type", "--attribution", "dominator"]):
            code, out, err = heapref("analyze", "-o", "-", *args, self.binary, self.dump)
            self.assertEqual((code, out), (2, ""), (args, err))


if __name__ == "__main__":
    unittest.main()
