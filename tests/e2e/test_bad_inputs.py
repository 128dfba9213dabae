# SPDX-License-Identifier: Apache-2.0
"""What heapref does with bad inputs, checked, and written down in docs/bad-inputs.md.

Every case runs the real heapref binary (`info`, and `analyze` with a real binary of
testprogs/finalizer built by progs.prepare) in a fresh directory, and checks:

  - the exit status (1 bad input, 3 output error, 4 the dump was not written by the
    binary, 0 where heapref reads the input anyway);
  - on failure: exactly one line on stderr, starting "heapref: ", naming the file and,
    for a malformed dump, the byte offset of the fault (where the test knows it: the
    record it damaged, or the exact field of a hand-built dump);
  - no crash: no signal, no sanitizer report;
  - no partial output: nothing on stdout, no file left behind, and an existing
    out.pb.gz (written before every analyze run) untouched;
  - on success: a profile that accounts for exactly the objects and bytes an independent
    reachability computation (reach.py) finds reachable in the same (damaged) dump.

Every run but those under ASan (which reserves terabytes of address space) has its
address space limited to 4 times the size of its inputs plus 512 MiB (RLIMIT_AS), so an
allocation sized by a field of the file fails the test; cases that claim huge lengths or
counts also have to finish within BOUNDED_SECONDS.

The inputs (docs/bad-inputs.md lists every one):
  - the dump of testprogs/finalizer (the scenario whose dump holds the most record
    kinds, queued finalizers included), built with the machine's Go (HEAPREF_GO,
    HEAPREF_GOTOOLCHAIN as in test_analyze.py): truncated at every record boundary,
    cut inside records, bytes flipped, its params record patched (4-byte pointers, big
    endian), its pointer graph rewritten into cycles. Its byte offsets and counts depend
    on the Go version and the run, so the doc shows them as N.
  - hand-built dumps, written byte by byte below (DumpWriter): one with a record of
    every kind (cut one byte short inside each, and at every byte), and the ones that
    claim huge lengths and counts. Their offsets are exact in the doc.
  - files that are not dumps or not Go binaries, missing, unreadable, and outputs that
    cannot be written.

Sampling (to keep the suite affordable: about 20 s of CPU time, 45 s under ASan): every
record boundary of the real dump is cut, and every non-object record is cut at three
points (after its kind byte, in the middle, one byte short), but object records (most of
the file) only in a deterministic sample: OBJECT_SAMPLE evenly spaced objects,
OBJECT_SAMPLE_ASAN under ASan (fewer flips too). The hand-built every-kind dump is cut at
every byte and flipped at every byte (info only), in both builds.

The doc is generated, never edited by hand. If heapref's behaviour changes on purpose:

    HEAPREF=build/heapref python3 tests/e2e/test_bad_inputs.py --write-doc docs/bad-inputs.md

Environment: HEAPREF (the binary, set by ctest), HEAPREF_WORK (cache of built programs).
"""

import collections
import ctypes
import gzip
import os
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import core_patch  # noqa: E402
import dumpfmt  # noqa: E402
import progs  # noqa: E402
import reach  # noqa: E402
import test_legacy  # noqa: E402  (its hand-made go1.3 and go1.4 dumps)

ROOT, HEAPREF, WORK, GO, ENV = progs.ROOT, progs.HEAPREF, progs.WORK, progs.GO, progs.ADHOC_ENV
DOC = os.path.join(ROOT, "docs", "bad-inputs.md")
REGENERATE = ("HEAPREF=build/heapref python3 tests/e2e/test_bad_inputs.py "
              "--write-doc docs/bad-inputs.md")

OBJECT_SAMPLE = 256
OBJECT_SAMPLE_ASAN = 48
FLIPS = 64              # evenly spaced flipped bytes in the real dump
BOUNDED_SECONDS = 20    # for inputs that claim huge lengths or counts
RUN_TIMEOUT = 300
VERBOSE = bool(os.environ.get("HEAPREF_VERBOSE"))   # time taken by each group of cases
# The Go version in hand-built dumps: fixed, so that their offsets (in the doc) do not
# move with the toolchain; analyze --force then names it among the differences.
HAND_BUILT_VERSION = b"go1.26.8"
SENTINEL = b"an older profile: a failed analyze must leave it as it is\n"
PRLIMIT = shutil.which("prlimit")   # util-linux
SANITIZER = re.compile(r"Sanitizer|runtime error:|==\d+==")


ASAN = progs.is_asan_build(HEAPREF) if os.path.exists(HEAPREF) else False


# -- the dump format, from its description (not from heapref's reader): dumpfmt.py ------

Record = collections.namedtuple("Record", "kind start end contents size offsets")


def walk_records(buf):
    """Every record of a well-formed dump: kind, [start, end), and for objects the
    contents position, size and pointer offsets."""
    out, i = [], 16
    while True:
        start = i
        kind, i = dumpfmt.uvarint(buf, i)
        contents = size = offsets = None
        if kind == reach.OBJECT:
            _, i = dumpfmt.uvarint(buf, i)
            size, i = dumpfmt.uvarint(buf, i)
            contents = i
            offsets, i = dumpfmt.field_list(buf, i + size)
        elif kind == reach.MEMPROF:
            _, i = dumpfmt.uvarint(buf, i)
            _, i = dumpfmt.uvarint(buf, i)
            nframes, i = dumpfmt.uvarint(buf, i)
            for _ in range(nframes):
                for t in "ssu":
                    i = skip_field(buf, i, t)
            for t in "uu":
                i = skip_field(buf, i, t)
        elif kind != reach.EOF:
            for t in reach.LAYOUTS[kind][0]:
                i = skip_field(buf, i, t)
        out.append(Record(kind, start, i, contents, size, offsets))
        if kind == reach.EOF:
            return out


def skip_field(buf, i, t):
    if t in "ub":
        return dumpfmt.uvarint(buf, i)[1]
    if t in "sc":
        n, i = dumpfmt.uvarint(buf, i)
        return i + n
    return dumpfmt.field_list(buf, i)[1]


KIND_NAMES = ("EOF", "object", "other root", "type", "goroutine", "stack frame", "params",
              "finalizer", "itab", "OS thread", "memstats", "queued finalizer",
              "data segment", "bss segment", "defer", "panic", "memory profile",
              "alloc sample")


class DumpWriter:
    """Writes a heap dump byte by byte, remembering where each record and field is."""

    def __init__(self, version=HAND_BUILT_VERSION, header=b"go1.7 heap dump\n"):
        self.version = version
        self.buf = bytearray(header)
        self.records = []        # (kind, start, end)
        self.fields = {}         # label -> offset of that field

    def record(self, kind, *fields):
        """fields: int (uvarint), bytes (length + bytes), ("raw", bytes),
        ("fields", [offsets]) (a field list), or (label, field) to remember where it is."""
        start = len(self.buf)
        self.buf += dumpfmt.put_uvarint(kind)
        for f in fields:
            if isinstance(f, tuple) and f[0] not in ("raw", "fields"):
                self.fields[f[0]] = len(self.buf)
                f = f[1]
            self.buf += self._encode(f)
        self.records.append((kind, start, len(self.buf)))
        return start

    @staticmethod
    def _encode(f):
        if isinstance(f, int):
            return dumpfmt.put_uvarint(f)
        if isinstance(f, (bytes, bytearray)):
            return dumpfmt.put_string(f)
        if f[0] == "raw":
            return bytes(f[1])
        return dumpfmt.put_field_list(f[1])

    def params(self, heap=(0xC000000000, 0xC000400000), big_endian=0, ptr_size=8):
        return self.record(reach.PARAMS, big_endian, ptr_size, heap[0], heap[1], b"amd64",
                           self.version, 2)

    def obj(self, addr, contents, offsets=()):
        return self.record(reach.OBJECT, addr, contents, ("fields", list(offsets)))

    def eof(self):
        return self.record(reach.EOF)

    def bytes(self):
        return bytes(self.buf)


def word(v):
    return v.to_bytes(8, "little")


A, B = 0xC000010000, 0xC000010010   # the hand-built dumps' two objects


def every_kind_dump(version=HAND_BUILT_VERSION):
    """A small well-formed dump with one record of each of the 18 kinds."""
    w = DumpWriter(version)
    w.params()
    w.record(reach.TYPE, 0x4A0000, 16, b"main.T", 0)
    w.record(reach.ITAB, 0x4B0000, 0x4A0000)
    w.obj(A, word(B) + word(0), [0])
    w.obj(B, word(A) + word(B) + bytes(16), [0, 8])
    w.record(reach.OTHER_ROOT, b"a root", A)
    w.record(reach.GOROUTINE, 0xC000020000, 0xC000030000, 1, 0x401000, 4, 0, 0, 0,
             b"chan receive", 0, 0xC000040000, 0, 0)
    w.record(reach.FRAME, 0xC000030000, 0, 0, word(0) + word(B), 0x401000, 0x401010,
             0x401010, b"main.main", ("fields", [8]))
    w.record(reach.DEFER, 0xC000050000, 0xC000020000, 0xC000030000, 0x401020, 0x4C0000,
             0x401030, 0)
    w.record(reach.PANIC, 0xC000060000, 0xC000020000, 0x4A0000, 0xC000010000, 0, 0)
    w.record(reach.FINALIZER, A, 0x4C0000, 0x401040, 0x4A0000, 0x4A0000)
    w.record(reach.QUEUED_FINALIZER, B, 0x4C0000, 0x401040, 0x4A0000, 0x4A0000)
    w.record(reach.OS_THREAD, 0xC000040000, 1, 4242)
    w.record(reach.DATA, 0x5A0000, word(A) + word(7), ("fields", [0]))
    w.record(reach.BSS, 0x5B0000, bytes(16), ("fields", []))
    w.record(reach.MEMSTATS, *([1] * (24 + 256 + 1)))
    w.record(reach.MEMPROF, 1, 32, 2, b"main.main", b"main.go", 10, b"runtime.main",
             b"proc.go", 250, 3, 1)
    w.record(reach.ALLOC_SAMPLE, A, 1)
    w.eof()
    return w


