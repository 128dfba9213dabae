# SPDX-License-Identifier: Apache-2.0
"""Every output of heapref on the test programs, as digests, to compare two builds.

A refactoring must not change what heapref writes. This runs one heapref binary over
every scenario of testprogs/ (built with the matrix entries asked for), every command
and view, and a core of some of them, and records the bytes of each output (the file
written, standard output, standard error with its timings blanked) as a SHA-256 digest
(the cores are kept in HEAPREF_WORK/golden-cores, for the next build to read the same);
--compare then lists the runs whose outputs differ between two such records.

    HEAPREF=/old/heapref python3 tests/tools/golden_outputs.py old.json
    HEAPREF=build/heapref python3 tests/tools/golden_outputs.py new.json
    python3 tests/tools/golden_outputs.py --compare old.json new.json

Options: --entries go1.19,go1.26 (matrix entries, tests/e2e/toolchains.py; default
go1.19,go1.22,go1.24,go1.26), --no-cores. HEAPREF_WORK caches the built programs as the
end-to-end tests do. Standard library only.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import progs  # noqa: E402
import toolchains  # noqa: E402

DEFAULT_ENTRIES = "go1.19,go1.22,go1.24,go1.26"
CORE_PROGRAMS = ("example", "cache", "goroutine", "finalizer", "syncmap")

# The views of one BINARY DUMP: (name, arguments before BINARY DUMP, writes -o FILE).
VIEWS = (
    ("analyze", ["analyze"], True),
    ("analyze-full-chains", ["analyze", "--full-chains"], True),
    ("analyze-no-labels", ["analyze", "--no-goroutine-labels"], True),
    ("analyze-examples", ["analyze", "--examples", "2"], True),
    ("analyze-dominator", ["analyze", "--attribution", "dominator"], True),
    ("analyze-by-alloc", ["analyze", "--by-alloc"], True),
    ("analyze-by-type", ["analyze", "--by-type"], True),
    ("analyze-types-first", ["analyze", "--types-first"], True),
    ("analyze-threads-1", ["analyze", "--threads", "1"], True),
    ("text", ["analyze", "--text", "--cutoff", "0"], False),
    ("text-by-index", ["analyze", "--text", "--by-index"], False),
    ("retained", ["retained", "-n", "40"], False),
    ("retained-tsv", ["retained", "--format", "tsv", "-n", "40"], False),
    ("goroutines", ["goroutines"], False),
    ("goroutines-tsv", ["goroutines", "--format", "tsv"], False),
    ("hprof", ["hprof"], True),
    ("allocs", ["allocs"], True),
)

TIMES = re.compile(r"\b\d+\.\d+ s\b|stopped for \d+\.\d+ s")


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def run(args, out_file=None, cwd=None):
    """One heapref run: its status and the digests of what it wrote. Run in cwd with
    relative names, so that messages name the same files from one run to the next."""
    p = subprocess.run([progs.HEAPREF] + [str(a) for a in args], capture_output=True,
                       timeout=900, cwd=cwd)
    err = TIMES.sub("T s", p.stderr.decode(errors="replace"))
    rec = {"status": p.returncode, "stdout": digest(p.stdout), "stderr": err}
    if out_file:
        path = os.path.join(cwd or ".", out_file)
        try:
            with open(path, "rb") as f:
                rec["file"] = digest(f.read())
            os.remove(path)
        except OSError:
            rec["file"] = None
    return rec


def views_of(binary, heap, tmp):
    """Every view of one heap (a dump or a core) with its binary, linked into tmp as
    "prog" and "heap" (or "heap.core")."""
    heap_name = "heap.core" if heap.endswith(".core") else "heap"
    for name, target in (("prog", binary), (heap_name, heap)):
        if os.path.lexists(os.path.join(tmp, name)):
            os.remove(os.path.join(tmp, name))
        os.symlink(target, os.path.join(tmp, name))
    binary, heap = "prog", heap_name
    recs = {}
    for name, args, writes in VIEWS:
        full = args + (["-o", "out"] if writes else []) + [binary, heap]
        recs[name] = run(full, "out" if writes else None, cwd=tmp)
    recs["info"] = run(["info", binary, heap] if heap.endswith(".core") else ["info", heap],
                       cwd=tmp)
    recs["diff-text"] = run(["diff", "--text", binary, heap, binary, heap], cwd=tmp)
    recs["diff"] = run(["diff", "-o", "out", binary, heap, binary, heap], "out", cwd=tmp)
    return recs


def core_of(binary, key, tmp):
    """A core of the program held after its dump (heapref --pid --save-core), kept in
    HEAPREF_WORK/golden-cores (both builds must read the same core); or None."""
    keep = os.path.join(progs.WORK, "golden-cores")
    core = os.path.join(keep, key.replace("/", "-") + ".core")
    if os.path.exists(core) and os.path.getmtime(core) > os.path.getmtime(binary):
        return core
    os.makedirs(keep, exist_ok=True)
    try:
        _, (st, _, err) = progs.run_held(binary, os.path.join(tmp, "held.dump"), lambda pid: (
            progs.heapref("analyze", "--pid", pid, "--save-core", core, binary, "-o",
                          os.path.join(tmp, "held.pb.gz"))))
    except progs.ProgError:
        return None
    return core if st == 0 else None


LEGACY_PROGRAMS = ("cache", "iface", "list", "goroutine", "finalizer")


def legacy(tmp):
    """The go1.3 and go1.4 layouts: test_legacy.py's hand-made dumps, read alone, and real
    dumps rewritten in those layouts, read with their binary and alone."""
    import dumpfmt
    import test_legacy
    out = {}
    heaps = [("fixture", None, test_legacy.fixture13(), 3),
             ("fixture", None, test_legacy.fixture14(), 4)]
    for prog in LEGACY_PROGRAMS:
        binary, dump, _ = progs.prepare(prog, progs.WORK)
        with open(dump, "rb") as f:
            buf = f.read()
        for minor in (3, 4):
            heaps.append((prog, binary, dumpfmt.convert(buf, minor), minor))
    for name, binary, data, minor in heaps:
        path = os.path.join(tmp, "heap")
        with open(path, "wb") as f:
            f.write(data)
        for with_binary in ((False, True) if binary else (False,)):
            key = "legacy/go1.%d/%s/%s" % (minor, name, "binary" if with_binary else "alone")
            args = [binary, "heap"] if with_binary else ["heap"]
            for view, argv, writes in VIEWS:
                if view in ("hprof", "allocs") and not with_binary:
                    continue
                full = argv + (["-o", "out"] if writes else []) + args
                out["%s/%s" % (key, view)] = run(full, "out" if writes else None, cwd=tmp)
            out["%s/info" % key] = run(["info", "heap"], cwd=tmp)
    return out


def record(entries, cores):
    out = {}
    tmp = tempfile.mkdtemp(prefix="heapref-golden-")
    try:
        out.update(legacy(tmp))
        for name in entries:
            e = toolchains.entry(name)
            for prog in progs.PROGRAMS:
                binary, dump, _ = progs.prepare(prog, progs.WORK, env=e.env)
                key = "%s/%s" % (name, prog)
                for view, rec in views_of(binary, dump, tmp).items():
                    out["%s/dump/%s" % (key, view)] = rec
                if cores and e.goarch is None and prog in CORE_PROGRAMS:
                    core = core_of(binary, key, tmp)
                    if core:
                        for view, rec in views_of(binary, core, tmp).items():
                            out["%s/core/%s" % (key, view)] = rec
                print("%s: %d runs" % (key, len(out)), file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def compare(a_path, b_path):
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    differ = 0
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            differ += 1
            print("differs: %s" % key)
            for field in ("status", "stdout", "file", "stderr"):
                va, vb = (a.get(key) or {}).get(field), (b.get(key) or {}).get(field)
                if va != vb:
                    print("  %s: %r\n  %s  %r" % (field, va, " " * len(field), vb))
    print("%d of %d runs differ" % (differ, len(set(a) | set(b))))
    return 1 if differ else 0


def main(argv):
    if len(argv) == 3 and argv[0] == "--compare":
        return compare(argv[1], argv[2])
    entries, cores, paths = DEFAULT_ENTRIES, True, []
    it = iter(argv)
    for a in it:
        if a == "--entries":
            entries = next(it)
        elif a == "--no-cores":
            cores = False
        else:
            paths.append(a)
    if len(paths) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = record(entries.split(","), cores)
    with open(paths[0], "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("%d runs recorded in %s" % (len(out), paths[0]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
