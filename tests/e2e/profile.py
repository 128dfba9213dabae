# SPDX-License-Identifier: Apache-2.0
"""Reads a heapref profile through the real pprof client (`go tool pprof -raw`).

    p = profile.load(path)   # {chain tuple, root first: [objects, bytes]}
    profile.totals(p)        # (objects, bytes) over all chains
    profile.cum(p, prefix)   # (objects, bytes) over chains starting with prefix
    profile.children(p, prefix)  # names one step below prefix
    profile.parse_raw.labels     # {chain: {key: value}}: the string labels of the last read

A chain's value is its node's own value: the sum of the samples whose stack is
exactly that chain. `-raw` prints every sample's values as exact integers and its
stack as location ids (leaf first), then each location's function name; names hold
spaces, dots, brackets and '$' ("[10+]. (*main.Node)"), so they are cut out by
position, never split on whitespace.

Environment: HEAPREF_GO (go command, default "go"). Standard library only.
"""

import os
import re
import subprocess

GO = os.environ.get("HEAPREF_GO", "go")

# A sample: "   <v1>   <v2>: <location id> <location id> ..." (leaf first). Values are
# negative in a diff (-diff_base: the base profile's samples, negated).
_SAMPLE = re.compile(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$")
# A location's first line: "    <id>: 0x<addr> [M=<mapping> ][[F] ]<rest>"; a line
# of the same location inlined further out starts with blanks instead of "<id>: ...".
_LOCATION = re.compile(r"^\s*(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(?:\[F\] )?(.*)$")
_INLINED = re.compile(r"^ {13}(\S.*)$")
# A sample's string labels, on a line of their own below it: "    key:[value] key2:[v2]"
# (values may hold brackets and blanks: a value ends where "] key:[" or the line does).
_LABEL = re.compile(r"^\s+[A-Za-z_][\w.]*:\[.*\]$")
_LABEL_SPLIT = re.compile(r"\] (?=[A-Za-z_][\w.]*:\[)")


def _labels_of(line):
    out = {}
    for part in _LABEL_SPLIT.split(line.strip()[:-1]):
        key, value = part.split(":[", 1)
        out[key] = value
    return out
# <rest> is "<function> <file>:<line>:<column> s=<start line>[(<system name>)]",
# or "??" without a function. The file name heapref writes is empty.
_LINE = re.compile(r"^(.*) (\S*):(-?\d+):(-?\d+) s=-?\d+(?:\(.*\))?$")


def pprof_raw(path, go=GO):
    p = subprocess.run([go, "tool", "pprof", "-raw", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        raise AssertionError("go tool pprof -raw %s exited %d: %s" % (
            path, p.returncode, p.stderr.decode(errors="replace")))
    return p.stdout.decode()


def parse_raw(text):
    """The {chain: [objects, bytes]} of `go tool pprof -raw` output."""
    section, types, samples, names, loc, labels = None, None, [], {}, None, {}
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if types is None:   # "inuse_objects/count inuse_space/bytes[dflt]"
                types = [t.split("/")[0] for t in line.split()]
                continue
            m = _SAMPLE.match(line)
            if m:   # other lines are a sample's labels
                samples.append(([int(v) for v in m.group(1).split()],
                                [int(l) for l in m.group(2).split()]))
        elif section == "Locations":
            m = _LOCATION.match(line)
            if m:
                loc = int(m.group(1))
                names[loc] = [_function(m.group(2))]
            elif _INLINED.match(line) and loc is not None:
                # Line[0] is the innermost function, as the stack is leaf first
                names[loc].append(_function(_INLINED.match(line).group(1)))
        if section == "Samples:" and samples and _LABEL.match(line):
            labels.setdefault(len(samples) - 1, {}).update(_labels_of(line))
    parse_raw.labels = {}   # {chain: {key: value}} of the last text parsed
    if types is None or "inuse_objects" not in types or "inuse_space" not in types:
        raise AssertionError("profile has sample types %r, not inuse_objects and "
                             "inuse_space" % types)
    io, isp = types.index("inuse_objects"), types.index("inuse_space")
    chains = {}
    for i, (values, locs) in enumerate(samples):
        stack = [name for l in locs for name in names[l]]
        chain = tuple(reversed(stack))   # pprof lists leaf first
        if i in labels:
            parse_raw.labels.setdefault(chain, {}).update(labels[i])
        v = chains.setdefault(chain, [0, 0])
        v[0] += values[io]
        v[1] += values[isp]
    return chains


def _function(rest):
    m = _LINE.match(rest)
    if not m:
        raise AssertionError("cannot read pprof location %r" % rest)
    return m.group(1)


def load(path, go=GO):
    """Reads the profile at path with `go tool pprof -raw`; {chain: [objects, bytes]}."""
    return parse_raw(pprof_raw(path, go))


read = load


def totals(p):
    """(objects, bytes) summed over all chains."""
    return cum(p, ())


def cum(p, prefix):
    """(objects, bytes) summed over the chains that start with prefix."""
    prefix, n = tuple(prefix), len(prefix)
    objs = byts = 0
    for chain, (o, b) in p.items():
        if chain[:n] == prefix:
            objs += o
            byts += b
    return objs, byts


def children(p, prefix):
    """The set of names that follow prefix in some chain."""
    prefix, n = tuple(prefix), len(prefix)
    return {chain[n] for chain in p if len(chain) > n and chain[:n] == prefix}