# -- reading a profile without heapref: gzip, then the protobuf wire format --------------

def _pb_fields(buf):
    i = 0
    while i < len(buf):
        key, i = dumpfmt.uvarint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = dumpfmt.uvarint(buf, i)
        elif wire == 2:
            n, i = dumpfmt.uvarint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            v, i = buf[i:i + n], i + n
        else:
            raise ValueError("protobuf wire type %d" % wire)
        yield field, wire, v


def profile_totals(data):
    """(objects, bytes) summed over the samples of a gzipped pprof profile."""
    total = [0, 0]
    for field, wire, sample in _pb_fields(gzip.decompress(data)):
        if field != 2 or wire != 2:   # Profile.sample
            continue
        values = []
        for f, w, v in _pb_fields(sample):
            if f == 2 and w == 2:     # Sample.value, packed
                j = 0
                while j < len(v):
                    x, j = dumpfmt.uvarint(v, j)
                    values.append(x)
            elif f == 2:
                values.append(v)
        total[0] += values[0]
        total[1] += values[1]
    return tuple(total)


# -- running heapref ---------------------------------------------------------------------

Result = collections.namedtuple("Result", "code out err lines seconds changes")

_libc = ctypes.CDLL(None, use_errno=True)
PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


def _drop_file_capabilities():
    """In the child, as root: lose the capabilities that read any file (chmod 000
    stops only processes without them). Not needed, and not allowed, for others."""
    if os.geteuid() != 0:
        return
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


class Lab:
    """A scratch directory the cases run heapref in, with their inputs in it (so
    messages name short relative paths), and what the cases found."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="heapref-badin-")
        self.rows = []        # (input, what was done, exit, first stderr line, outcome)
        self.problems = []    # (input, problem)
        self.replace = {}     # text -> placeholder, for lines that depend on the toolchain

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return name

    def link(self, name, target):
        os.symlink(os.path.abspath(target), self.path(name))
        return name

    def remove(self, name):
        p = self.path(name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        elif os.path.lexists(p):
            os.remove(p)

    def _snapshot(self):
        snap = {}
        for name in os.listdir(self.dir):
            st = os.lstat(self.path(name))
            snap[name] = (st.st_size, st.st_mtime_ns, st.st_mode)
        return snap

    def _limit(self, args):
        """RLIMIT_AS for a run: 4 x its inputs + 512 MiB (none under ASan)."""
        if ASAN:
            return None
        size = sum(os.path.getsize(self.path(a)) for a in args
                   if os.path.isfile(self.path(a)))
        return 4 * size + (512 << 20)

    def run(self, *args, stdout=None, fsize=None, drop_caps=False, hold=None, env=None):
        """Runs heapref with args in the lab; an analyze run finds an older out.pb.gz.
        hold: HEAPREF_TEST_HOLD_STOPPED, for --pid; env: more of the environment."""
        args = [str(a) for a in args]
        env = dict(os.environ, **(env or {}))
        if hold:
            env["HEAPREF_TEST_HOLD_STOPPED"] = str(hold)
        if args[0] == "analyze":
            self.write("out.pb.gz", SENTINEL)
        limit = self._limit(args)

        def preexec():
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            if drop_caps:
                _drop_file_capabilities()

        argv = [HEAPREF] + args
        if limit and PRLIMIT and not (fsize is not None or drop_caps):
            argv = [PRLIMIT, "--as=%d" % limit, "--"] + argv
            limit = None
        before = self._snapshot()
        t0 = time.monotonic()
        p = subprocess.run(argv, cwd=self.dir, stdin=subprocess.DEVNULL,
                           stdout=stdout or subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=preexec if limit or fsize is not None or drop_caps
                           else None, timeout=RUN_TIMEOUT, env=env,
                           restore_signals=fsize is None)   # SIGXFSZ stays ignored
        seconds = time.monotonic() - t0
        err = p.stderr.decode(errors="replace")
        return Result(p.returncode, p.stdout or b"", err, err.splitlines(), seconds,
                      self._changes(before, args))

    def _changes(self, before, args):
        after = self._snapshot()
        changes = ["left %s" % n for n in sorted(set(after) - set(before))]
        changes += ["removed %s" % n for n in sorted(set(before) - set(after))]
        changes += ["changed %s" % n for n in sorted(set(before) & set(after))
                    if n != "out.pb.gz" and before[n] != after[n]]
        if args[0] == "analyze" and "out.pb.gz" in after:
            with open(self.path("out.pb.gz"), "rb") as f:
                if f.read() != SENTINEL:
                    changes.append("changed out.pb.gz")
        return changes

    # -- what a run should look like ----------------------------------------------------

    def refusal(self, res, status, names, offset=None):
        """Problems with res as a refusal: exit status, one line naming names (and
        byte offset, an int or True for any), no crash, no output of any kind."""
        probs = crash(res)
        if res.code != status:
            probs.append("exit %d, want %d" % (res.code, status))
        if len(res.lines) != 1:
            probs.append("%d lines on stderr, want 1: %r" % (len(res.lines), res.err[:600]))
        line = res.lines[0] if res.lines else ""
        if not line.startswith("heapref: "):
            probs.append("the line does not start with 'heapref: ': %r" % line)
        for name in names:
            if name not in line:
                probs.append("the line does not name %s: %r" % (name, line))
        if offset is True:
            if not re.search(r"\bbyte \d+\b", line):
                probs.append("the line names no byte offset: %r" % line)
        elif offset is not None and "byte %d:" % offset not in line:
            probs.append("the line does not name byte %d: %r" % (offset, line))
        if res.out:
            probs.append("%d bytes on stdout" % len(res.out))
        probs += res.changes
        return probs

    def quick(self, res, seconds):
        """A refusal before the stop ends before a held stop would (seconds)."""
        if res.seconds >= seconds:
            return ["took %.1f s: the process was stopped and held" % res.seconds]
        return []

    def profile_problems(self, res, dump_bytes, out=None):
        """Problems with res as a successful analyze: a profile (in out.pb.gz, or the
        bytes out) accounting for what reach.py finds reachable in dump_bytes."""
        probs = crash(res)
        if res.code != 0:
            return probs + ["exit %d: %s" % (res.code, res.err.strip()[:600])]
        if out is None:   # the profile replaced out.pb.gz
            probs += [c for c in res.changes if c != "changed out.pb.gz"]
            with open(self.path("out.pb.gz"), "rb") as f:
                out = f.read()
        else:
            probs += res.changes
        try:
            got = profile_totals(out)
        except (OSError, EOFError, ValueError, IndexError, zlib.error) as e:
            return probs + ["the profile does not decode: %s" % e]
        try:
            r = reach.reachable(reach.parse(dump_bytes))
        except reach.DumpError as e:
            return probs + ["reach.py cannot read the dump heapref read: %s" % e]
        if got != (r.objects, r.bytes):
            probs.append("profile has %d objects, %d bytes; reach.py finds %d, %d reachable"
                         % (got[0], got[1], r.objects, r.bytes))
        return probs

    # -- the table ----------------------------------------------------------------------

    def add(self, what, done, status, line, probs, outcome):
        """One row; its outcome is the expected one only if nothing went wrong."""
        for p in probs:
            self.problems.append((what, p))
        if probs:
            outcome = "PROBLEM: " + "; ".join(sorted(set(probs)))[:300]
        self.rows.append((what, done, str(status), self.normalise(line), outcome))

    def normalise(self, line):
        for text, placeholder in self.replace.items():
            line = line.replace(text, placeholder)
        return line


def crash(res):
    probs = []
    if res.code < 0:
        probs.append("killed by signal %d" % -res.code)
    if SANITIZER.search(res.err):
        probs.append("sanitizer report: %r" % res.err[:600])
    return probs


def numbers_as_n(line):
    """Offsets and counts of the real dump vary with the Go version and the run; so do
    where the test programs are built and their Go build IDs."""
    line = re.sub(r"0x[0-9a-f]+", "0xN", line)
    line = re.sub(r"\d+\.\d+", "N", line)
    line = re.sub(r"runs /\S+/(\w+) \(Go build ID [^)]*\)", r"runs .../\1 (Go build ID ...)", line)
    line = re.sub(r"\((?:[\w-]{20}/){3}[\w-]{20}\)", "(Go build ID ...)", line)
    return re.sub(r"(?<![\w.-])\d+(?![\w-])", "N", line)


def first_line(res):
    """The first line of a run's stderr, its varying numbers as N (numbers_as_n())."""
    return numbers_as_n(res.lines[0]) if res.lines else ""


