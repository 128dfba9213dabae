#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How much of what goroutine frames keep alive heapref names by a variable.

    python3 bench/frame_names.py [--heapref BIN] [--toolchains go1.19,go1.26,...]
                                 [--programs server,example,...] [--flags default|-N-l]

For each program (testprogs/, built and run by tests/e2e/progs.py) and Go toolchain,
analyses its dump and splits the bytes charged under frame roots in two: roots named
after a variable (`main.upload.buf`: the function of a frame of the dump, a dot and a
name) and roots named after the function alone (`main.upload`: frame words no
variable explained). Prints one row per program and toolchain with both, the share
named by a variable, and the number of frame pointer words left to the function
(heapref's summary line "frame words without a variable"). Needs heapref built.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
import profile  # noqa: E402  (tests/e2e/profile.py)
import progs  # noqa: E402
import reach  # noqa: E402


def measure(heapref, name, env, gcflags, work):
    binary, dump, _ = progs.prepare(name, work, env=env, gcflags=gcflags)
    d = reach.load(dump)
    funcs = {f.name for f in d.frames}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.pb.gz")
        p = subprocess.run([heapref, "analyze", "-o", out, binary, dump],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit("heapref analyze %s: %s" % (name, p.stderr))
        prof = profile.read(out)
    words = re.search(r"(\d+) frame words without a variable", p.stderr)
    named = unnamed = 0
    for root in {c[0] for c in prof}:
        b = profile.cum(prof, (root,))[1]
        if root in funcs:
            unnamed += b
        elif any(root.startswith(f + ".") for f in funcs):
            named += b
    return named, unnamed, int(words.group(1)) if words else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heapref", default=os.path.join(progs.ROOT, "build", "heapref"))
    ap.add_argument("--toolchains", default="local")
    ap.add_argument("--programs", default="server,example,goroutine,closure,chan")
    ap.add_argument("--flags", default="default", choices=("default", "-N-l"))
    a = ap.parse_args()
    work = os.environ.get("HEAPREF_WORK") or os.path.join(progs.ROOT, "build-e2e-work")
    gcflags = "all=-N -l" if a.flags == "-N-l" else None
    print("| program | Go | named by a variable (bytes) | by the function only (bytes) "
          "| share named | frame roots by function |")
    print("|---|---|---|---|---|---|")
    for tc in a.toolchains.split(","):
        env = None if tc == "local" else {"GOTOOLCHAIN": tc}
        for name in a.programs.split(","):
            named, unnamed, words = measure(a.heapref, name, env, gcflags, work)
            total = named + unnamed
            print("| %s | %s | %d | %d | %s | %d |" % (
                name, tc, named, unnamed,
                "%.1f%%" % (100.0 * named / total) if total else "-", words))


if __name__ == "__main__":
    main()
