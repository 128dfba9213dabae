#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How long `heapref analyze --pid` stops a process, as heapref and as the process see it.

    python3 bench/bench_pause.py [--sizes 1,4] [--rates 0.01,0] [--runs 2] [--no-gcore]
    python3 bench/bench_pause.py --snapshots N
    python3 bench/bench_pause.py --stops N [--sizes 4] [--rates 0.01]

--stops N: N runs of the default mode alone on each process, and the distribution of
their stops (heapref's, and the gap the process saw): median, 90th percentile, worst.

--snapshots N: the consistency loop instead. N snapshots (the default mode) of one
process rewriting its heap fast (testprogs/mutator: 20,000 records, 20 times its heap's
pages a second), each checked as tests/e2e/test_pause.py checks a few: every record and
every buffer reached exactly once. Prints how many were whole; exit status 1 if one was
not.

For each heap size (GiB) and mutation rate (part of the heap rewritten per second; 0 is
a quiet process), testprogs/mutator builds its heap and keeps mutating it; a goroutine
of it ticks every millisecond and keeps the longest gap between ticks. On that one
process, one after the other, each --runs times: heapref's default (copy while it runs,
stop for what it wrote: "auto"), --pause-mode=stop (the whole copy while stopped:
"stop"), each with the core in memory and with --save-core on disk ("+core"), and gdb's
gcore. For each: the stop as heapref reports it (stop_ms); the stop as the process saw
it (gap_ms: the gap between its 1 ms ticks that holds heapref's stop, matched on
CLOCK_MONOTONIC, which heapref's --stats gives; for gcore the longest gap of the run);
the longest other gap during the run (other_ms: the process delayed while heapref
copied, not stopped: two cores shared with heapref and the kernel's work for it); the
memory copied while it was stopped; the time heapref copied while it ran (running_s);
the wall time to the finished profile (heapref; gcore: to the core); and the core's
size on disk. The cores are deleted after each run. Each process gets one run first
that is not reported: the first run's in-memory core makes the kernel find 4 GB of
free pages (reclaiming page cache), which the later runs of either mode do not pay.

The Release build of build-bench/ (bench/bench_dump_file.sh builds it). Goals of
issue 32: a stop under 10 ms at 4 GiB with the mutator running, as the process sees
it; the time to the profile at most 1.5x that of --pause-mode=stop.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import mutator_reach  # noqa: E402
import profile  # noqa: E402
HEAPREF = os.path.join(ROOT, "build-bench", "heapref")
BUFFER = 1000  # bytes of each record's buffer: a record and its buffer are about 1 KiB

STOP = re.compile(r"stopped for ([\d.]+) s \((\d+) threads, ([\d.]+) MB copied")
CLOCK = re.compile(r"copy while it ran ([\d.]+) s, stopped ([\d.]+) s at CLOCK_MONOTONIC ([\d.]+)")
PHASES = re.compile(r"stopping its threads ([\d.]+) s, its writes ([\d.]+) s, untracked mappings "
                    r"([\d.]+) s, letting them go ([\d.]+) s")


class Mutator:
    def __init__(self, binary, gib, rate, records=None):
        records = records or int(gib * (1 << 30) / (BUFFER + 48))
        self.proc = subprocess.Popen([binary, "-records", str(records), "-buffer", str(BUFFER),
                                      "-rate", str(rate)], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready "):
            raise SystemExit("mutator did not start: %r" % line)
        self.pid = int(line.split()[1])

    def gaps(self):
        """(longest gap in ms, [(start s, end s)] of the gaps over 2 ms) since the last ask."""
        os.kill(self.pid, signal.SIGUSR1)
        f = self.proc.stdout.readline().split()
        spans = []
        for g in f[2:]:
            end, length = (int(x) for x in g.split(":"))
            spans.append(((end - length) / 1e9, end / 1e9))
        return float(f[1]), spans

    def end(self):
        self.proc.kill()
        self.proc.wait()


def allocated_mb(path):
    st = os.stat(path)
    return st.st_blocks * 512 / 1e6


def settle():
    """The last run's core written back and gone: each run starts with a quiet disk."""
    os.sync()
    time.sleep(1)


def split_gaps(spans, at, length):
    """(the gap in ms that holds the stop [at, at + length], the longest other gap in ms)."""
    during = other = 0.0
    for start, end in spans:
        if start <= at + length + 0.0005 and end >= at - 0.0005:
            during = max(during, (end - start) * 1e3)
        else:
            other = max(other, (end - start) * 1e3)
    return during, other


def run_heapref(m, work, mode, save):
    core, out = os.path.join(work, "p.core"), os.path.join(work, "p.pb.gz")
    settle()
    m.gaps()
    t0 = time.monotonic()
    p = subprocess.run([HEAPREF, "analyze", "--stats", "--pid", str(m.pid), "--pause-mode", mode,
                        "-o", out] + (["--save-core", core] if save else []),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    _, spans = m.gaps()
    if p.returncode:
        raise SystemExit("heapref failed:\n" + p.stderr)
    s, c = STOP.search(p.stderr), CLOCK.search(p.stderr)
    during, other = split_gaps(spans, float(c.group(3)), float(c.group(2)))
    size = allocated_mb(core) if save else float("nan")
    if save:
        os.unlink(core)
    os.unlink(out)
    ph = PHASES.search(p.stderr)
    return {"stop_ms": float(s.group(1)) * 1e3, "gap_ms": during, "other_ms": other,
            "stopped_mb": float(s.group(3)), "running_s": float(c.group(1)), "wall_s": wall,
            "core_mb": size,
            "phases_ms": [float(x) * 1e3 for x in ph.groups()] if ph else []}


def run_gcore(m, work):
    prefix = os.path.join(work, "g")
    settle()
    m.gaps()
    t0 = time.monotonic()
    p = subprocess.run(["gcore", "-o", prefix, str(m.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    gap, _ = m.gaps()
    core = "%s.%d" % (prefix, m.pid)
    if p.returncode or not os.path.exists(core):
        return None
    size = allocated_mb(core)
    os.unlink(core)
    return {"stop_ms": float("nan"), "gap_ms": gap, "other_ms": float("nan"),
            "stopped_mb": float("nan"), "running_s": float("nan"), "wall_s": wall, "core_mb": size}


def whole(p, records):
    """Whether a snapshot reaches each record and buffer once (as test_pause.py checks)."""
    return mutator_reach.reached(p) == (records, records)


def consistency(binary, work, n):
    """n snapshots of a fast mutator, each checked; the number of whole ones."""
    records, good = 20000, 0
    m = Mutator(binary, 0, 20, records)
    out = os.path.join(work, "c.pb.gz")
    try:
        for i in range(n):
            p = subprocess.run([HEAPREF, "analyze", "--pid", str(m.pid), "-o", out],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode:
                raise SystemExit("heapref failed:\n" + p.stderr)
            ok = whole(profile.load(out), records)
            good += ok
            if not ok:
                print("snapshot %d is torn:\n%s" % (i, p.stderr), flush=True)
    finally:
        m.end()
        if os.path.exists(out):
            os.unlink(out)
    return good


def fmt(r):
    gap = "%8.1f" % r["gap_ms"] if r["gap_ms"] else "%8s" % "<2"  # no gap over 2 ms held it
    return "%8.1f %s %9.1f %11.1f %9.2f %8.2f %8.0f" % (
        r["stop_ms"], gap, r["other_ms"], r["stopped_mb"], r["running_s"], r["wall_s"],
        r["core_mb"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4")
    ap.add_argument("--rates", default="0.01,0")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--no-gcore", action="store_true")
    ap.add_argument("--snapshots", type=int, default=0)
    ap.add_argument("--stops", type=int, default=0)
    a = ap.parse_args()
    subprocess.run(["bash", "-c", ". bench/bench_dump_file.sh && bench_build"], cwd=ROOT,
                   check=True)
    work = tempfile.mkdtemp(prefix="heapref-pause-bench-", dir=os.path.join(ROOT, "bench"))
    binary = os.path.join(work, "mutator")
    subprocess.run(["go", "build", "-o", binary, "./mutator"], cwd=os.path.join(ROOT, "testprogs"),
                   check=True)
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    if a.snapshots:
        t0 = time.monotonic()
        good = consistency(binary, work, a.snapshots)
        print("bench_pause: commit %s: %d of %d snapshots of a mutating process whole (%.0f s)"
              % (rev, good, a.snapshots, time.monotonic() - t0))
        os.remove(binary)
        os.rmdir(work)
        return 0 if good == a.snapshots else 1
    print("bench_pause: commit %s, %s, load %.1f" % (rev, time.strftime("%Y-%m-%d %H:%M UTC",
                                                                      time.gmtime()),
                                                   os.getloadavg()[0]))
    print("%-5s %-6s %-10s %8s %8s %9s %11s %9s %8s %8s" % (
        "heap", "rate", "mode", "stop_ms", "gap_ms", "other_ms", "stopped_MB", "running_s",
        "total_s", "core_MB"))
    failed = False
    for gib in [float(x) for x in a.sizes.split(",")]:
        for rate in [float(x) for x in a.rates.split(",")]:
            m = Mutator(binary, gib, rate)
            try:
                time.sleep(2)
                run_heapref(m, work, "auto", False)  # warm-up: the first run pays for memory
                if a.stops:
                    runs = []
                    for _ in range(a.stops):  # each run, with where its stop went
                        r = run_heapref(m, work, "auto", False)
                        runs.append(r)
                        phases = ("stopping threads %.1f, its writes %.1f, untracked %.1f, "
                                  "resume %.1f ms" % tuple(r["phases_ms"])
                                  if r["phases_ms"] else "")
                        print("%-5s %-6s %-10s stop %.1f ms, seen %.1f ms, %.1f MB: %s" % (
                            "%gG" % gib, rate, "auto", r["stop_ms"], r["gap_ms"],
                            r["stopped_mb"], phases), flush=True)
                    for key in ("stop_ms", "gap_ms"):
                        v = sorted(r[key] for r in runs)
                        print("%-5s %-6s %-10s %s: median %.1f, p90 %.1f, worst %.1f; under 10 ms: "
                              "%d of %d" % ("%gG" % gib, rate, "auto", key, v[len(v) // 2],
                                            v[int(len(v) * 0.9)], v[-1],
                                            sum(x < 10 for x in v), len(v)), flush=True)
                    continue
                for run in range(a.runs):
                    order = [("auto", False), ("stop", False), ("auto", True), ("stop", True)]
                    if run % 2:  # each mode first as often: the first of a kind pays more
                        order = [order[1], order[0], order[3], order[2]]
                    for mode, save in order:
                        r = run_heapref(m, work, mode, save)
                        name = mode + ("+core" if save else "")
                        print("%-5s %-6s %-10s %s" % ("%gG" % gib, rate, name, fmt(r)), flush=True)
                    if not a.no_gcore:
                        r = run_gcore(m, work)
                        if r:
                            print("%-5s %-6s %-10s %s" % ("%gG" % gib, rate, "gcore", fmt(r)),
                                  flush=True)
            except SystemExit as e:
                print(e, file=sys.stderr)
                failed = True
            finally:
                m.end()
    os.remove(binary)
    os.rmdir(work)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