def elide_differences(line):
    """A mismatch line without its list of differences (which depend on the binaries
    and the toolchain; the test checks them, the doc shows the frame of the line)."""
    return re.sub(r"^(heapref: (?:warning: )?\S+ (?:was not|does not look) written by \S+): "
                  r".*?( \(--force analyses anyway\)|; analysing anyway .*)$",
                  r"\1: ...\2", line)


def sample(seq, n):
    """n elements of seq, evenly spaced, first and last included (all if fewer)."""
    seq = list(seq)
    if len(seq) <= n:
        return seq
    return [seq[round(k * (len(seq) - 1) / (n - 1))] for k in range(n)]


def cmd(*args):
    return "`heapref %s`" % " ".join(args)


# -- the cases ---------------------------------------------------------------------------

class Cases:
    """The cases, in the order of the doc's table. Each adds rows to lab."""

    def __init__(self, lab):
        self.lab = lab
        binary, dump, facts = progs.prepare("finalizer", WORK, go=GO, env=ENV)
        self.go_version = facts["go_version"]
        lab.replace[self.go_version] = "go1.N"
        self.bin = lab.link("finalizer", binary)
        self.dump = lab.link("finalizer.dump", dump)
        with open(dump, "rb") as f:
            self.buf = f.read()
        self.recs = walk_records(self.buf)
        self.objects = [r for r in self.recs if r.kind == reach.OBJECT]
        self.others = [r for r in self.recs if r.kind != reach.OBJECT]
        self.sampled = sample(self.objects, OBJECT_SAMPLE_ASAN if ASAN else OBJECT_SAMPLE)
        sampled_starts = {r.start for r in self.sampled}
        self.used = [r for r in self.recs
                     if r.kind != reach.OBJECT or r.start in sampled_starts]

    def run_all(self):
        for case in (self.not_dumps, self.not_binaries, self.outputs, self.real_truncated,
                     self.real_flipped, self.real_patched, self.real_graphs,
                     self.every_kind, self.huge_claims, self.cores, self.legacy,
                     self.hprof):
            t0 = time.monotonic()
            case()
            if VERBOSE:
                print("%s: %.1f s" % (case.__name__, time.monotonic() - t0), file=sys.stderr)

    # the dump argument is not a heap dump ------------------------------------------------

    def both(self, what, dump_name, status, offset, outcome, also=()):
        """info and analyze on a bad dump: one refusal, the same line from both."""
        lab = self.lab
        info = lab.run("info", dump_name)
        ana = lab.run("analyze", "-o", "out.pb.gz", self.bin, dump_name)
        probs = lab.refusal(info, status, [dump_name] + list(also), offset)
        probs += lab.refusal(ana, status, [dump_name] + list(also), offset)
        if info.lines[:1] != ana.lines[:1]:
            probs.append("info and analyze say different things: %r, %r"
                         % (info.lines[:1], ana.lines[:1]))
        line = info.lines[0] if info.lines else ""
        lab.add(what, "%s, %s" % (cmd("info", dump_name),
                                  cmd("analyze -o out.pb.gz", self.bin, dump_name)),
                status, line, probs, outcome)

    def not_dumps(self):
        lab = self.lab
        refused = "refused; nothing written, out.pb.gz untouched"
        self.both("missing dump", "missing.dump", 1, None, refused, ["No such file"])
        lab.write("empty.dump", b"")
        self.both("empty file", "empty.dump", 1, 0, refused)
        os.mkdir(lab.path("adir"))
        self.both("a directory as the dump", "adir", 1, None, refused, ["directory"])
        lab.write("notes.txt", b"not a heap dump, just some text\n" * 4)
        self.both("a text file as the dump", "notes.txt", 1, 0, refused)
        self.both("a Go program as the dump (finalizer itself)", self.bin, 1, 0, refused,
                  ["ELF"])
        lab.write("header-only.dump", self.buf[:8])
        self.both("real dump cut inside its header (8 bytes)", "header-only.dump", 1, 0,
                  refused)
        os.mkfifo(lab.path("fifo.dump"))
        self.both("a FIFO with no writer as the dump (it would block in open)", "fifo.dump",
                  1, None, refused, ["FIFO"])
        lab.remove("fifo.dump")
        self.unreadable("unreadable dump (chmod 000)", "secret.dump", self.buf,
                        lambda name: ("info", name))
        self.unreadable("unreadable dump (chmod 000)", "secret.dump", self.buf,
                        lambda name: ("analyze", "-o", "out.pb.gz", self.bin, name))

    # cores and processes ---------------------------------------------------------------

    def cores(self):
        """A core of finalizer (taken with --pid --save-core as it holds after its dump),
        given without its binary, with another binary (cycle and true, linked by
        not_binaries), and cut short; and --pid of a process that is not there."""
        lab = self.lab
        refused = "refused; nothing written, out.pb.gz untouched"
        binary, _, _ = progs.prepare("finalizer", WORK, go=GO, env=ENV)
        core = lab.path("finalizer.core")

        def while_held(pid):
            return progs.heapref("analyze", "--pid", pid, "--save-core", core, binary,
                                 "-o", lab.path("held.pb.gz"))

        _, (st, _, err) = progs.run_held(binary, lab.path("held.dump"), while_held)
        if st != 0:
            lab.add("a core of finalizer", "--pid --save-core", st, err, [err], "not made")
            return
        lab.remove("held.dump")
        lab.remove("held.pb.gz")
        with open(core, "rb") as f:
            head = f.read(1 << 20)
        size = os.path.getsize(core)

        def analyze(what, binary_name, core_name, status, names, offset=None):
            """The line's numbers (addresses, offsets, how many mappings) vary by run."""
            args = ("analyze", "-o", "out.pb.gz", binary_name, core_name)
            res = lab.run(*args)
            lab.add(what, cmd(*args), status, first_line(res),
                    lab.refusal(res, status, names, offset), refused)

        res = lab.run("info", "finalizer.core")
        lab.add("a core without its binary", cmd("info", "finalizer.core"), 2,
                res.lines[0] if res.lines else "",
                lab.refusal(res, 2, ["finalizer.core", "give the binary"]), "refused")
        analyze("a core of finalizer with the binary of cycle", "cycle", "finalizer.core", 4,
                ["finalizer.core", "not a core of cycle", "--force"])
        args = ("analyze", "--force", "-o", "out.pb.gz", "cycle", "finalizer.core")
        res = lab.run(*args)
        probs = crash(res) + res.changes
        if res.code not in (0, 1) or not res.lines or "warning" not in res.lines[0]:
            probs.append("exit %d without the warning first: %r" % (res.code, res.err[:300]))
        lab.add("a core of finalizer with the binary of cycle, with --force", cmd(*args),
                "0 or 1", first_line(res), probs,
                "read anyway after the warning: refused as it is read (1), or a profile "
                "whose names may be wrong")
        analyze("a core with a non-Go binary (/bin/true)", "true", "finalizer.core", 1,
                ["true", "not a Go binary"])
        phoff = int.from_bytes(head[32:40], "little")  # heapref's: after the memory
        for keep, where, offset in ((40, "inside its ELF header", 40),
                                    (phoff + 56, "inside its program headers", 32),
                                    (size // 2, "in the middle", True)):
            name = "cut.core"
            lab.write(name, head[:keep] if keep <= len(head) else
                      open(core, "rb").read()[:keep])
            analyze("a core cut %s (%s bytes)" % (where, "half its" if offset is True else
                                                  "N" if where.endswith("headers") else keep),
                    self.bin, name, 1, [name], offset)
            lab.remove(name)
        self.looping_lists(analyze, core, binary)
        args = ("analyze", "--pid", "999999999", self.bin)
        res = lab.run(*args)
        lab.add("--pid of no process", cmd(*args), 1, res.lines[0] if res.lines else "",
                lab.refusal(res, 1, ["999999999"]), "refused; nothing written")
        lab.remove("finalizer.core")
        self.processes(binary)

    def looping_lists(self, analyze, core, binary):
        """The core with one of the runtime's lists patched into a loop (core_patch.py):
        refused at once, naming the list."""
        lab = self.lab
        for patch, names in ((core_patch.special_self_loop, ["specials", "loops back"]),
                             (core_patch.special_two_node_loop, ["specials", "loops back"]),
                             (core_patch.finblock_self_loop, ["runtime.allfin", "loops back"]),
                             (core_patch.m_self_loop, ["runtime.allm", "loops back"])):
            try:
                path, what = patch(core, binary, lab.dir)
            except core_patch.PatchError as e:
                lab.add("a core, %s" % patch.__name__, "-", "-", "", [str(e)], "not made")
                continue
            name = os.path.basename(path)
            analyze("a core of finalizer, %s" % re.sub(r"0x[0-9a-f]+", "0xN", what),
                    self.bin, name, 1, [name] + names)
            lab.remove(name)

    def processes(self, binary):   # self.bin, "finalizer" here, links to binary
        """--pid refusals, each before any thread is stopped (HEAPREF_TEST_HOLD_STOPPED
        would keep a stopped one stopped for seconds: the run must end sooner), and a
        target killed while its memory is copied."""
        lab = self.lab
        not_stopped = "refused before the stop; nothing written"
        sleeper = subprocess.Popen(["sleep", "600"])
        try:
            args = ("analyze", "--pid", sleeper.pid, "-o", "out.pb.gz")
            res = lab.run(*args, hold=3)
            lab.add("--pid of a process that is not Go (sleep)", cmd("analyze --pid PID"), 1,
                    first_line(res),
                    lab.refusal(res, 1, ["not a Go program", "not stopped"]) +
                    lab.quick(res, 3), not_stopped)
        finally:
            sleeper.kill()
            sleeper.wait()

        def held(pid):
            for what, args, status, names in (
                    ("--save-core onto the binary", ("--save-core", "finalizer", "finalizer"),
                     2, ["finalizer", "does not overwrite its inputs"]),
                    ("--save-core and -o one file", ("--save-core", "x", "-o", "x"), 2,
                     ["one file"]),
                    ("--save-core onto a directory", ("--save-core", "adir"), 3,
                     ["adir", "directory"]),
                    ("--pid with the binary of another program (cycle)", ("cycle",), 4,
                     ["Go build ID", "--force"]),
                    ("--pid, its core bigger than the memory available (1 MB, "
                     "HEAPREF_TEST_MEMORY_AVAILABLE)", (), 3, ["memory", "not stopped"])):
                full = ("analyze", "--pid", pid, "-o", "out.pb.gz") + args
                env = {"HEAPREF_TEST_MEMORY_AVAILABLE": "1000000"} if not args else None
                res = lab.run(*full, hold=3, env=env)
                lab.add(what, cmd(*(("analyze", "--pid", "PID") + args)), status,
                        first_line(res),
                        lab.refusal(res, status, names) + lab.quick(res, 3), not_stopped)
            self.core_too_large(pid)
            self.killed_meanwhile(pid)
        try:
            progs.run_held(binary, lab.path("held.dump"), held)
        except (progs.ProgError, OSError):
            pass   # killed_meanwhile() killed it
        lab.remove("held.dump")

    def core_too_large(self, pid):
        """The core cannot be written (a file size limit of 1 MiB): an output error
        naming it, before the stop (the core is sized first)."""
        lab = self.lab
        args = ("analyze", "--pid", pid, "--save-core", "big.core", "-o", "out.pb.gz")
        res = lab.run(*args, hold=3, fsize=1 << 20)
        lab.add("--save-core, the core too large to write (file size limit 1 MiB)",
                cmd("analyze --pid PID --save-core big.core"), 3,
                first_line(res),
                lab.refusal(res, 3, ["big.core", "cannot write the core"]) +
                lab.quick(res, 3), "refused before the stop; no core left")

    def killed_meanwhile(self, pid):
        lab = self.lab
        args = ("analyze", "--pid", pid, "--save-core", "killed.core", "-o", "out.pb.gz")
        killer = threading.Timer(1.0, os.kill, (pid, signal.SIGKILL))
        killer.start()
        res = lab.run(*args, hold=3)
        killer.join()
        lab.add("--pid of a process killed while its memory is copied",
                cmd("analyze --pid PID --save-core killed.core"), 1,
                first_line(res),
                lab.refusal(res, 1, ["ended while heapref copied its memory"]),
                "refused; no core kept, not even in part")

    # go1.3 and go1.4 dumps -------------------------------------------------------------

    def legacy(self):
        """The hand-made go1.3 and go1.4 dumps of test_legacy: read alone; cut at every
        byte and flipped at every byte; and the faults only their layouts can have."""
        lab = self.lab
        refused = "refused; nothing written, out.pb.gz untouched"
        for fmt, build in (("go1.3", test_legacy.fixture13), ("go1.4", test_legacy.fixture14),
                           ("pre-release go1.3", test_legacy.fixture_pre)):
            buf = build()
            name = lab.write("%s.dump" % fmt.replace("pre-release ", "pre-"), buf)
            info = lab.run("info", name)
            ana = lab.run("analyze", "-o", "out.pb.gz", name)
            probs = crash(info) + crash(ana)
            probs += [] if info.code == 0 else ["info exit %d: %s" % (info.code, info.err)]
            probs += [] if ana.code == 0 else ["analyze exit %d: %s" % (ana.code, ana.err)]
            lab.add("hand-made %s dump (test_legacy's, %d bytes), no binary" % (fmt, len(buf)),
                    "%s, %s" % (cmd("info", name), cmd("analyze -o out.pb.gz", name)), "0, 0",
                    "", probs, "read; analysed by the dump's type records")
            probs, cut, flipped = [], 0, collections.Counter()
            for n in range(len(buf)):
                res = lab.run("info", lab.write("prefix.dump", buf[:n]))
                probs += lab.refusal(res, 1, ["prefix.dump"], True)
                cut += res.code == 1
                data = bytearray(buf)
                data[n] ^= 0xFF
                res = lab.run("analyze", "-o", "out.pb.gz", lab.write("flip.dump", bytes(data)))
                flipped[res.code] += 1
                probs += crash(res)
                if res.code != 0:
                    probs += lab.refusal(res, 1, ["flip.dump"], True)
            lab.add("%s dump cut at every byte, and every byte XOR 0xFF in turn" % fmt,
                    "%d files each; %s, %s" % (len(buf), cmd("info", "prefix.dump"),
                                               cmd("analyze -o out.pb.gz", "flip.dump")),
                    "1; 0 or 1", "(varies)", probs,
                    "%d of %d cuts refused naming a byte; of the flips %d refused naming a "
                    "byte, %d analysed" % (cut, len(buf), flipped[1], flipped[0]))
            lab.remove("prefix.dump")
            lab.remove("flip.dump")
        heap = (test_legacy.H, test_legacy.H + 0x10000)
        bad = {
            "go1.3 object whose type no record describes": (
                dumpfmt.GO13_HEADER + dumpfmt.params_legacy(3, 8, *heap),
                dumpfmt.object13(heap[0], 0x9999, 0, b"\0" * 16)),
            "go1.3 type record with field kind 6": (
                dumpfmt.GO13_HEADER + dumpfmt.params_legacy(3, 8, *heap),
                dumpfmt.type13(0x9999, 16, "main.T", 1, [(6, 0)])),
            "go1.4 object with field kind 4 (go1.3's iface)": (
                dumpfmt.GO14_HEADER + dumpfmt.params_legacy(4, 8, *heap),
                dumpfmt.put_uvarint(dumpfmt.OBJECT) + dumpfmt.put_uvarint(heap[0]) +
                dumpfmt.put_string(b"\0" * 16) + dumpfmt.put_kind_fields([(4, 0)])),
        }
        pre = dumpfmt.GO13_HEADER + dumpfmt.pre_params(8, *heap)
        goroutine = dumpfmt.pre_goroutine(0xC000001000, 0xC000100000, 1, 0x401000, 4, b"chan receive")
        frame = dumpfmt.pre_frame(0xC000100000, 0, 0x401000, 0x401010, b"main.worker")
        bad_pre = {
            "pre-release go1.3 type record with field kind 5": (
                pre, dumpfmt.pre_type(0x9999, 16, "main.T", 1, [(5, 0)])),
            "pre-release go1.3 type record claiming 10^9 fields": (
                pre, dumpfmt.pre_type(0x9999, 16, "main.T", 1, [])[:-1] +
                dumpfmt.put_uvarint(10 ** 9)),
            "pre-release go1.3 record of kind 2 (the released layout's other root)": (
                pre, dumpfmt.put_uvarint(2)),
            "pre-release go1.3 frames whose parents loop": (
                pre, goroutine + dumpfmt.pre_frame(0xC000100000, 0xC000100100, 0x401000, 0x401010, b"main.worker") +
                dumpfmt.pre_frame(0xC000100100, 0xC000100000, 0x402000, 0x402010, b"main.main")),
            "pre-release go1.3 frame on no goroutine's stack": (
                pre, goroutine + frame +
                dumpfmt.pre_frame(0xC000200000, 0, 0x402000, 0x402010, b"main.orphan")),
            "pre-release go1.3 stack root in no frame": (
                pre, goroutine + frame + dumpfmt.pre_stack_root(0xC000300000, heap[0], 0xC000300000)),
        }
        for what, (head, rec) in bad_pre.items():
            name = lab.write("old.dump", head + rec + dumpfmt.pre_eof())
            self.both_alone(what, name, len(head), refused)
            lab.remove(name)
        for what, (head, rec) in bad.items():
            name = lab.write("old.dump", head + rec + dumpfmt.encode(dumpfmt.EOF, []))
            self.both_alone(what, name, len(head), refused)
            lab.remove(name)
        args = ("analyze", "-o", "out.pb.gz", "finalizer.dump")
        res = lab.run(*args)
        lab.add("a go1.7 dump without its binary", cmd(*args), 2,
                res.lines[0] if res.lines else "",
                lab.refusal(res, 2, ["finalizer.dump", "give the binary"]), refused)

    def both_alone(self, what, name, record_start, outcome):
        """info and analyze (no binary) on a bad old-format dump: the same refusal."""
        lab = self.lab
        info = lab.run("info", name)
        ana = lab.run("analyze", "-o", "out.pb.gz", name)
        probs = lab.refusal(info, 1, [name], True) + lab.refusal(ana, 1, [name], True)
        if info.lines[:1] != ana.lines[:1]:
            probs.append("info and analyze say different things: %r, %r"
                         % (info.lines[:1], ana.lines[:1]))
        m = re.search(r"\bbyte (\d+)", info.lines[0]) if info.lines else None
        if not m or int(m.group(1)) < record_start:
            probs.append("the fault is not placed in the bad record (from byte %d)" % record_start)
        lab.add(what, "%s, %s" % (cmd("info", name), cmd("analyze -o out.pb.gz", name)), 1,
                info.lines[0] if info.lines else "", probs, outcome)

    # hprof export ----------------------------------------------------------------------

    def hprof(self):
        """heapref hprof on a cut dump and with the wrong binary: refused, no file."""
        lab = self.lab
        refused = "refused; no out.hprof written"
        name = lab.write("half.dump", self.buf[:len(self.buf) // 2])
        args = ("hprof", "-o", "out.hprof", self.bin, name)
        res = lab.run(*args)
        lab.add("hprof of a dump cut in half", cmd(*args), 1,
                first_line(res),
                lab.refusal(res, 1, [name], True), refused)
        lab.remove(name)
        args = ("hprof", "-o", "out.hprof", "cycle", "finalizer.dump")
        res = lab.run(*args)
        lab.add("hprof with the wrong binary (cycle)", cmd(*args), 4,
                elide_differences(res.lines[0]) if res.lines else "",
                lab.refusal(res, 4, ["finalizer.dump", "cycle"]), refused)

    def unreadable(self, what, name, data, args_of):
        """A file chmod 000. Root reads it anyway, so as root heapref runs without the
        capabilities that allow that; if they cannot be dropped, it is not testable."""
        lab = self.lab
        lab.write(name, data)
        os.chmod(lab.path(name), 0)
        args = args_of(name)
        done = "chmod 000; %s without the capabilities that let root read it" % cmd(*args)
        try:
            res = lab.run(*args, drop_caps=True)
        except subprocess.SubprocessError as e:
            lab.add(what, done, "-", "", [], "not testable as root here: %s" % e)
            return
        probs = lab.refusal(res, 1, [name, "Permission denied"])
        lab.add(what, done, res.code, res.lines[0] if res.lines else "", probs,
                "refused; nothing written" + (", out.pb.gz untouched" if "-o" in args else ""))
        lab.remove(name)

    # the binary argument is not the binary -------------------------------------------------

    def not_binaries(self):
        lab = self.lab
        refused = "refused; nothing written, out.pb.gz untouched"

        def analyze_with(what, binary, status, names, outcome=refused, differences=()):
            args = ("analyze", "-o", "out.pb.gz", binary, self.dump)
            res = lab.run(*args)
            probs = lab.refusal(res, status, names)
            line = res.lines[0] if res.lines else ""
            if differences and not any(d in line for d in differences):
                probs.append("the line names none of %s" % (differences,))
            lab.add(what, cmd(*args), status, elide_differences(line), probs, outcome)

        analyze_with("missing binary", "missing-binary", 1, ["missing-binary"])
        analyze_with("a directory as the binary", "adir", 1, ["adir", "directory"])
        analyze_with("a text file as the binary", "notes.txt", 1, ["notes.txt", "ELF"])
        os.mkfifo(lab.path("fifo-binary"))
        analyze_with("a FIFO with no writer as the binary", "fifo-binary", 1,
                     ["fifo-binary", "FIFO"])
        lab.remove("fifo-binary")
        # the binary is opened while the dump is read: the dump's error still comes first
        name = lab.write("half.dump", self.buf[:len(self.buf) // 2])
        args = ("analyze", "-o", "out.pb.gz", "missing-binary", name)
        res = lab.run(*args)
        lab.add("a dump cut in half, and a missing binary", cmd(*args), 1, first_line(res),
                lab.refusal(res, 1, [name], True), refused + " (the dump's error, first)")
        lab.remove(name)
        args = ("analyze", "-o", "out.pb.gz", self.dump, self.bin)
        res = lab.run(*args)
        lab.add("binary and dump swapped", cmd(*args), 2, res.lines[0] if res.lines else "",
                lab.refusal(res, 2, [self.dump, self.bin, "wrong way round"]), refused)
        lab.link("true", shutil.which("true") or "/bin/true")
        # Debian's true is C: no .gopclntab, no .go.buildinfo
        analyze_with("a non-Go ELF binary (/bin/true)", "true", 1, ["true", "not a Go binary"])
        other, _, _ = progs.prepare("cycle", WORK, go=GO, env=ENV)
        lab.link("cycle", other)
        # which of these differ depends on the toolchain (segment sizes may coincide)
        analyze_with("wrong binary: the dump of finalizer, the binary of cycle", "cycle", 4,
                     ["finalizer.dump was not written by cycle", "--force"],
                     differences=("the dump's data segment is", "the dump's bss segment is",
                                  "bss starts", "stack frames name other functions",
                                  "global variables disagree"))
        self.forced_wrong_binary()
        self.stripped()
        self.unreadable("unreadable binary (chmod 000)", "secret-binary",
                        open(lab.path(self.bin), "rb").read(),
                        lambda name: ("analyze", "-o", "out.pb.gz", name, self.dump))

    def forced_wrong_binary(self):
        lab = self.lab
        args = ("analyze", "--force", "-o", "out.pb.gz", "cycle", self.dump)
        res = lab.run(*args)
        probs = lab.profile_problems(res, self.buf)
        if not res.lines or "warning" not in res.lines[0]:
            probs.append("no warning first: %r" % res.err[:300])
        lab.add("wrong binary, with --force", cmd(*args), res.code,
                elide_differences(res.lines[0]) if res.lines else "", probs,
                "a profile (names may be wrong) after the warning; totals = reach.py's")

    def stripped(self):
        lab = self.lab
        binary, dump, _ = progs.prepare("finalizer", WORK, go=GO, env=ENV, ldflags="-s -w")
        name = lab.link("finalizer-stripped", binary)
        dname = lab.link("finalizer-stripped.dump", dump)
        args = ("analyze", "-o", "out.pb.gz", name, dname)
        res = lab.run(*args)
        with open(dump, "rb") as f:
            probs = lab.profile_problems(res, f.read())
        if not res.lines or not res.lines[0].startswith("heapref: warning: %s: " % name):
            probs.append("no warning naming the binary first: %r" % res.err[:300])
        lab.add("stripped binary (-ldflags=-s -w) and its dump", cmd(*args), res.code,
                res.lines[0] if res.lines else "", probs,
                "a profile of bitmap-only chains after the warning; totals = reach.py's")

    # outputs -----------------------------------------------------------------------------

    def outputs(self):
        lab = self.lab
        args = ("analyze", "-o", "-", self.bin, self.dump)
        with tempfile.TemporaryFile() as out:
            res = lab.run(*args, stdout=out)
            out.seek(0)
            data = out.read()
        probs = lab.profile_problems(res, self.buf, out=data)
        lab.add("`-o -`: the profile to stdout", cmd(*args), res.code,
                first_line(res), probs,
                "the profile on stdout, summary on stderr; no file written")

        def output_error(what, args, names, outcome, **kw):
            res = lab.run(*args, **kw)
            probs = lab.refusal(res, 3, names)
            lab.add(what, cmd(*args), 3, res.lines[0] if res.lines else "", probs, outcome)

        with open("/dev/full", "wb") as full:
            output_error("`-o -` with stdout on a full disk (/dev/full)",
                         ("analyze", "-o", "-", self.bin, self.dump),
                         ["standard output", "No space left"],
                         "output error; no file written", stdout=full)
            output_error("`info` with stdout on a full disk (/dev/full)",
                         ("info", self.dump), ["standard output", "No space left"],
                         "output error", stdout=full)
        output_error("output into a missing directory",
                     ("analyze", "-o", "no-such-dir/out.pb.gz", self.bin, self.dump),
                     ["no-such-dir/out.pb.gz"], "output error; nothing written")
        output_error("output onto an existing directory",
                     ("analyze", "-o", "adir", self.bin, self.dump),
                     ["adir"], "output error; no temporary file left, adir untouched")
        output_error("existing out.pb.gz, writing fails (file size limit 512 bytes)",
                     ("analyze", "-o", "out.pb.gz", self.bin, self.dump),
                     ["out.pb.gz", "too large"],
                     "output error; out.pb.gz untouched, no temporary file left",
                     fsize=512)
        self.special_outputs(output_error)
        self.outputs_that_are_inputs()

    def special_outputs(self, output_error):
        """Outputs that are not regular files: device nodes made with mknod here (never
        the system's /dev), a FIFO, a socket, a symbolic link to nothing."""
        lab = self.lab
        try:
            os.mknod(lab.path("null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except OSError as e:
            lab.add("`-o` onto device nodes", "mknod", "-", "", [],
                    "not testable here: %s" % e)
        else:
            args = ("analyze", "-o", "null", self.bin, self.dump)
            res = lab.run(*args)
            probs = crash(res) + res.changes
            if res.code != 0:
                probs.append("exit %d: %s" % (res.code, res.err[:300]))
            if not stat.S_ISCHR(os.lstat(lab.path("null")).st_mode):
                probs.append("null is no longer a device")
            lab.add("`-o` a null device (mknod c 1 3)", cmd(*args), res.code,
                    first_line(res), probs,
                    "written into; still the device, nothing else written")
            lab.remove("null")
            for name, kind, dev in (("random", stat.S_IFCHR, (1, 8)),
                                    ("loop", stat.S_IFBLK, (7, 200))):
                os.mknod(lab.path(name), 0o666 | kind, os.makedev(*dev))
                output_error("`-o` a %s device (mknod %s %d %d)" % (
                    "character" if kind == stat.S_IFCHR else "block",
                    "c" if kind == stat.S_IFCHR else "b", dev[0], dev[1]),
                    ("analyze", "-o", name, self.bin, self.dump), [name, "device"],
                    "refused; the device left as it was")
                lab.remove(name)
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(lab.path("sock"))
        output_error("`-o` a Unix socket", ("analyze", "-o", "sock", self.bin, self.dump),
                     ["sock", "socket"], "refused; the socket left as it was")
        sock.close()
        lab.remove("sock")
        os.symlink(lab.path("nowhere/out.pb.gz"), lab.path("dangling"))
        output_error("`-o` a symbolic link to nothing",
                     ("analyze", "-o", "dangling", self.bin, self.dump),
                     ["dangling", "symbolic link"], "refused; nothing created where it points")
        lab.remove("dangling")
        self.fifo_output()

    def fifo_output(self):
        lab = self.lab
        os.mkfifo(lab.path("fifo"))
        got = {}

        def read():
            with open(lab.path("fifo"), "rb") as f:
                got["data"] = f.read()
        reader = threading.Thread(target=read)
        reader.start()
        args = ("analyze", "-o", "fifo", self.bin, self.dump)
        res = lab.run(*args)
        reader.join(RUN_TIMEOUT)
        probs = [p for p in lab.profile_problems(res, self.buf, out=got.get("data", b""))
                 if p != "changed fifo"]   # its times: it was written to
        if not stat.S_ISFIFO(os.lstat(lab.path("fifo")).st_mode):
            probs.append("fifo is no longer a FIFO")
        lab.add("`-o` a FIFO, with a reader", cmd(*args), res.code,
                first_line(res), probs,
                "the profile through the FIFO; the FIFO left as it was")
        lab.remove("fifo")

    def outputs_that_are_inputs(self):
        """An output that is an input, through any name: refused before anything is read."""
        lab = self.lab
        refused = "refused; every input left as it was"
        os.link(lab.path("notes.txt"), lab.path("hard.txt"))
        lab.link("soft-binary", lab.path(self.bin))
        for what, args, names in (
                ("`-o` the dump itself", ("analyze", "-o", self.dump, self.bin, self.dump),
                 [self.dump, "heap input"]),
                ("`-o` a symbolic link to the binary",
                 ("analyze", "-o", "soft-binary", self.bin, self.dump), ["soft-binary"]),
                ("`-o` a hard link to the dump (notes.txt and hard.txt are one file)",
                 ("analyze", "-o", "hard.txt", self.bin, "notes.txt"), ["hard.txt"]),
                ("`hprof -o` the binary", ("hprof", "-o", self.bin, self.bin, self.dump),
                 [self.bin, "binary"])):
            res = lab.run(*args)
            lab.add(what, cmd(*args), 2, res.lines[0] if res.lines else "",
                    lab.refusal(res, 2, names + ["does not overwrite its inputs"]), refused)
        lab.remove("hard.txt")
        lab.remove("soft-binary")

    # the real dump, damaged ----------------------------------------------------------------

    def cut(self, length):
        return self.lab.write("cut.dump", self.buf[:length])

    def real_truncated(self):
        lab = self.lab
        probs, first = [], None
        for k, r in enumerate(self.recs):
            if r.kind == reach.OBJECT and r not in self.sampled:
                continue
            name = self.cut(r.start)
            for args in (("info", name), ("analyze", "-o", "out.pb.gz", self.bin, name)):
                res = lab.run(*args)
                probs += lab.refusal(res, 1, [name, "after %d records" % k], r.start)
                first = first or (res.lines[:1] or [""])[0]
        lab.add("real dump cut at every record boundary (objects: a sample)",
                "%s, %s" % (cmd("info", "cut.dump"),
                            cmd("analyze -o out.pb.gz", self.bin, "cut.dump")),
                1, numbers_as_n(first), probs,
                "every cut refused naming the byte where the file ends; nothing written")
        probs, first = [], None
        for r in self.others + self.sampled:
            points = sorted({r.start + 1, (r.start + r.end) // 2, r.end - 1})
            for p in points:
                if not r.start < p < r.end:
                    continue
                name = self.cut(p)
                res = lab.run("info", name)
                probs += self.inside_record_problems(res, name, r, p)
                if r.kind != reach.OBJECT or p == r.end - 1:
                    res = lab.run("analyze", "-o", "out.pb.gz", self.bin, name)
                    probs += self.inside_record_problems(res, name, r, p)
                first = first or (res.lines[:1] or [""])[0]
        lab.add("real dump cut inside records: after the kind byte, in the middle, one byte "
                "short (objects: a sample)", "%s, %s" % (cmd("info", "cut.dump"), cmd(
                    "analyze -o out.pb.gz", self.bin, "cut.dump")),
                1, numbers_as_n(first), probs,
                "every cut refused naming the record cut (kind, byte) and a byte inside it")

        self.real_cut_in_object_contents()

    def real_cut_in_object_contents(self):
        """The usual truncated dump (a copy cut short, a disk that filled up): the file
        ends inside an object's contents. The line says so in words: what the record
        needs, and what is left (counted from the record, not from heapref)."""
        lab = self.lab
        r = max((r for r in self.recs if r.kind == reach.OBJECT), key=lambda r: r.size)
        _, length_at = dumpfmt.uvarint(self.buf, r.start + 1)   # after kind and address
        left = r.size // 3
        name = self.cut(r.contents + left)
        want = ("heapref: %s: byte %d: truncated: the object record at byte %d needs %d bytes "
                "of contents, %d are left" % (name, length_at, r.start, r.size, left))
        probs, first = [], None
        for args in (("info", name), ("analyze", "-o", "out.pb.gz", self.bin, name)):
            res = lab.run(*args)
            probs += lab.refusal(res, 1, [name], length_at)
            if res.lines[:1] != [want]:
                probs.append("said %r, want %r" % (res.lines[:1], want))
            first = first or (res.lines[:1] or [""])[0]
        lab.add("real dump cut inside the contents of its largest object",
                "%s, %s" % (cmd("info", "cut.dump"),
                            cmd("analyze -o out.pb.gz", self.bin, "cut.dump")),
                1, numbers_as_n(first), probs,
                "refused: the dump is said to be truncated, with the bytes the record "
                "needs and those left")

    def inside_record_problems(self, res, name, r, cut):
        """A cut inside record r: refused, naming the kind of r and its start, and a
        byte offset between the record's start and the end of the file."""
        probs = self.lab.refusal(res, 1, [name, "%s record" % KIND_NAMES[r.kind]])
        line = res.lines[0] if res.lines else ""
        offsets = [int(x) for x in re.findall(r"\bbyte (\d+)\b", line)]
        if not re.search(r"\bbyte %d\b" % r.start, line):
            probs.append("the line does not name the record's start, byte %d: %r"
                         % (r.start, line))
        if not offsets or not all(r.start <= o <= cut for o in offsets):
            probs.append("offsets outside [%d, %d]: %r" % (r.start, cut, line))
        return probs

    def flipped(self, pos):
        buf = bytearray(self.buf)
        buf[pos] ^= 0xFF
        return bytes(buf)

    def real_flipped(self):
        lab = self.lab
        # the kind byte of every non-object record and of the sampled objects (not
        # the final EOF record, which a flip turns into a truncated varint)
        probs, first = [], None
        for r in self.others[:-1] + self.sampled:
            name = lab.write("flip.dump", self.flipped(r.start))
            res = lab.run("info", name)
            probs += lab.refusal(res, 1, [name], r.start)
            first = first or (res.lines[:1] or [""])[0]
        lab.add("real dump, the kind byte of records XOR 0xFF (objects: a sample)",
                cmd("info", "flip.dump"), 1, numbers_as_n(first), probs,
                "every one refused at the record's first byte")
        # one byte in the middle of objects' contents: data, not structure
        probs = []
        for r in sample(self.sampled, 24 if ASAN else 64):
            data = self.flipped(r.contents + r.size // 2)
            name = lab.write("flip.dump", data)
            res = lab.run("info", name)
            probs += crash(res) + ([] if res.code == 0 else ["info exit %d" % res.code])
            res = lab.run("analyze", "-o", "out.pb.gz", self.bin, name)
            probs += lab.profile_problems(res, data)
        lab.add("real dump, a byte in the middle of objects' contents XOR 0xFF (a sample)",
                "%s, %s" % (cmd("info", "flip.dump"),
                            cmd("analyze -o out.pb.gz", self.bin, "flip.dump")),
                0, "", probs, "read; each profile's totals = reach.py's on the same bytes")
        # evenly spaced bytes after the params record (a flip there would change the
        # Go version). A flip in a frame's PC or a segment's pointer bits can make the
        # dump look like another binary's: exit 4, depending on where the bytes fall
        probs = []
        start, n = self.recs[0].end, len(self.buf)
        for k in range(16 if ASAN else FLIPS):
            pos = start + (n - start) * k // FLIPS
            data = self.flipped(pos)
            name = lab.write("flip.dump", data)
            res = lab.run("analyze", "-o", "out.pb.gz", self.bin, name)
            if res.code == 0:
                probs += lab.profile_problems(res, data)
            elif res.code == 4:
                probs += lab.refusal(res, 4, [name + " was not written by finalizer"])
            else:
                probs += lab.refusal(res, 1, [name], True)
        lab.add("real dump, evenly spaced bytes after the params record XOR 0xFF",
                cmd("analyze -o out.pb.gz", self.bin, "flip.dump"), "0, 1 or 4", "(varies)",
                probs, "each: refused naming a byte (1) or as not this binary's dump (4), "
                "or read with totals = reach.py's")

    def patched_params(self, big_endian, ptr_size):
        """The real dump with its params record's byte order or pointer size changed
        in place (both are one-byte uvarints right after the kind byte)."""
        p = self.recs[0]
        if p.kind != reach.PARAMS or self.buf[p.start + 1:p.start + 3] != b"\x00\x08":
            raise AssertionError("the dump does not start with a little-endian, 8-byte "
                                 "params record")
        buf = bytearray(self.buf)
        buf[p.start + 1] = big_endian
        buf[p.start + 2] = ptr_size
        return bytes(buf)

    def real_patched(self):
        lab = self.lab
        for what, name, data, arch in (
                ("real dump patched to 4-byte pointers (params record)", "ptr4.dump",
                 self.patched_params(0, 4), "4-byte pointers, little-endian"),
                ("real dump patched to big-endian (params record)", "bigend.dump",
                 self.patched_params(1, 8), "8-byte pointers, big-endian")):
            lab.write(name, data)
            info = lab.run("info", name)
            probs = crash(info)
            if info.code != 0 or arch not in info.out.decode():
                probs.append("info exit %d, arch line %r" % (info.code, [
                    l for l in info.out.decode().splitlines() if l.startswith("arch")]))
            args = ("analyze", "-o", "out.pb.gz", self.bin, name)
            res = lab.run(*args)
            probs += lab.refusal(res, 1, [name, arch])
            lab.add(what, "%s, %s" % (cmd("info", name), cmd(*args)), "0, 1",
                    res.lines[0] if res.lines else "", probs,
                    "info reads it (%s); analyze refuses it, nothing written" % arch)

    def rewrite_pointers(self, target):
        """The real dump with every object's pointer words set to target(i, record)."""
        buf = bytearray(self.buf)
        order = sorted(self.objects, key=lambda r: dumpfmt.uvarint(self.buf, r.start + 1)[0])
        addrs = [dumpfmt.uvarint(self.buf, r.start + 1)[0] for r in order]
        for i, r in enumerate(order):
            v = target(i, addrs, order)
            for off in r.offsets:
                buf[r.contents + off:r.contents + off + 8] = word(v)
        return bytes(buf)

    def real_graphs(self):
        lab = self.lab
        for what, name, target in (
                ("every object's pointer words point to the object itself", "self.dump",
                 lambda i, a, o: a[i]),
                ("every object's pointer words point to the next object (one ring)",
                 "ring.dump", lambda i, a, o: a[(i + 1) % len(a)]),
                ("every object's pointer words point inside the previous object",
                 "inner.dump", lambda i, a, o: a[i - 1] + o[i - 1].size // 2 // 8 * 8)):
            data = self.rewrite_pointers(target)
            lab.write(name, data)
            args = ("analyze", "-o", "out.pb.gz", self.bin, name)
            res = lab.run(*args)
            probs = lab.profile_problems(res, data)
            lab.add("real dump, " + what, cmd(*args), res.code,
                    first_line(res), probs,
                    "finishes; totals = reach.py's")
            lab.remove(name)

    # hand-built dumps ----------------------------------------------------------------------

    def every_kind(self):
        lab = self.lab
        w = every_kind_dump()
        buf = w.bytes()
        name = lab.write("every-kind.dump", buf)
        res = lab.run("info", name)
        probs = crash(res) + ([] if res.code == 0 else ["exit %d: %s" % (res.code, res.err)])
        out = res.out.decode()
        for kind in range(1, 18):
            n = 2 if kind == reach.OBJECT else 1
            if not re.search(r"^  %s +%d$" % (re.escape(KIND_NAMES[kind]), n), out, re.M):
                probs.append("info does not count %d %s record(s)" % (n, KIND_NAMES[kind]))
        forced = lab.run("analyze", "--force", "-o", "out.pb.gz", self.bin, name)
        probs += lab.profile_problems(forced, buf)
        lab.add("hand-built dump with one record of each of the 18 kinds (%d bytes)"
                % len(buf), "%s, %s" % (cmd("info", name), cmd(
                    "analyze --force -o out.pb.gz", self.bin, name)), "0, 0", "", probs,
                "read: the records counted by kind; a profile with totals = reach.py's")
        seen = set()
        for kind, start, end in w.records:
            if kind == reach.EOF or kind in seen:
                continue
            seen.add(kind)
            cut = lab.write("short.dump", buf[:end - 1])
            info = lab.run("info", cut)
            ana = lab.run("analyze", "-o", "out.pb.gz", self.bin, cut)
            r = Record(kind, start, end, None, None, None)
            probs = self.inside_record_problems(info, cut, r, end - 1)
            probs += self.inside_record_problems(ana, cut, r, end - 1)
            lab.add("hand-built, the (first) %s record one byte short" % KIND_NAMES[kind],
                    "file cut at byte %d; `info`, `analyze`" % (end - 1), 1,
                    info.lines[0] if info.lines else "", probs, "refused")
        self.every_byte(buf)

    def every_byte(self, buf):
        """Every prefix and every one-byte flip of the hand-built dump, with info."""
        lab = self.lab
        probs, refused = [], 0
        starts = {start: k for k, (_, start, _) in
                  enumerate(every_kind_dump().records)}
        for n in range(len(buf)):
            name = lab.write("prefix.dump", buf[:n])
            res = lab.run("info", name)
            probs += lab.refusal(res, 1, [name], True)
            if n in starts:
                probs += lab.refusal(res, 1, ["after %d records" % starts[n]], n)
            refused += res.code == 1
        lab.add("hand-built, cut at every byte", "%d files; %s" % (
            len(buf), cmd("info", "prefix.dump")), 1, "(varies)", probs,
            "%d of %d refused, naming a byte" % (refused, len(buf)))
        probs, counts = [], collections.Counter()
        for n in range(len(buf)):
            data = bytearray(buf)
            data[n] ^= 0xFF
            name = lab.write("flip.dump", bytes(data))
            res = lab.run("info", name)
            counts[res.code] += 1
            probs += crash(res)
            if res.code != 0:
                probs += lab.refusal(res, 1, [name], True)
        lab.add("hand-built, every byte XOR 0xFF in turn", "%d files; %s" % (
            len(buf), cmd("info", "flip.dump")), "0 or 1", "(varies)", probs,
            "%d refused naming a byte, %d read" % (counts[1], counts[0]))

    def huge_claims(self):
        """Lengths and counts far beyond the file: refused at once, in bounded memory;
        and big but real counts: read in time and memory bounded by the file size."""
        for what, build, expect in HUGE_CASES:
            w = DumpWriter()
            build(w)
            name = "huge.dump"
            self.lab.write(name, w.bytes())
            self.bounded(what, name, w, expect)

    def bounded(self, what, name, w, expect):
        lab = self.lab
        info = lab.run("info", name)
        ana = lab.run("analyze", "-o", "out.pb.gz", self.bin, name)
        if expect is None:   # a valid dump: info reads it, analyze --force scans it
            probs = crash(info) + ([] if info.code == 0 else [
                "info exit %d: %s" % (info.code, info.err.strip())])
            forced = lab.run("analyze", "--force", "-o", "out.pb.gz", self.bin, name)
            probs += lab.profile_problems(forced, w.bytes())
            probs += lab.refusal(ana, 4, [name])
            status, line = "0; 4; 0 with --force", ""
            outcome = "read; analyze: not this binary's dump (4), with --force: totals = reach.py's"
            runs = (info, ana, forced)
        else:
            label, detail = expect
            probs = lab.refusal(info, 1, [name, detail], w.fields[label])
            probs += lab.refusal(ana, 1, [name, detail], w.fields[label])
            status, line, outcome = 1, info.lines[0] if info.lines else "", "refused"
            runs = (info, ana)
        slow = max(r.seconds for r in runs)
        if slow > BOUNDED_SECONDS:
            probs.append("took %.1f s" % slow)
        lab.add(what, "%s (%d bytes); `info`, `analyze`%s" % (
            name, len(w.buf), ", `analyze --force`" if expect is None else ""), status, line,
                probs, outcome + "; within the time and memory limits")


WHOLE_SPACE = (0, (1 << 64) - 1)


def _obj_huge_length(w):
    w.params()
    w.record(reach.OBJECT, A, ("len", 1 << 40), ("raw", bytes(64)))


def _long_varint(w):
    w.params()
    w.record(reach.OBJECT, ("len", ("raw", b"\x80" * 10 + b"\x01")), ("raw", bytes(16)))


def _overflowing_varint(w):
    w.params()
    w.record(reach.OBJECT, ("len", ("raw", b"\xff" * 9 + b"\x02")), ("raw", bytes(16)))


def _memprof_frames(w):
    w.params()
    w.record(reach.MEMPROF, 1, 64, 1 << 62,
             *[f for k in range(3) for f in (b"main.f", b"main.go", k)], ("len", ("raw", b"")))


def _many_frames(w):
    """Frames 64 bytes apart, each holding 8 bytes: a pointer to object A."""
    w.params()
    w.obj(A, bytes(16))
    w.record(reach.GOROUTINE, 0xC000020000, 0xC000030000, 1, 0x401000, 4, 0, 0, 0, b"x",
             0, 0, 0, 0)
    for depth in range(200000):
        w.record(reach.FRAME, 0xC000030000 + 64 * depth, depth, 0, word(A), 0x401000,
                 0x401010, 0x401010, b"f", ("fields", [0]))
    w.eof()


def _data_huge(w):
    w.params()
    w.record(reach.DATA, 0x5A0000, ("len", ("raw", dumpfmt.put_uvarint(1 << 50))), ("raw", bytes(32)))


def _string_huge(w):
    w.params()
    w.record(reach.GOROUTINE, 0xC000020000, 0xC000030000, 1, 0x401000, 4, 0, 0, 0,
             ("len", ("raw", dumpfmt.put_uvarint(1 << 63))), ("raw", b"chan receive"))


def _address_space(w):
    w.params(heap=WHOLE_SPACE)
    w.obj(0x1000, word(0x1000), [0])
    w.obj((1 << 64) - 4096, word(0x1000) + word((1 << 64) - 4096), [0, 8])
    w.record(reach.DATA, 0x5A0000, word(0x1000) + word((1 << 64) - 4096), ("fields", [0, 8]))
    w.eof()


def _wrapping_object(w):
    w.params(heap=WHOLE_SPACE)
    w.fields["len"] = w.record(reach.OBJECT, (1 << 64) - 8, bytes(16), ("fields", []))


def _overlap(w):
    w.params()
    w.obj(A, bytes(32))
    w.record(reach.OBJECT, A + 16, ("raw", dumpfmt.put_uvarint(32)), ("len", ("raw", bytes(32))),
             ("fields", []))
    w.eof()   # the index finds the overlap once every object is read


def _repeated_fields(w):
    w.params()
    w.obj(A, word(A), [0] * 1000000)
    w.record(reach.DATA, 0x5A0000, word(A), ("fields", [0]))
    w.eof()


def _field_far(w):
    w.params()
    w.record(reach.OBJECT, A, bytes(16), ("raw", b"\x01"), ("len", 1 << 63), ("raw", b"\x00"))


def _object_first(w):
    w.fields["len"] = w.record(reach.OBJECT, A, bytes(16), ("fields", []))


HUGE_CASES = (
    ("object whose contents length says 2^40", _obj_huge_length,
     ("len", "truncated: the object record at byte 47 needs 1099511627776 bytes")),
    ("a varint of 11 bytes (object address)", _long_varint, ("len", "longer than 10 bytes")),
    ("a varint of 10 bytes that overflows 64 bits", _overflowing_varint, ("len", "overflows")),
    ("memory profile record claiming 2^62 frames (3 present)", _memprof_frames,
     ("len", "memory profile record")),
    ("200000 stack frames in one goroutine, not touching each other", _many_frames, None),
    ("data segment whose contents length says 2^50", _data_huge,
     ("len", "needs 1125899906842624 bytes of contents")),
    ("wait reason whose length says 2^63", _string_huge,
     ("len", "bytes of wait reason, 12 are left")),
    ("params: heap range the whole address space, objects at both ends", _address_space,
     None),
    ("object at 2^64-8 of 16 bytes, heap range the whole address space", _wrapping_object,
     ("len", "heap range")),
    ("overlapping objects", _overlap, ("len", "overlap")),
    ("one object's field list: 1000000 entries", _repeated_fields, None),
    ("field offset 2^63", _field_far, ("len", "outside the object")),
    ("object record before the params record", _object_first, ("len", "params")),
)


# -- the doc -------------------------------------------------------------------------------

DOC_HEAD = """\
# Bad inputs

What heapref does with inputs that are not what it expects. **Generated** by
`tests/e2e/test_bad_inputs.py` (ctest `e2e_bad_inputs`), which runs every row below,
checks it and fails when this file is out of date; do not edit it by hand. After a
deliberate change of behaviour, regenerate it with

    {regen}

Every refusal is checked to be: the exit status shown (1 bad input, 2 usage error or an
output that is an input, 3 output error, 4 the heap input or process is not the binary's:
`docs/cli.md`), exactly one line on standard
error naming the file (and, for a malformed dump, the byte offset of the fault), no
signal or sanitizer report, nothing on standard output, no file left behind, and an
existing `out.pb.gz` (written before every `analyze` run) unchanged. Every run but those
of the sanitizer build has its address space limited to 4 times the size of its inputs
plus 512 MiB, and hand-built dumps that claim huge lengths or counts must be done within
{seconds} s. Where heapref reads a damaged dump, the profile must account for exactly
the objects and bytes that `tests/e2e/reach.py`, an independent reader, finds reachable
in the same bytes.

`finalizer` and `finalizer.dump` are `testprogs/finalizer` built with the machine's Go
and the dump it writes; `cycle` is another test program. Their byte offsets and counts
depend on the Go version and the run, so they show as `N`, the Go version as `go1.N`,
and the list of differences in a refusal of the wrong binary as `...`. Object records of
the real dump are sampled where a row says so (all other records are used): {sample}
evenly spaced objects, {sample_asan} in the sanitizer build (which also flips fewer
bytes). Hand-built dumps are written byte by byte by the test; their offsets are exact.

Outputs that are devices are made with `mknod` in the test's directory, never the
system's `/dev`. The `--pid` rows run on `finalizer` held still after its dump, or on
`sleep`; each refusal there must come before any thread is stopped: the runs set
`HEAPREF_TEST_HOLD_STOPPED=3`, which would keep a stopped process stopped 3 s, and must
end sooner. Where a process runs, its PID shows as `N`, where its binary is built as
`...`, and Go build IDs as `(Go build ID ...)`. `docs/cli.md` ("Files and permissions")
says what heapref writes where, and with which mode.

"""


def doc_text(lab):
    head = DOC_HEAD.format(regen=REGENERATE, seconds=BOUNDED_SECONDS, sample=OBJECT_SAMPLE,
                           sample_asan=OBJECT_SAMPLE_ASAN)
    rows = ["| input | what was done | exit | first line on stderr | outcome |",
            "|---|---|---|---|---|"]
    for row in lab.rows:
        cells = [cell(c) for c in row]
        rows.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(rows) + "\n"


def cell(text):
    text = " / ".join(str(text).splitlines()).replace("|", "\\|")
    if text.startswith("heapref"):
        return "`%s`" % text.replace("`", "'")
    return text or "-"


_RESULT = {}


def run_cases():
    """Runs every case once per process; returns the lab with rows and problems."""
    if "lab" not in _RESULT:
        lab = Lab()
        try:
            Cases(lab).run_all()
        finally:
            shutil.rmtree(lab.dir, ignore_errors=True)
        _RESULT["lab"] = lab
    return _RESULT["lab"]


@unittest.skipUnless(shutil.which(GO), "no go command")
class BadInputs(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.lab = run_cases()

    def test_every_case_behaves(self):
        by_input = collections.defaultdict(list)
        for what, problem in self.lab.problems:
            by_input[what].append(problem)
        for what, problems in by_input.items():
            with self.subTest(input=what):
                self.fail("%d problem(s):\n  %s" % (len(problems), "\n  ".join(problems[:20])))

    def test_doc_is_current(self):
        want = doc_text(self.lab)
        try:
            with open(DOC) as f:
                have = f.read()
        except OSError:
            have = ""
        if have != want:
            self.fail("docs/bad-inputs.md is not what the test generates; if heapref's "
                      "behaviour changed on purpose, regenerate it:\n    %s\n%s" % (
                          REGENERATE, diff(have, want)))


def diff(have, want):
    import difflib
    lines = difflib.unified_diff(have.splitlines(), want.splitlines(), "docs/bad-inputs.md",
                                 "generated", lineterm="", n=0)
    return "\n".join(list(lines)[:80])


def main(argv):
    if len(argv) == 2 and argv[0] == "--write-doc":
        lab = run_cases()
        with open(argv[1], "w") as f:
            f.write(doc_text(lab))
        for what, problem in lab.problems:
            print("PROBLEM: %s: %s" % (what, problem), file=sys.stderr)
        print("wrote %s (%d rows, %d problems)" % (argv[1], len(lab.rows), len(lab.problems)))
        return 1 if lab.problems else 0
    unittest.main(argv=[sys.argv[0]] + argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
