# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `heapref analyze` on real Go programs.

    heapref analyze [-o FILE] [--full-chains] [--max-depth N] [--stats] BINARY DUMP

Every scenario program in testprogs/ is built twice, as the default (optimised) build
and with -gcflags="all=-N -l", run to write a heap dump, and analysed by the real
heapref binary. The profile is read back through `go tool pprof -raw` (profile.py),
so what is checked is what a pprof user sees: chains of names, root first, each with
the objects and bytes charged to it.

Where the expectations come from (never from heapref's own output):
  - the shape each program builds, as its main.go describes it in its comment and
    code (how many entries, which fields, which variables);
  - the facts JSON it prints: counts, sizeof_/offsetof_ figures and the addresses of
    its globals (addr_<name>) and of heap objects (ptr_<name>);
  - the dump itself, read by reach.py, an independent Python reader: an object's size
    is the size of its record (a size class, not sizeof), so bytes are always the
    dump's size of the object at a known address (size_at), or of the object whose
    address a known word holds (word_at), or, for objects no fact points to, the
    smallest object size present in the dump that holds the type (size_class: every
    small object's size is a size class, and the program's objects of that type are
    in the dump, so no smaller class >= sizeof can exist);
  - reach.reachable(): an independent reachability computation; the profile must
    account for exactly the objects and bytes it finds reachable (conservation).

The naming and charging rules (the scanner's specification, docs/design.md):
  roots      main.cache (global), main.worker.buf (frame variable), main.worker
             (frame words no DWARF variable covers), $finalizer (*T),
             $queued_finalizer (*T);
  below      field `name. (T)`, element `[0]. (T)` .. `[9]. (T)` then `[10+]. (T)`,
             `$mapkey. (K)` / `$mapval. (V)`, interface values by their dynamic type,
             closure captures by name (Go >= 1.23), `$sub_objects$` for memory found
             only through the GC bitmap;
  charging   each reachable object once, to the node of the pointer that first
             reaches it, breadth first over all roots (ties: globals, goroutines,
             finalizers); a map's, slice's, string's or channel's own storage to the
             node of the map/slice/string/channel itself; below --max-depth (256 named
             nodes by default) everything to the last node;
  recursion  a name `x. (T)` whose type T is already on its chain is that earlier
             node: a list is root > next, a binary tree root > Left and root > Right
             (--full-chains: every link its own node, as far as --max-depth).

Which Go builds the programs: the entry of the matrix in toolchains.py that
HEAPREF_MATRIX names (ctest runs this module once per entry, e2e_analyze_<entry>:
go1.19 ... go1.27, arm64 under qemu-aarch64-static); without it the machine's Go.
An entry that cannot be had here fails (AnalyzeMatrixEntry), never skips.

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (a cache directory for
built programs and dumps), HEAPREF_MATRIX (a matrix entry), HEAPREF_GO (the go
command), HEAPREF_GOTOOLCHAIN (one toolchain by hand, outside the matrix).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile  # noqa: E402  (tests/e2e/profile.py, not the standard library's)
import progs  # noqa: E402
import reach  # noqa: E402
import toolchains  # noqa: E402

if not hasattr(profile, "read"):   # the standard library's profile came first
    raise ImportError("tests/e2e/profile.py not found (got %s)" % profile.__file__)

HEAPREF = os.environ.get("HEAPREF", os.path.join(progs.TESTPROGS, "..", "build", "heapref"))
WORK = os.environ.get("HEAPREF_WORK") or tempfile.mkdtemp(prefix="heapref-e2e-")
GO = os.environ.get("HEAPREF_GO", "go")
ENTRY = toolchains.selected()
ENV = ENTRY.env

# (flavor name, -gcflags): the optimised build, and the build a debugger sees.
FLAVORS = (("optimised", None), ("-N -l", "all=-N -l"))

DEFAULT_MAX_DEPTH = 256
SUB = "$sub_objects$"


def elem(i, typ):
    """The name of element i of an array, slice or channel buffer of typ."""
    return "[%d]. (%s)" % (i, typ) if i < 10 else "[10+]. (%s)" % typ


def elems(n, typ):
    """The names of the elements of an n-element array of typ."""
    return {elem(i, typ) for i in range(n)}


def go_minor(version):
    """1.26 -> 26 from "go1.26.8" (or "go1.23rc1")."""
    m = re.match(r"go1\.(\d+)", version)
    return int(m.group(1)) if m else 0


def heapref(*args, cwd=None):
    p = subprocess.run([HEAPREF] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=900, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def pprof(*args):
    p = subprocess.run([GO, "tool", "pprof"] + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


# -- the dump, read independently -------------------------------------------------------

def size_at(d, addr):
    """Size of the heap object holding addr, from its dump record."""
    i = d.find(addr)
    if i is None:
        raise AssertionError("no heap object at %#x in the dump" % addr)
    return d.sizes[i]


def word_at(d, addr):
    """The pointer-sized word at addr, in a heap object or the data/bss segment."""
    ps = d.params.ptr_size
    i = d.find(addr)
    if i is not None:
        off, data = addr - d.addrs[i], d.contents(i)
    else:
        for seg in d.data + d.bss:
            if seg.addr <= addr < seg.addr + seg.size:
                off, data = addr - seg.addr, d.contents(seg)
                break
        else:
            raise AssertionError("%#x is neither in a heap object nor in data/bss" % addr)
    return int.from_bytes(data[off:off + ps], "big" if d.params.big_endian else "little")


size_class = reach.size_class


# -- reading the profile -------------------------------------------------------------

def own(p, chain):
    """(objects, bytes) charged to chain itself."""
    v = p.get(tuple(chain))
    return (v[0], v[1]) if v else (0, 0)


def cum(p, chain):
    return tuple(profile.cum(p, tuple(chain)))


def children(p, chain):
    return set(profile.children(p, tuple(chain)))


def show(p, prefix=(), limit=40):
    """The chains under prefix with their own values, for failure messages."""
    prefix = tuple(prefix)
    rows = sorted((c, v) for c, v in p.items() if c[:len(prefix)] == prefix)
    lines = []
    for c, v in rows[:limit]:
        if len(c) > 8:
            c = c[:3] + ("... %d more ..." % (len(c) - 6),) + c[-3:]
        lines.append("  %8d %12d  %s" % (v[0], v[1], " > ".join(c)))
    if len(rows) > limit:
        lines.append("  ... %d more chains" % (len(rows) - limit))
    if not rows:
        lines.append("  (no chain starts with %s)" % " > ".join(prefix))
    return "\n".join(lines)


def top_roots(p):
    """Root names by cumulative bytes, largest first."""
    roots = {c[0] for c in p}
    return sorted(roots, key=lambda r: (-profile.cum(p, (r,))[1], r))


class Case:
    """One program in one build flavor, analysed: facts, dump, reach, profile."""

    def __init__(self, name, flavor, binary, dump_path, facts, out_path):
        self.name, self.flavor = name, flavor
        self.binary, self.dump_path, self.facts = binary, dump_path, facts
        self.out = out_path
        self.full_chains = False
        self._d = self._reach = self._p = None

    @property
    def d(self):
        if self._d is None:
            self._d = reach.load(self.dump_path)
        return self._d

    @property
    def reach(self):
        if self._reach is None:
            self._reach = reach.reachable(self.d)
        return self._reach

    @property
    def p(self):
        if self._p is None:
            self._p = profile.read(self.out)
        return self._p


_CASES = {}   # (program, flavor, extra args...) -> Case, or the error analysing it
_TMP = []


def tearDownModule():
    for d in _TMP:
        shutil.rmtree(d, ignore_errors=True)


def analyse(name, flavor, *extra):
    """Builds and runs the program (once per flavor, cached by progs.prepare) and
    analyses its dump (once per process); returns a Case or raises AssertionError."""
    key = (name, flavor) + extra
    c = _CASES.get(key)
    if c is None:
        if not _TMP:
            _TMP.append(tempfile.mkdtemp(prefix="heapref-analyze-"))
        gcflags = dict(FLAVORS)[flavor]
        binary, dump, facts = progs.prepare(name, WORK, go=GO, env=ENV, gcflags=gcflags)
        out = os.path.join(_TMP[0], "%s-%s%s.pb.gz" % (
            name, "N" if gcflags else "O", "".join(extra).replace("-", "")))
        code, stdout, stderr = heapref("analyze", "-o", out, *(list(extra) + [binary, dump]))
        if code != 0 or not os.path.isfile(out) or os.path.getsize(out) == 0:
            c = AssertionError("heapref analyze %s (%s build) exited %d, %s:\n%s%s" % (
                name, flavor, code, "wrote " + out if os.path.isfile(out) else "no profile",
                stdout, stderr))
        else:
            c = Case(name, flavor, binary, dump, facts, out)
            c.full_chains = "--full-chains" in extra
        _CASES[key] = c
    if isinstance(c, Exception):
        raise c
    return c


class AnalyzeTestCase(unittest.TestCase):
    """Assertions on analysed programs, with the chain tree in their messages."""

    def case(self, name, flavor, *extra):
        return analyse(name, flavor, *extra)

    def each_flavor(self, name, check):
        for flavor, _ in FLAVORS:
            with self.subTest(program=name, flavor=flavor):
                check(self.case(name, flavor))

    # -- assertions with the chain tree in the message ---------------------------------

    def assertOwn(self, c, chain, expected, context=None):
        got = own(c.p, chain)
        if got != tuple(expected):
            self.fail("%s (%s): own of %s is %s (objects, bytes), expected %s\n%s" % (
                c.name, c.flavor, " > ".join(chain), got, tuple(expected),
                show(c.p, context or chain[:1])))

    def assertCum(self, c, chain, expected, context=None):
        got = cum(c.p, chain)
        if got != tuple(expected):
            self.fail("%s (%s): cum of %s is %s (objects, bytes), expected %s\n%s" % (
                c.name, c.flavor, " > ".join(chain), got, tuple(expected),
                show(c.p, context or chain[:1])))

    def assertChildren(self, c, chain, expected):
        got = children(c.p, chain)
        if got != set(expected):
            self.fail("%s (%s): children of %s are %s, expected %s\n%s" % (
                c.name, c.flavor, " > ".join(chain) or "(top)", sorted(got), sorted(expected),
                show(c.p, chain[:1])))

    def assertAtLeast(self, c, got, minimum, what):
        if got[0] < minimum[0] or got[1] < minimum[1]:
            self.fail("%s (%s): %s is %s (objects, bytes), expected at least %s\n%s" % (
                c.name, c.flavor, what, got, minimum, show(c.p, ())))

    def assertElements(self, c, chain, n, typ, each, context=None):
        """chain's children are the n elements of typ, each charged `each` (objects,
        bytes) and nothing below; [10+] holds the n-10 from index 10 up."""
        self.assertChildren(c, chain, elems(n, typ))
        for i in range(min(n, 10)):
            self.assertOwn(c, chain + (elem(i, typ),), each, context)
        if n > 10:
            self.assertOwn(c, chain + (elem(10, typ),),
                           ((n - 10) * each[0], (n - 10) * each[1]), context)

    def check_list_folded(self, c):
        """list/main.go's chains with recursion folded (see test_list)."""
        f, d, p = c.facts, c.d, c.p
        node = size_at(d, f["ptr_main.head"])
        ring = size_at(d, f["ptr_main.ring"])
        tree = size_at(d, f["ptr_main.tree"])
        n, rn, tn = f["list_nodes"], f["ring_nodes"], f["tree_nodes"]
        h, nxt = ("main.head",), "next. (*main.Node)"
        self.assertEqual({ch for ch in p if ch[0] == h[0]}, {h, h + (nxt,)},
                         "list chains:\n" + show(p, h))
        self.assertOwn(c, h, (1, node))
        self.assertOwn(c, h + (nxt,), (n - 1, (n - 1) * node))
        # the ring: next and prev meet halfway
        r, rnext, rprev = ("main.ring",), "next. (*main.Ring)", "prev. (*main.Ring)"
        self.assertEqual({ch for ch in p if ch[0] == r[0]}, {r, r + (rnext,), r + (rprev,)},
                         "ring chains:\n" + show(p, r))
        self.assertOwn(c, r, (1, ring))
        a, b = own(p, r + (rnext,)), own(p, r + (rprev,))
        self.assertEqual((a[0] + b[0], a[1] + b[1]), (rn - 1, (rn - 1) * ring))
        self.assertIn(a[0], ((rn - 1) // 2, rn - 1 - (rn - 1) // 2))
        # the tree: each half of it under the root's Left or Right
        t, half = ("main.tree",), (tn - 1) // 2
        left, right = t + ("Left. (*main.Tree)",), t + ("Right. (*main.Tree)",)
        self.assertEqual({ch for ch in p if ch[0] == t[0]}, {t, left, right},
                         "tree chains:\n" + show(p, t))
        self.assertOwn(c, t, (1, tree))
        self.assertOwn(c, left, (half, half * tree))
        self.assertOwn(c, right, (half, half * tree))

    def check_list(self, c, depth):
        """list/main.go's chains unfolded (--full-chains), cut at depth named nodes."""
        f, d, p = c.facts, c.d, c.p
        node = size_at(d, f["ptr_main.head"])
        ring = size_at(d, f["ptr_main.ring"])
        n, rn = f["list_nodes"], f["ring_nodes"]
        nxt = "next. (*main.Node)"
        chain = ("main.head",)
        for k in range(depth - 1):
            self.assertOwn(c, chain, (1, node), ("main.head",))
            chain += (nxt,)
        self.assertOwn(c, chain, (n - (depth - 1), (n - (depth - 1)) * node), ("main.head",))
        self.assertChildren(c, chain, set())
        self.assertCum(c, ("main.head",), (n, n * node), ())
        # the ring: one chain per direction and depth, nothing else
        rnext, rprev = "next. (*main.Ring)", "prev. (*main.Ring)"
        r = ("main.ring",)
        expect = {r} | {r + (s,) * k for s in (rnext, rprev) for k in range(1, depth)}
        got = {ch for ch in p if ch[0] == "main.ring"}
        self.assertEqual(got, expect, "ring chains differ:\n" + show(p, r, 10))
        self.assertOwn(c, r, (1, ring))
        for s in (rnext, rprev):
            for k in range(1, depth - 1):
                self.assertOwn(c, r + (s,) * k, (1, ring))
        last = rn - 1 - 2 * (depth - 2)
        a, b = own(p, r + (rnext,) * (depth - 1)), own(p, r + (rprev,) * (depth - 1))
        self.assertEqual((a[0] + b[0], a[1] + b[1]), (last, last * ring))
        self.assertIn(a[0], (last // 2, last - last // 2))
        self.assertCum(c, r, (rn, rn * ring))
        # the tree: one chain per node (a path of Lefts and Rights) down to depth
        t = ("main.tree",)
        tree, tn, td = size_at(d, f["ptr_main.tree"]), f["tree_nodes"], f["tree_depth"]
        got = {ch for ch in p if ch[0] == "main.tree"}
        self.assertEqual(len(got), 2 ** min(depth, td) - 1, "tree chains:\n" + show(p, t, 10))
        self.assertCum(c, t, (tn, tn * tree))
        longest = max(len(ch) for ch in p)
        self.assertLessEqual(longest, depth, "a chain of %d names" % longest)


class AnalyzeMatrixEntry(unittest.TestCase):
    """The programs were built and run as the matrix entry says: its Go release and
    GOARCH, in the facts each program prints (runtime.Version(), runtime.GOARCH) and in
    the dump's params record (read by reach.py). A toolchain or emulator missing here
    fails, saying what to install."""

    def test_toolchain_and_arch(self):
        try:
            toolchains.check(ENTRY, progs.go_version(GO, ENV))
        except (toolchains.MatrixError, progs.ProgError) as e:
            self.fail("matrix entry %s cannot run here: %s" % (ENTRY.name, e))
        goarch = ENTRY.goarch or toolchains.host_goarch()
        for name in progs.PROGRAMS:
            with self.subTest(program=name):
                _, dump, facts = progs.prepare(name, WORK, go=GO, env=ENV)
                params = reach.load(dump).params
                for what, version, arch in (("facts", facts["go_version"], facts["goarch"]),
                                            ("dump", params.go_version, params.arch)):
                    self.assertTrue(toolchains.expected_version_ok(ENTRY, version),
                                    "%s: %s says %s, entry %s wants %s" % (
                                        name, what, version, ENTRY.name,
                                        ENTRY.toolchain or toolchains.MACHINE_GO + ".x"))
                    self.assertEqual(arch, goarch, "%s: %s" % (name, what))


class AnalyzeEveryProgram(AnalyzeTestCase):
    """Conservation and the real pprof client, on every program and flavor."""

    def test_conservation(self):
        """The profile holds exactly what is reachable from the dump's roots, by
        reach.py's independent marking: each reachable object once, nothing else."""
        for name in progs.PROGRAMS:
            for flavor, _ in FLAVORS:
                with self.subTest(program=name, flavor=flavor):
                    c = self.case(name, flavor)
                    r = c.reach
                    got = tuple(profile.totals(c.p))
                    self.assertEqual(got, (r.objects, r.bytes),
                                     "%s (%s): profile totals %s, reach.py finds %d objects, "
                                     "%d bytes reachable (%d objects, %d bytes unreachable)\n%s"
                                     % (name, flavor, got, r.objects, r.bytes,
                                        r.unreachable_objects, r.unreachable_bytes,
                                        show(c.p, (), 25)))
                    # each program's kept_* are a lower bound of what is reachable
                    self.assertGreaterEqual(r.objects, c.facts["kept_objects"])
                    self.assertGreaterEqual(r.bytes, c.facts["kept_bytes"])

    def test_pprof_reads_the_profile(self):
        """`go tool pprof -top` and `-traces`, the real client, accept the profile."""
        for name in progs.PROGRAMS:
            for flavor, _ in FLAVORS:
                with self.subTest(program=name, flavor=flavor):
                    c = self.case(name, flavor)
                    for mode in ("-top", "-traces"):
                        code, out, err = pprof(mode, c.out)
                        self.assertEqual(code, 0, "go tool pprof %s %s: %s" % (mode, c.out, err))
                        self.assertTrue(out.strip(), "go tool pprof %s printed nothing" % mode)


class AnalyzeScenarios(AnalyzeTestCase):
    """The chains and values each program's shape implies."""

    def test_cache(self):
        """cache/main.go: main.cache map[string]*Entry with 100 entries, each Entry with
        a 1024-byte buf; keys are 32-byte strings (key_size)."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            n = f["entries"]
            entry = size_class(d, f["sizeof_main.Entry"])
            key = size_class(d, f["key_size"])
            buf = size_class(d, f["buf_size"])
            root = ("main.cache",)
            mapkey, mapval = root + ("$mapkey. (string)",), root + ("$mapval. (*main.Entry)",)
            self.assertChildren(c, root, {mapkey[-1], mapval[-1]})
            self.assertOwn(c, mapkey, (n, n * key))
            self.assertOwn(c, mapval, (n, n * entry))
            self.assertChildren(c, mapval, {"buf. ([]uint8)"})
            self.assertOwn(c, mapval + ("buf. ([]uint8)",), (n, n * buf))
            self.assertChildren(c, mapval + ("buf. ([]uint8)",), set())
            # the map's own storage: its header (ptr_main.cache) and the slots of 100
            # string keys and pointer values, in at least one more object
            o = own(p, root)
            slot = 2 * f["pointer_size"] + f["pointer_size"]
            self.assertAtLeast(c, o, (2, size_at(d, f["ptr_main.cache"]) + n * slot),
                               "own of main.cache (the map's storage)")
            self.assertCum(c, root, (o[0] + 3 * n, o[1] + n * (key + entry + buf)))
            self.assertAtLeast(c, cum(p, root),
                               (f["kept_objects_main.cache"], f["kept_bytes_main.cache"]),
                               "cum of main.cache")
        self.each_flavor("cache", check)

    def test_globals(self):
        """globals/main.go: one global of each kind, each holding disjoint objects;
        Leaf is pointer-free, Pair holds A, B *Leaf, Holder Name, P, Items."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            ps = f["pointer_size"]
            pair = size_at(d, f["ptr_main.gptr"])
            leaf = size_at(d, word_at(d, f["ptr_main.gptr"] + f["offsetof_main.Pair.A"]))
            one_leaf = (1, leaf)
            # gptr *Pair -> Pair -> A, B
            g = ("main.gptr",)
            self.assertOwn(c, g, (1, pair))
            self.assertChildren(c, g, {"A. (*main.Leaf)", "B. (*main.Leaf)"})
            self.assertOwn(c, g + ("A. (*main.Leaf)",), one_leaf)
            self.assertOwn(c, g + ("B. (*main.Leaf)",), one_leaf)
            # gslice []*Leaf: backing array to the slice, Leafs to elements
            g = ("main.gslice",)
            self.assertOwn(c, g, (1, size_at(d, f["ptr_main.gslice"])))
            self.assertElements(c, g, f["slice_len"], "*main.Leaf", one_leaf)
            # gstring: its bytes to the string's node
            g = ("main.gstring",)
            self.assertOwn(c, g, (1, size_at(d, f["ptr_main.gstring"])))
            self.assertChildren(c, g, set())
            # gstruct Holder (a value in data/bss): everything below its fields
            g = ("main.gstruct",)
            base = f["addr_main.gstruct"]
            name = size_at(d, word_at(d, base + f["offsetof_main.Holder.Name"]))
            items = size_at(d, word_at(d, base + f["offsetof_main.Holder.Items"]))
            self.assertOwn(c, g, (0, 0))
            self.assertChildren(c, g, {"Name. (string)", "P. (*main.Pair)",
                                       "Items. ([]*main.Leaf)"})
            self.assertOwn(c, g + ("Name. (string)",), (1, name))
            self.assertOwn(c, g + ("P. (*main.Pair)",), (1, size_at(d, f["ptr_main.gstruct.P"])))
            self.assertChildren(c, g + ("P. (*main.Pair)",), {"A. (*main.Leaf)", "B. (*main.Leaf)"})
            self.assertOwn(c, g + ("P. (*main.Pair)", "A. (*main.Leaf)"), one_leaf)
            self.assertOwn(c, g + ("P. (*main.Pair)", "B. (*main.Leaf)"), one_leaf)
            self.assertOwn(c, g + ("Items. ([]*main.Leaf)",), (1, items))
            self.assertElements(c, g + ("Items. ([]*main.Leaf)",), f["items_len"],
                                "*main.Leaf", one_leaf)
            # garray [16]*Leaf (a value in data/bss)
            g = ("main.garray",)
            self.assertOwn(c, g, (0, 0))
            self.assertElements(c, g, f["array_len"], "*main.Leaf", one_leaf)
            # gmap map[string]*Leaf: storage to the map, Leafs to $mapval. The 8-byte
            # keys share 16-byte tiny blocks (the program does not count them), so
            # only their bound is known.
            g = ("main.gmap",)
            mv = g + ("$mapval. (*main.Leaf)",)
            kids = children(p, g)
            self.assertIn(mv[-1], kids, show(p, g))
            self.assertLessEqual(kids, {mv[-1], "$mapkey. (string)"}, show(p, g))
            self.assertOwn(c, mv, (f["map_len"], f["map_len"] * leaf))
            self.assertChildren(c, mv, set())
            keys = own(p, g + ("$mapkey. (string)",))
            self.assertLessEqual(keys[0], f["map_len"], show(p, g))
            self.assertAtLeast(c, own(p, g), (2, size_at(d, f["ptr_main.gmap"]) +
                                              f["map_len"] * 3 * ps), "own of main.gmap")
            for var in ("gptr", "gslice", "gstring", "gstruct", "garray", "gmap"):
                self.assertAtLeast(c, cum(p, ("main." + var,)),
                                   (f["kept_objects_main." + var], f["kept_bytes_main." + var]),
                                   "cum of main." + var)
            # exact where nothing is left to the runtime: all but the map
            self.assertCum(c, ("main.gptr",), (f["kept_objects_main.gptr"], pair + 2 * leaf))
            self.assertCum(c, ("main.garray",), (16, 16 * leaf))
            self.assertCum(c, ("main.gstruct",), (f["kept_objects_main.gstruct"],
                           name + size_at(d, f["ptr_main.gstruct.P"]) + 2 * leaf + items +
                           f["items_len"] * leaf))
        self.each_flavor("globals", check)

    def test_goroutine(self):
        """goroutine/main.go: only the blocked main.worker's locals keep its 1 MiB buf
        and its 10-node list (its head, then 9 nodes through next). With -N -l the locals are in the frame and named; in the
        optimised build a pointer word may be covered by no DWARF location, and then is
        charged to the root `main.worker` (the function name)."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            self.assertEqual(f["worker_wait_reason"], f["expected_wait_reason"])
            buf = size_at(d, f["ptr_worker.buf"])
            node = size_at(d, f["ptr_worker.head"])
            n = f["nodes"]
            fn = f["worker_function"]
            bufroot, head = (fn + ".buf",), (fn + ".head",)
            strict = c.flavor == "-N -l"
            if strict or own(p, bufroot) != (0, 0):
                self.assertOwn(c, bufroot, (1, buf))
                self.assertChildren(c, bufroot, set())
            else:
                self.assertAtLeast(c, own(p, (fn,)), (1, buf),
                                   "own of %s (buf not in a named local)" % fn)
            if strict or cum(p, head) != (0, 0):
                # the first node, then the other n - 1 through next (recursion folded)
                nxt = head + ("next. (*main.Node)",)
                self.assertCum(c, head, (n, n * node))
                self.assertOwn(c, head, (1, node))
                self.assertOwn(c, nxt, (n - 1, (n - 1) * node))
                self.assertChildren(c, nxt, set())
            else:
                self.assertAtLeast(c, cum(p, (fn,)), (n, n * node),
                                   "cum of %s (head not in a named local)" % fn)
            total = tuple(map(sum, zip(cum(p, bufroot), cum(p, head), cum(p, (fn,)))))
            self.assertAtLeast(c, total, (f["kept_objects"], f["kept_bytes"]),
                               "cum of the roots in %s's frame" % fn)
        self.each_flavor("goroutine", check)

    def test_iface(self):
        """iface/main.go: four interface globals. The objects they point to are walked
        by their dynamic types (*main.Big, main.Small, *main.MyErr, main.OneWord), so
        Big's Payload, MyErr's Msg and OneWord's P are named fields though the static
        types have none."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            self.assertEqual(f["type_name_main.gIface"], "*main.Big")
            self.assertEqual(f["type_name_main.gErr"], "*main.MyErr")
            big, small, myerr = (f["ptr_main.gIface"], f["ptr_main.gAny"], f["ptr_main.gErr"])
            payload = size_at(d, word_at(d, big + f["offsetof_main.Big.Payload"]))
            msg = size_at(d, word_at(d, myerr + f["offsetof_main.MyErr.Msg"]))
            g = ("main.gIface",)
            self.assertOwn(c, g, (1, size_at(d, big)))
            self.assertChildren(c, g, {"Payload. ([]uint8)"})
            self.assertOwn(c, g + ("Payload. ([]uint8)",), (1, payload))
            self.assertCum(c, g, (f["kept_objects_main.gIface"], size_at(d, big) + payload))
            g = ("main.gAny",)
            self.assertOwn(c, g, (1, size_at(d, small)))
            self.assertChildren(c, g, set())
            g = ("main.gErr",)
            self.assertOwn(c, g, (1, size_at(d, myerr)))
            self.assertChildren(c, g, {"Msg. (string)"})
            self.assertOwn(c, g + ("Msg. (string)",), (1, msg))
            self.assertCum(c, g, (f["kept_objects_main.gErr"], size_at(d, myerr) + msg))
            # gWord: OneWord{_ struct{}; P *Small}, in the data word from Go 1.26 and
            # boxed before (the program says which). Either way P names the Small; a
            # box is the interface's own.
            g = ("main.gWord",)
            word = size_at(d, f["ptr_main.gWord.P"])
            box = (1, size_at(d, f["ptr_main.gWord"])) if f["boxed_main.gWord"] else (0, 0)
            self.assertEqual(f["boxed_main.gWord"], go_minor(f["go_version"]) < 26,
                             "the compiler's rule for one-word interface values")
            self.assertOwn(c, g, box)
            self.assertChildren(c, g, {"P. (*main.Small)"})
            self.assertOwn(c, g + ("P. (*main.Small)",), (1, word))
            self.assertChildren(c, g + ("P. (*main.Small)",), set())
        self.each_flavor("iface", check)

    def test_iface_in_heap_struct(self):
        """iface/main.go's main.gHolders: four heap structs {A *Small; V any; B []byte},
        V holding a *Big, a boxed Small, a map[int]*Small and a OneWord (boxed before Go
        1.26). Each holder's three fields are named below it, V's value by its dynamic
        type: the map and the unboxed OneWord are values in the data word that are no
        plain pointer, walked with a frame of their own in the middle of the struct, B
        after them."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            small = size_class(d, f["sizeof_main.Small"])
            dyn = ["*main.Big", "main.Small", "map[int]*main.Small", "main.OneWord"]
            self.assertEqual(f["holders"], len(dyn))
            g = ("main.gHolders",)
            self.assertChildren(c, g, elems(len(dyn), "*main.Holder"))
            for i, typ in enumerate(dyn):
                h = g + (elem(i, "*main.Holder"),)
                a, b, v = "A. (*main.Small)", "B. ([]uint8)", "V. (%s)" % typ
                self.assertOwn(c, h, (1, size_at(d, f["ptr_holder%d" % i])))
                self.assertChildren(c, h, {a, b, v})
                self.assertOwn(c, h + (a,), (1, size_at(d, f["ptr_holder%d.A" % i])))
                self.assertEqual(size_at(d, f["ptr_holder%d.A" % i]), small)
                self.assertOwn(c, h + (b,), (1, size_at(d, f["ptr_holder%d.B" % i])))
                self.assertEqual(size_at(d, f["ptr_holder%d.B" % i]),
                                 size_class(d, (i + 1) * f["holder_bytes"]))
            big = f["ptr_holder0.V"]
            payload = size_at(d, word_at(d, big + f["offsetof_main.Big.Payload"]))
            v = g + (elem(0, "*main.Holder"), "V. (*main.Big)")
            self.assertOwn(c, v, (1, size_at(d, big)))
            self.assertChildren(c, v, {"Payload. ([]uint8)"})
            self.assertOwn(c, v + ("Payload. ([]uint8)",), (1, payload))
            v = g + (elem(1, "*main.Holder"), "V. (main.Small)")
            self.assertOwn(c, v, (1, small))
            self.assertChildren(c, v, set())
            v = g + (elem(2, "*main.Holder"), "V. (map[int]*main.Small)")
            self.assertChildren(c, v, {"$mapval. (*main.Small)"})
            self.assertOwn(c, v + ("$mapval. (*main.Small)",), (1, small))
            self.assertAtLeast(c, own(p, v), (1, size_at(d, f["ptr_holder2.V"])), "the map")
            v = g + (elem(3, "*main.Holder"), "V. (main.OneWord)")
            boxed = go_minor(f["go_version"]) < 26
            self.assertOwn(c, v, (1, size_at(d, f["ptr_holder3.V"])) if boxed else (0, 0))
            self.assertChildren(c, v, {"P. (*main.Small)"})
            self.assertOwn(c, v + ("P. (*main.Small)",), (1, small))
            self.assertEqual(size_at(d, f["ptr_holder3.V.P"]), small)
        self.each_flavor("iface", check)

    def test_chan(self):
        """chan/main.go: main.gChan (cap 64) holds 40 queued *Item in buffer slots 0..39
        (sent into an empty channel nobody receives from)."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            item = size_at(d, f["ptr_first_item"])
            n = f["chan_len"]
            self.assertEqual(n, 40)
            g = ("main.gChan",)
            # hchan and the 64-pointer buffer (a separate object: *Item has pointers)
            self.assertOwn(c, g, (2, size_at(d, f["ptr_main.gChan"]) +
                                  size_class(d, f["chan_cap"] * f["pointer_size"])))
            self.assertElements(c, g, n, "*main.Item", (1, item))
            under = [cum(p, g + (k,)) for k in children(p, g)]
            self.assertEqual(tuple(map(sum, zip(*under))) if under else (0, 0),
                             (n, n * item), show(p, g))
            self.assertAtLeast(c, cum(p, g), (f["kept_objects_main.gChan"],
                                              f["kept_bytes_main.gChan"]), "cum of main.gChan")
        self.each_flavor("chan", check)

    def test_closure(self):
        """closure/main.go: main.gFunc -> the closure object {code, buf, n}; its captured
        buf names the 4096-byte buffer where DWARF gives closure offsets (Go >= 1.23),
        else the buffer is found through the GC bitmap only ($sub_objects$)."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            self.assertEqual(f["closure_func_name"], "main.makeClosure.func1")
            closure = size_at(d, f["ptr_main.gFunc"])
            buf = size_at(d, f["ptr_buf"])
            g = ("main.gFunc",)
            node = g + ("$closure. (%s)" % f["closure_func_name"],)
            child = "buf. ([]uint8)" if go_minor(f["go_version"]) >= 23 else SUB
            self.assertOwn(c, g, (0, 0))
            self.assertChildren(c, g, {node[-1]})
            self.assertOwn(c, node, (1, closure))
            self.assertChildren(c, node, {child})
            self.assertOwn(c, node + (child,), (1, buf))
            self.assertCum(c, g, (f["kept_objects_main.gFunc"], closure + buf))
        self.each_flavor("closure", check)

    def test_closure_in_struct(self):
        """closure/main.go's main.gHandlers: 8 handlers {name string; fn func() int}, each
        fn a closure capturing a 512-byte buffer. A struct of a string and a func is walked
        like any other: the closure is charged to `$closure. (main.makeHandler.func1)`
        below the field `fn. (func() int)`, its buffer below it as `buf. ([]uint8)`
        (closure offsets: Go >= 1.23). (A struct of leaf-kind members is walked without a
        frame of its own; a func member needs one to name its closure, and until 11-27 the
        closure was left to the bitmap, `$sub_objects$`.)"""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            n = f["handler_count"]
            closure = size_at(d, f["ptr_handler_closure"])
            buf = size_at(d, f["ptr_handler_buf"])
            g = ("main.gHandlers",)
            self.assertChildren(c, g, elems(n, "*main.handler"))
            for i in range(n):
                field = g + (elem(i, "*main.handler"), "fn. (func() int)")
                node = field + ("$closure. (%s)" % f["handler_closure"],)
                self.assertChildren(c, field[:-1], {field[-1]})
                self.assertOwn(c, field, (0, 0))
                self.assertChildren(c, field, {node[-1]})
                self.assertOwn(c, node, (1, closure))
                if go_minor(f["go_version"]) >= 23:
                    self.assertChildren(c, node, {"buf. ([]uint8)"})
                    self.assertOwn(c, node + ("buf. ([]uint8)",), (1, buf))
                else:
                    self.assertCum(c, node, (2, closure + buf))
        self.each_flavor("closure", check)

    def test_closures_held_by_timers(self):
        """closure/main.go's 100 time.AfterFunc callbacks, each capturing a 1 KiB buffer,
        held by the runtime's timers (arg, an interface holding the func value): every
        closure object (code pointer and the captured slice: 32 bytes) is charged to a
        node named after its function, `$closure. (main.schedule.func1)`, its buffer
        below it as `buf. ([]uint8)` (closure offsets: Go >= 1.23). With --by-type the
        closures are `type closure main.schedule.func1` and strings' bytes `type string
        data`: what --by-type shows as `type ?` is exactly what the summary counts as
        reached by fallback."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            n = f["timer_bufs"]
            node = "$closure. (%s)" % f["timer_closure"]
            at = [ch for ch in p if ch[-1] == node]
            self.assertTrue(at, show(p, ()))
            self.assertEqual(tuple(map(sum, zip(*[own(p, ch) for ch in at]))),
                             (n, n * size_class(d, 32)))
            if go_minor(f["go_version"]) >= 23:
                bufs = [own(p, ch + ("buf. ([]uint8)",)) for ch in at]
                self.assertEqual(tuple(map(sum, zip(*bufs))),
                                 (n, n * size_class(d, f["timer_buf"])))
            out = os.path.join(_TMP[0], "closure-types-%s.pb.gz" % len(c.flavor))
            code, _, err = heapref("analyze", "--by-type", "-o", out, c.binary, c.dump_path)
            self.assertEqual(code, 0, err)
            by_type = profile.load(out)
            unknown = sum(v[0] for ch, v in by_type.items() if ch[-1] == "type ?")
            fallback = int(re.search(r"by fallback [0-9.]+% \((\d+) objects\)", err).group(1))
            self.assertEqual(unknown, fallback, err)
            self.assertEqual(sum(v[0] for ch, v in by_type.items()
                                 if ch[-1] == "type closure " + f["timer_closure"]), n)
        self.each_flavor("closure", check)

    def test_unsafecast(self):
        """unsafecast/main.go: four echo() results (Object, A's 1024-byte string, the
        heap-moved slice header C points to, its 1024-byte array). main.a is walked by
        type; main.b points inside the Object at B, so A's and C's memory is outside the
        int64 it was reached by; main.p sees a byte, main.u nothing at all. Those three
        find what their view does not cover only through the GC bitmap: $sub_objects$."""
        def check(c):
            f, d, p = c.facts, c.d, c.p

            def parts(obj):
                """Sizes of the Object at obj, its A string, C's slice header, the array."""
                hdr = word_at(d, obj + f["offsetof_main.Object.C"])
                return (size_at(d, obj),
                        size_at(d, word_at(d, obj + f["offsetof_main.Object.A"])),
                        size_at(d, hdr), size_at(d, word_at(d, hdr)))

            o, a, h, arr = parts(f["ptr_main.a"])
            g = ("main.a",)
            self.assertOwn(c, g, (1, o))
            self.assertChildren(c, g, {"A. (string)", "C. (*[]uint8)"})
            self.assertOwn(c, g + ("A. (string)",), (1, a))
            # C's pointee is a slice: the header and its backing array, one node
            self.assertOwn(c, g + ("C. (*[]uint8)",), (2, h + arr))
            self.assertCum(c, g, (f["kept_objects_main.a"], o + a + h + arr))
            # b (*int64) and p (*byte) reach the Object by type, as an int64 or a byte:
            # the Object is theirs, A and C are outside that view
            for var, obj in (("b", f["obj_main.b"]), ("p", f["ptr_main.p"])):
                o, a, h, arr = parts(obj)
                g = ("main." + var,)
                self.assertOwn(c, g, (1, o))
                self.assertChildren(c, g, {SUB})
                self.assertCum(c, g + (SUB,), (3, a + h + arr))
                self.assertCum(c, g, (f["kept_objects_main." + var], o + a + h + arr))
            # u's type reads no pointer (an unsafe.Pointer to an object without a malloc
            # header): its word is followed by the bitmap alone, so the Object itself is
            # below $sub_objects$ too (docs/analysis.md, Roots: main.u -> $sub_objects$)
            o, a, h, arr = parts(f["ptr_main.u"])
            g = ("main.u",)
            self.assertOwn(c, g, (0, 0))
            self.assertChildren(c, g, {SUB})
            self.assertCum(c, g + (SUB,), (f["kept_objects_main.u"], o + a + h + arr))
        self.each_flavor("unsafecast", check)

    def test_finalizer(self):
        """finalizer/main.go: main.gFinal keeps one Res (its finalizer registered); five
        unreachable Res were queued for finalization, the finalizer goroutine runs the
        first and blocks in it. A queued object is a root of its own, so it is charged
        to `$queued_finalizer (*main.Res)` unless a goroutine frame word points at it
        directly (goroutines win the tie at the same depth): which ones do is read from
        the dump's frame records."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            res = size_at(d, f["ptr_main.gFinal"])
            g = ("main.gFinal",)
            self.assertOwn(c, g, (1, res))
            self.assertChildren(c, g, set())
            # the registered finalizer reaches the object's pointer words (Res has
            # none) and main.finalize, a static func value: nothing of its own
            self.assertCum(c, ("$finalizer (*main.Res)",), (0, 0))
            queued = {d.find(q.obj) for q in d.queued_finalizers} - {None}
            self.assertGreaterEqual(len(queued),
                                    f["finalizers_unreachable"] - f["finalizers_started"])
            self.assertTrue(all(d.sizes[k] == res for k in queued))
            from_frames = set()   # or from globals, which win the tie too
            for fr in d.data + d.bss + d.frames:
                for w in d.words(fr):
                    k = d.find(w)
                    if k in queued:
                        from_frames.add(k)
            q = len(queued - from_frames)
            self.assertOwn(c, ("$queued_finalizer (*main.Res)",), (q, q * res))
        self.each_flavor("finalizer", check)

    def test_list(self):
        """list/main.go: main.head -> 100000 Nodes linked by next: the head Node is
        main.head's own, the other 99999 are main.head > next. (*main.Node)'s, as a
        Node reached through a Node folds into the first next. main.ring -> 1000 Rings
        in a next/prev cycle: breadth first, the two directions meet halfway, so next
        and prev hold 499 and 500. main.tree -> a binary tree of depth 10: its root,
        then Left and Right hold their 511-node halves (Right under Left is Left)."""
        self.each_flavor("list", self.check_list_folded)

    def test_list_full_chains(self):
        """--full-chains: one next. (*main.Node) node per depth, cut at the default 256
        named nodes, the rest charged to the 256th; the ring's two directions meet at
        depth 500, so both are cut at 256 too; the tree has a chain per node."""
        for flavor, _ in FLAVORS:
            with self.subTest(program="list", flavor=flavor):
                self.check_list(self.case("list", flavor, "--full-chains"), DEFAULT_MAX_DEPTH)

    def test_cycle(self):
        """cycle/main.go: main.cyc -> a -> b -> c -> a, main.self -> s -> s: each node
        charged once, to the first pointer that reaches it."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            node = size_at(d, f["ptr_a"])
            for k in ("ptr_b", "ptr_c", "ptr_main.self"):
                self.assertEqual(size_at(d, f[k]), node)
            nxt = "next. (*main.CNode)"
            g = ("main.cyc",)
            self.assertOwn(c, g, (1, node))
            if c.full_chains:
                self.assertOwn(c, g + (nxt,), (1, node))
                self.assertOwn(c, g + (nxt, nxt), (1, node))
                self.assertChildren(c, g + (nxt, nxt), set())
            else:   # c, reached through b, folds into b's node
                self.assertOwn(c, g + (nxt,), (2, 2 * node))
                self.assertChildren(c, g + (nxt,), set())
            self.assertCum(c, g, (f["kept_objects_main.cyc"], 3 * node))
            g = ("main.self",)
            self.assertOwn(c, g, (1, node))
            self.assertChildren(c, g, set())
        self.each_flavor("cycle", check)
        check(self.case("cycle", "optimised", "--full-chains"))

    def test_example(self):
        """example/main.go: main.sessions (200 Sessions, each with a key string shared
        as its ID, an 8 KiB Payload, an Events slice of 16 *Event with 256-byte Data),
        main.pool (32 *Conn with 32 KiB rbuf and wbuf), the janitor goroutine's local
        scratch (512 KiB). A key's bytes are reached first from the map's slot (one
        level before the Session's ID field), so they are charged to $mapkey."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            ps = f["pointer_size"]
            ns, ne, nc = f["sessions"], f["events_per_session"], f["conns"]
            sess = size_class(d, f["sizeof_main.Session"])
            event = size_class(d, f["sizeof_main.Event"])
            conn = size_class(d, f["sizeof_main.Conn"])
            key = size_class(d, len("sess-%011d" % 0))
            payload = size_class(d, f["payload_size"])
            data = size_class(d, f["event_data_size"])
            events = size_class(d, ne * ps)   # append grew it to exactly 16 slots
            connbuf = size_class(d, f["conn_buf_size"])
            scratch = size_at(d, f["ptr_janitor.scratch"])

            s = ("main.sessions",)
            mk, mv = s + ("$mapkey. (string)",), s + ("$mapval. (*main.Session)",)
            ev = mv + ("Events. ([]*main.Event)",)
            self.assertChildren(c, s, {mk[-1], mv[-1]})
            self.assertOwn(c, mk, (ns, ns * key))
            self.assertOwn(c, mv, (ns, ns * sess))
            self.assertChildren(c, mv, {"Payload. ([]uint8)", ev[-1]})
            self.assertOwn(c, mv + ("Payload. ([]uint8)",), (ns, ns * payload))
            self.assertOwn(c, ev, (ns, ns * events))
            self.assertChildren(c, ev, elems(ne, "*main.Event"))
            for i in (0, 9, 10):
                per = ns * (1 if i < 10 else ne - 10)
                e = ev + (elem(i, "*main.Event"),)
                self.assertOwn(c, e, (per, per * event))
                self.assertChildren(c, e, {"Data. ([]uint8)"})
                self.assertOwn(c, e + ("Data. ([]uint8)",), (per, per * data))
            o = own(p, s)
            self.assertCum(c, s, (o[0] + ns * (4 + 2 * ne),
                                  o[1] + ns * (key + sess + payload + events + ne * (event + data))))

            pl = ("main.pool",)
            self.assertOwn(c, pl, (1, size_at(d, word_at(d, f["addr_main.pool"]))))
            self.assertChildren(c, pl, elems(nc, "*main.Conn"))
            for i in (0, 9, 10):
                per = 1 if i < 10 else nc - 10
                e = pl + (elem(i, "*main.Conn"),)
                self.assertOwn(c, e, (per, per * conn))
                self.assertChildren(c, e, {"rbuf. ([]uint8)", "wbuf. ([]uint8)"})
                self.assertOwn(c, e + ("rbuf. ([]uint8)",), (per, per * connbuf))
                self.assertOwn(c, e + ("wbuf. ([]uint8)",), (per, per * connbuf))

            fn = f["janitor_function"]
            jan = (fn + ".scratch",)
            if c.flavor == "-N -l" or own(p, jan) != (0, 0):
                self.assertOwn(c, jan, (1, scratch))
                self.assertChildren(c, jan, set())
            else:
                jan = (fn,)
                self.assertAtLeast(c, own(p, jan), (1, scratch),
                                   "own of %s (scratch not in a named local)" % fn)
            for root, k in ((s, "main.sessions"), (pl, "main.pool"), (jan, "janitor")):
                self.assertAtLeast(c, cum(p, root),
                                   (f["kept_objects_" + k], f["kept_bytes_" + k]),
                                   "cum of " + root[0])
            # the ranking the README promises
            ranked = top_roots(p)[:3]
            self.assertEqual(ranked, [s[0], pl[0], jan[0]],
                             "roots by cumulative bytes: %s" % [
                                 (r, profile.cum(p, (r,))) for r in top_roots(p)[:6]])
        self.each_flavor("example", check)

    def test_static(self):
        """static/main.go: package-level pointers to objects the compiler allocates in
        data or bss (an inlined generic constructor's Cache, a `&Registry{...}`), which
        have no DWARF variable of their own: each is walked by the pointer's type, under
        the variable. main.alias = &main.target leaves target's memory to main.target."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            item = size_class(d, f["sizeof_main.Item"])
            nc, nr, nl = f["cache_items"], f["registry_items"], f["list_items"]
            if c.flavor == "optimised":
                # the scenario is real: the Registry at least is not a heap object
                self.assertIsNone(d.find(f["sptr_main.registry"]),
                                  "main.registry's Registry is on the heap: nothing static")
            it = ("main.items",)
            m = it + ("m. (map[int]*main.Item)",)
            self.assertChildren(c, it, {m[-1], "order. ([]int)"})
            self.assertChildren(c, m, {"$mapval. (*main.Item)"})
            mv = m + ("$mapval. (*main.Item)",)
            self.assertOwn(c, mv, (nc, nc * item))
            self.assertChildren(c, mv, {"buf. ([]uint8)"})
            self.assertOwn(c, mv + ("buf. ([]uint8)",), (nc, nc * size_class(d, f["cache_buf"])))
            self.assertOwn(c, it + ("order. ([]int)",),
                           (1, size_at(d, f["ptr_main.items.order"])))

            rg = ("main.registry",)
            bn, al = rg + ("byName. (map[string]*main.Item)",), rg + ("all. ([]*main.Item)",)
            self.assertChildren(c, rg, {bn[-1], al[-1]})
            self.assertOwn(c, bn + ("$mapkey. (string)",), (nr, nr * size_class(d, f["key_size"])))
            self.assertOwn(c, bn + ("$mapval. (*main.Item)",), (nr, nr * item))
            self.assertOwn(c, bn + ("$mapval. (*main.Item)", "buf. ([]uint8)"),
                           (nr, nr * size_class(d, f["registry_buf"])))
            self.assertOwn(c, al, (1, size_at(d, f["ptr_main.registry.all"])))
            self.assertChildren(c, al, elems(nl, "*main.Item"))
            lbuf = size_class(d, f["list_buf"])
            self.assertCum(c, al, (1 + 2 * nl, size_at(d, f["ptr_main.registry.all"]) +
                                   nl * (item + lbuf)))

            tg = ("main.target",)
            self.assertOwn(c, tg + ("data. ([]uint8)",), (1, size_at(d, f["ptr_main.target.data"])))
            self.assertEqual(cum(p, ("main.alias",)), (0, 0),
                             "main.alias points to main.target: target's memory is its own")
            self.assertEqual(top_roots(p)[:3], ["main.items", "main.target", "main.registry"],
                             "roots by cumulative bytes: %s" % [
                                 (r, profile.cum(p, (r,))) for r in top_roots(p)[:6]])
            # nothing of theirs by fallback: more than 99% of all bytes reached by type
            code, _, err = heapref("analyze", "-o", "-", c.binary, c.dump_path)
            m = re.search(r"by type ([0-9.]+)% of bytes", err)
            self.assertTrue(code == 0 and m, err)
            self.assertGreater(float(m.group(1)), 99.0, err)
        self.each_flavor("static", check)

    def test_pieces(self):
        """pieces/main.go: long runs of pointers, which heapref queues in pieces of a few
        KiB, must read as one run walked at once. main.bigList's 20,000 Nodes: [0]..[9]
        and [10+] as for any slice; the static Node it holds (main.seed's, nil since) is
        walked after the whole run, so the later element it also points to (as a Twin)
        is the run's: no `twin. (*main.Twin)` chain. main.tail = other[5000:]: the 5,000
        array words before the view (in its first piece) are left to the GC bitmap, its
        $sub_objects$: those Nodes and their bufs."""
        def check(c):
            f, d = c.facts, c.d
            node = size_class(d, f["sizeof_main.Node"])
            n, static = f["big_n"], d.find(f["sptr_main.seed"]) is None
            bl = ("main.bigList",)
            self.assertOwn(c, bl, (1, size_at(d, f["ptr_main.bigList"])))
            self.assertChildren(c, bl, elems(n, "*main.Node"))
            nbuf = size_class(d, f["node_buf"])
            for i in range(10):
                e = bl + (elem(i, "*main.Node"),)
                self.assertOwn(c, e, (1, node))
                self.assertChildren(c, e, {"buf. ([]uint8)"})
                self.assertOwn(c, e + ("buf. ([]uint8)",), (1, nbuf))
            rest = bl + (elem(10, "*main.Node"),)
            heap_nodes = n - 10 - (1 if static else 0)  # a static Node is no heap object
            self.assertOwn(c, rest, (heap_nodes, heap_nodes * node))
            self.assertChildren(c, rest, {"buf. ([]uint8)"})
            self.assertOwn(c, rest + ("buf. ([]uint8)",),
                           (n - 10, (n - 11) * nbuf + size_class(d, f["seed_buf"])))

            tl, cut = ("main.tail",), f["cut"]
            k = f["other_n"] - cut
            self.assertOwn(c, tl, (1, size_at(d, f["ptr_other"])))
            self.assertChildren(c, tl, elems(k, "*main.Node") | {SUB})
            self.assertOwn(c, tl + (elem(10, "*main.Node"),), (k - 10, (k - 10) * node))
            self.assertCum(c, tl + (SUB,), (2 * cut, cut * (node + size_class(d, f["tail_buf"]))))
        self.each_flavor("pieces", check)

    def test_syncmap(self):
        """syncmap/main.go: main.items (sync.Map, 100 string keys -> *Item with a
        1024-byte buf), main.mixed (sync.Map, 3 entries each of Key -> *Item,
        string -> []byte, string -> string, string -> Pair), main.pool (sync.Pool, 20
        *Buf with 512-byte data). Keys and values are named under the map as plain maps'
        are, by their dynamic types, pooled objects as $pooled; each container's own
        storage (Go <= 1.23: read and dirty maps, entries, boxed values; Go >= 1.24:
        the hash-trie's nodes; the pool's per-P locals and dequeues) is the variable's
        own. A string or slice stored in an interface is boxed: its header is an object
        of its own, charged with its bytes."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            item = size_class(d, f["sizeof_main.Item"])
            strbox = size_class(d, f["sizeof_string"])
            for root in (("main.items",), ("main.mixed",), ("main.pool",)):
                # everything a container holds is reached by type: nothing by bitmap
                if any(ch[:1] == root and SUB in ch for ch in p):
                    self.fail("%s (%s): memory reached by bitmap only:\n%s" % (
                        root[0], c.flavor, show(p, root)))
                # and the variable's chains hold exactly what it keeps reachable
                kept = reach.reachable_from(d, reach.segment_words(
                    d, f["addr_" + root[0]],
                    f["sizeof_sync.Pool" if root[0] == "main.pool" else "sizeof_sync.Map"]))
                self.assertCum(c, root, (len(kept), sum(d.sizes[k] for k in kept)))

            n = f["items"]
            key = size_class(d, f["item_key_size"])
            buf = size_class(d, f["item_buf_size"])
            root = ("main.items",)
            mk, mv = root + ("$mapkey. (string)",), root + ("$mapval. (*main.Item)",)
            self.assertChildren(c, root, {mk[-1], mv[-1]})
            self.assertOwn(c, mk, (2 * n, n * (strbox + key)))
            self.assertChildren(c, mk, set())
            self.assertOwn(c, mv, (n, n * item))
            self.assertChildren(c, mv, {"buf. ([]uint8)"})
            self.assertOwn(c, mv + ("buf. ([]uint8)",), (n, n * buf))
            self.assertChildren(c, mv + ("buf. ([]uint8)",), set())
            # at least one object of the map's own per entry, of three words or more
            # (Go <= 1.23: the entry and the boxed value; Go >= 1.24: the trie entry)
            self.assertAtLeast(c, own(p, root), (n, n * 3 * f["pointer_size"]),
                               "own of main.items (the map's storage)")

            k = f["mixed_per_kind"]
            mkey = size_class(d, f["mixed_key_size"])
            small = size_class(d, f["small_buf_size"])
            slicebox = size_class(d, f["sizeof_slice"])
            root = ("main.mixed",)
            named = {
                "$mapkey. (main.Key)": (k, k * size_class(d, f["sizeof_main.Key"])),
                "$mapkey. (string)": (2 * 3 * k, 3 * k * (strbox + mkey)),
                "$mapval. (*main.Item)": (k, k * item),
                "$mapval. ([]uint8)": (2 * k, k * (slicebox + size_class(d, f["bytes_len"]))),
                "$mapval. (string)": (2 * k, k * (strbox + size_class(d, f["string_len"]))),
                "$mapval. (main.Pair)": (k, k * size_class(d, f["sizeof_main.Pair"])),
            }
            self.assertChildren(c, root, set(named))
            for name, value in named.items():
                self.assertOwn(c, root + (name,), value)
            self.assertChildren(c, root + ("$mapval. (*main.Item)",), {"buf. ([]uint8)"})
            self.assertOwn(c, root + ("$mapval. (*main.Item)", "buf. ([]uint8)"), (k, k * small))
            pair = root + ("$mapval. (main.Pair)",)
            self.assertChildren(c, pair, {"It. (*main.Item)", "Name. (string)"})
            self.assertOwn(c, pair + ("It. (*main.Item)",), (k, k * item))
            self.assertOwn(c, pair + ("It. (*main.Item)", "buf. ([]uint8)"), (k, k * small))
            self.assertOwn(c, pair + ("Name. (string)",), (k, k * size_class(d, f["name_len"])))

            nb = f["bufs"]
            root = ("main.pool",)
            pooled = root + ("$pooled. (*main.Buf)",)
            self.assertChildren(c, root, {pooled[-1]})
            self.assertOwn(c, pooled, (nb, nb * size_class(d, f["sizeof_main.Buf"])))
            self.assertChildren(c, pooled, {"data. ([]uint8)"})
            self.assertOwn(c, pooled + ("data. ([]uint8)",),
                           (nb, nb * size_class(d, f["buf_data_size"])))
            # the per-P locals, [GOMAXPROCS]poolLocal of 128 bytes each, are its own
            self.assertAtLeast(c, own(p, root), (1, 128 * f["gomaxprocs"]),
                               "own of main.pool (the pool's storage)")
            for name in ("main.items", "main.pool"):
                self.assertAtLeast(c, cum(p, (name,)), (f["kept_objects_" + name],
                                                       f["kept_bytes_" + name]),
                                   "cum of " + name)
        self.each_flavor("syncmap", check)

    def test_server(self):
        """server/main.go: a net/http server whose 20 handlers (main.upload) are blocked,
        each holding a 64 KiB buf local. An optimised build keeps buf in pieces (its
        pointer in a stack slot, length and capacity nowhere): the buffers are still
        charged to the variable, main.upload.buf, not to the function main.upload."""
        def check(c):
            f, d, p = c.facts, c.d, c.p
            buf = size_class(d, f["buf_size"])
            root = (f["handler_function"] + ".buf",)
            self.assertEqual({size_at(d, a) for a in f["buf_addrs"]}, {buf})
            self.assertOwn(c, root, (f["handlers"], f["handlers"] * buf))
            self.assertLess(cum(p, (f["handler_function"],))[1], buf,
                            "a buffer charged to the function, not to buf")
        self.each_flavor("server", check)


class AnalyzeStrippedBinary(unittest.TestCase):
    """A binary without DWARF (-ldflags=-w) or also without symbols (-s -w) still gives a
    profile, with a warning: bitmap-only chains, every reachable object in it once. The
    finalizer program has finalizer roots, whose walk once crashed without DWARF."""

    def test_stripped_binaries(self):
        for ldflags, root in (("-w", "main.gFinal"), ("-s -w", None)):
            with self.subTest(ldflags=ldflags):
                binary, dump, facts = progs.prepare("finalizer", WORK, go=GO, env=ENV,
                                                    ldflags=ldflags)
                out = os.path.join(tempfile.mkdtemp(prefix="heapref-stripped-"), "p.pb.gz")
                try:
                    code, _, stderr = heapref("analyze", "-o", out, binary, dump)
                    self.assertEqual(code, 0, stderr)
                    self.assertIn("warning: %s: no DWARF" % binary, stderr)
                    p = profile.read(out)
                    r = reach.reachable(reach.load(dump))
                    self.assertEqual(profile.totals(p), (r.objects, r.bytes))
                    if root:  # the ELF symbol names the global's data word
                        got = profile.cum(p, (root,))
                        self.assertGreaterEqual(got[0], facts["kept_objects_main.gFinal"])
                        self.assertGreaterEqual(got[1], facts["kept_bytes_main.gFinal"])
                finally:
                    shutil.rmtree(os.path.dirname(out), ignore_errors=True)


class AnalyzeMaxDepth(AnalyzeTestCase):
    def test_max_depth_3_on_list(self):
        """--max-depth 3 --full-chains: no chain has more than 3 names; the list's and
        the ring's deeper nodes are charged to their third name; totals are unchanged."""
        for flavor, _ in FLAVORS:
            with self.subTest(program="list", flavor=flavor):
                c = self.case("list", flavor, "--full-chains", "--max-depth", "3")
                longest = max(len(ch) for ch in c.p)
                self.assertLessEqual(longest, 3, "a chain of %d names:\n%s" % (
                    longest, show(c.p, max(c.p, key=len)[:1], 10)))
                self.assertEqual(tuple(profile.totals(c.p)), (c.reach.objects, c.reach.bytes))
                self.check_list(c, 3)


class AnalyzeBadUsage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, _ = progs.prepare("cycle", WORK, go=GO, env=ENV)

    def test_usage_errors_exit_2(self):
        for args in ([], [self.binary], ["--max-depth"], ["--max-depth", "x", self.binary, self.dump],
                     ["--frobnicate", self.binary, self.dump],
                     [self.binary, self.dump, "extra"]):
            with self.subTest(args=args), tempfile.TemporaryDirectory() as cwd:
                code, _, err = heapref("analyze", *args, cwd=cwd)
                self.assertEqual(code, 2, err)
                self.assertTrue(err.startswith("heapref: "), err)
                self.assertEqual(os.listdir(cwd), [])

    def test_missing_files_exit_1(self):
        """One line on stderr naming the file; no output left behind, neither -o FILE
        nor the default heapref.pb.gz."""
        with tempfile.TemporaryDirectory() as cwd:
            missing = os.path.join(cwd, "nonexistent", "x.dump")
            not_a_dump = self.binary   # an ELF file is not a heap dump
            out = os.path.join(cwd, "out.pb.gz")
            for args, named in (([self.binary, missing], missing),
                                ([missing, self.dump], missing),
                                ([self.binary, not_a_dump], not_a_dump)):
                for o in (["-o", out], []):
                    with self.subTest(args=args, output=o):
                        code, _, err = heapref("analyze", *(o + args), cwd=cwd)
                        self.assertEqual(code, 1, err)
                        self.assertEqual(len(err.splitlines()), 1, err)
                        self.assertIn(named, err)
                        self.assertEqual(os.listdir(cwd), [], "left behind")

    def test_output_errors_exit_3(self):
        """An output that cannot be written is exit status 3, one line naming it; an
        existing file of that name is left as it was."""
        with tempfile.TemporaryDirectory() as cwd:
            unwritable = os.path.join(cwd, "no-such-dir", "p.pb.gz")
            code, _, err = heapref("analyze", "-o", unwritable, self.binary, self.dump, cwd=cwd)
            self.assertEqual(code, 3, err)
            self.assertIn(unwritable, err)
            self.assertEqual(os.listdir(cwd), [])
            existing = os.path.join(cwd, "old.pb.gz")
            with open(existing, "w") as f:
                f.write("keep me")
            code, _, err = heapref("analyze", "-o", existing, self.binary,
                                   os.path.join(cwd, "missing.dump"), cwd=cwd)
            self.assertEqual(code, 1, err)
            with open(existing) as f:
                self.assertEqual(f.read(), "keep me")
            self.assertEqual(os.listdir(cwd), ["old.pb.gz"])

    def test_default_output_and_stats(self):
        """Without -o the profile is heapref.pb.gz in the working directory; --stats
        changes only what is said on stderr."""
        with tempfile.TemporaryDirectory() as cwd:
            code, _, err = heapref("analyze", self.binary, self.dump, cwd=cwd)
            self.assertEqual(code, 0, err)
            self.assertTrue(err.strip(), "no summary on stderr")
            default = os.path.join(cwd, "heapref.pb.gz")
            self.assertEqual(os.listdir(cwd), ["heapref.pb.gz"])
            stats = os.path.join(cwd, "stats.pb.gz")
            code, _, err = heapref("analyze", "--stats", "-o", stats, self.binary, self.dump,
                                   cwd=cwd)
            self.assertEqual(code, 0, err)
            self.assertEqual(profile.read(stats), profile.read(default))


if __name__ == "__main__":
    unittest.main()
