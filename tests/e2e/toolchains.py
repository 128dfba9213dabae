# SPDX-License-Identifier: Apache-2.0
"""The matrix of Go toolchains and architectures the end-to-end tests run against.

This is the one place that names them. ctest makes one test per entry
(e2e_analyze_<name>, tests/CMakeLists.txt asks `python3 toolchains.py names`),
scripts/install-deps.sh fetches the toolchains (`python3 toolchains.py toolchains`),
test_info.py and test_binary.py take theirs from here, and README.md and
docs/go-versions.md list what the matrix proves.

Each entry stands for one side of a break in what heapref must handle (see
docs/go-versions.md): a toolchain is the newest patch release of its minor
version that the Go module proxy serves (`GOTOOLCHAIN=go1.N.M go version`
fetches it into the module cache). The machine's Go must be Go 1.26: the
go1.26 and arm64 entries use it as it is.

    entry = toolchains.selected()      # from HEAPREF_MATRIX, e.g. "go1.22"
    progs.prepare(name, work, env=entry.env)
    toolchains.check(entry)            # raises MatrixError saying what to install

Standard library only.
"""

import collections
import os
import platform
import shutil
import sys

# The minor release the machine's Go must be (the go1.26 and arm64 entries); also
# the name of the entry a run without HEAPREF_MATRIX stands for.
MACHINE_GO = "go1.26"


class Entry(collections.namedtuple("Entry", "name toolchain goarch covers")):
    """name: the ctest suffix; toolchain: a GOTOOLCHAIN value, None for the machine's
    Go; goarch: GOARCH to build for, None for the machine's; covers: the break."""
    __slots__ = ()

    @property
    def env(self):
        """The environment progs.prepare() builds with: None for the machine's Go."""
        out = {}
        if self.toolchain:
            out["GOTOOLCHAIN"] = self.toolchain
        if self.goarch:
            out["GOARCH"] = self.goarch
        return out or None


MATRIX = (
    Entry("go1.19", "go1.19.13", None,
          "before allocation headers (1.22), bucket maps, DWARF 4, closures without "
          "DW_AT_go_closure_offset"),
    Entry("go1.20", "go1.20.14", None,
          "sync.Map entries typed (atomic.Pointer[any]); otherwise as 1.19"),
    Entry("go1.21", "go1.21.13", None,
          "the last release without allocation headers"),
    Entry("go1.22", "go1.22.12", None,
          "allocation headers, still bucket maps and no closure offsets"),
    Entry("go1.23", "go1.23.12", None,
          "DW_AT_go_closure_offset, the last bucket maps"),
    Entry("go1.24", "go1.24.13", None,
          "swiss maps, the last DWARF 4"),
    Entry("go1.25", "go1.25.14", None,
          "DWARF 5, the last one-word interface values decided by shape"),
    Entry("go1.26", None, None,
          "the machine's Go: one-word interface values decided by size"),
    Entry("go1.27", "go1.27.4", None,
          "the newest release heapref knows"),
    Entry("arm64", None, "arm64",
          "linux/arm64 (the machine's Go, GOARCH=arm64), run under qemu-aarch64-static"),
)

QEMU = {"arm64": "qemu-aarch64-static"}   # GOARCH -> the user-mode emulator that runs it
QEMU_PACKAGE = "qemu-user-static"          # Debian's package of those emulators


class MatrixError(Exception):
    """A matrix entry cannot be run here; the message says what to install."""


def entry(name):
    for e in MATRIX:
        if e.name == name:
            return e
    raise MatrixError("no matrix entry %r in tests/e2e/toolchains.py (entries: %s)" % (
        name, ", ".join(e.name for e in MATRIX)))


def toolchain(name):
    """The GOTOOLCHAIN value of entry name ("go1.24" -> "go1.24.13")."""
    return entry(name).toolchain


def selected(environ=os.environ):
    """The entry HEAPREF_MATRIX names; without it, the machine's Go, or the ad hoc
    toolchain HEAPREF_GOTOOLCHAIN names (one run by hand, not a matrix entry)."""
    name = environ.get("HEAPREF_MATRIX")
    if name:
        return entry(name)
    adhoc = environ.get("HEAPREF_GOTOOLCHAIN")
    if adhoc:
        return Entry(adhoc, adhoc, None, "HEAPREF_GOTOOLCHAIN")
    return entry(MACHINE_GO)


def _minor(version):
    """"go1.26" from "go1.26.8" (or "go1.26rc1")."""
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else version


def expected_version_ok(e, go_version):
    """Whether go_version (runtime.Version() of a test program) is what entry e promises."""
    if e.toolchain:
        return go_version == e.toolchain
    return _minor(go_version) == MACHINE_GO


def check(e, go_version):
    """Raises MatrixError unless entry e can run here: go_version is the version of the
    toolchain e builds with (progs.go_version(env=e.env)); a foreign GOARCH needs its
    emulator on PATH."""
    if not expected_version_ok(e, go_version):
        if e.toolchain:
            raise MatrixError("matrix entry %s wants %s but building gives %s" % (
                e.name, e.toolchain, go_version))
        raise MatrixError(
            "matrix entry %s runs on the machine's Go, which must be %s.x (it is %s): "
            "install Go 1.26 from https://go.dev/dl or change MACHINE_GO in "
            "tests/e2e/toolchains.py" % (e.name, MACHINE_GO, go_version))
    emulator = emulator_for(e.goarch)
    if emulator and not shutil.which(emulator):
        raise MatrixError("matrix entry %s runs GOARCH=%s programs under %s, which is not "
                          "on PATH: install Debian's %s (scripts/install-deps.sh --tests does)" % (
                              e.name, e.goarch, emulator, QEMU_PACKAGE))


def host_goarch():
    m = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(m, m)


def emulator_for(goarch):
    """The emulator that runs GOARCH programs here, None when they run natively."""
    if not goarch or goarch == host_goarch():
        return None
    if goarch not in QEMU:
        raise MatrixError("no emulator known for GOARCH=%s" % goarch)
    return QEMU[goarch]


def main(argv):
    usage = "usage: toolchains.py names | toolchains | machine-go | emulators"
    if len(argv) != 2:
        print(usage, file=sys.stderr)
        return 2
    what = argv[1]
    if what == "names":
        lines = [e.name for e in MATRIX]
    elif what == "toolchains":
        lines = [e.toolchain for e in MATRIX if e.toolchain]
    elif what == "machine-go":
        lines = [MACHINE_GO]
    elif what == "emulators":
        lines = sorted({QEMU[e.goarch] for e in MATRIX if e.goarch in QEMU})
    else:
        print(usage, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
