# SPDX-License-Identifier: Apache-2.0
"""Build and run the Go test programs in testprogs/ for end-to-end tests.

Each program in testprogs/<name>/ writes a heap dump to the file named on
its command line and prints one JSON object ("facts") on stdout that tests
use as independent truth (see the comment at the top of each main.go).

    binary, dump, facts = progs.prepare("cache", work_dir)
    binary, dump, facts = progs.prepare("cache", work_dir,
                                        env={"GOTOOLCHAIN": "go1.22.12"})
    binary, dump, facts = progs.prepare("cache", work_dir, env={"GOARCH": "arm64"})

Standard library only.
"""

import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toolchains  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TESTPROGS = os.path.normpath(os.path.join(HERE, "..", "..", "testprogs"))
ROOT = os.path.normpath(os.path.join(TESTPROGS, ".."))

# What the end-to-end tests take from their environment: ctest sets HEAPREF (the binary)
# and HEAPREF_WORK (the cache of built programs and dumps); HEAPREF_GO and
# HEAPREF_GOTOOLCHAIN choose another go command or toolchain for a run by hand.
HEAPREF = os.path.abspath(os.environ.get("HEAPREF", os.path.join(ROOT, "build", "heapref")))
WORK = os.path.abspath(os.environ.get("HEAPREF_WORK") or
                       os.path.join(tempfile.gettempdir(), "heapref-e2e-work"))
GO = os.environ.get("HEAPREF_GO", "go")
ADHOC_ENV = ({"GOTOOLCHAIN": os.environ["HEAPREF_GOTOOLCHAIN"]}
             if os.environ.get("HEAPREF_GOTOOLCHAIN") else None)

# The scenario programs (not gen, the benchmark dump generator).
PROGRAMS = [
    "globals",
    "cache",
    "goroutine",
    "iface",
    "chan",
    "closure",
    "unsafecast",
    "finalizer",
    "list",
    "cycle",
    "example",
    "static",
    "syncmap",
    "server",
    "deadslot",
    "pieces",
]

DUMP_MAGIC = b"go1.7 heap dump\n"

BUILD_TIMEOUT = 900  # seconds; a first build may download a toolchain
RUN_TIMEOUT = 1800


def heapref(*args, timeout=600, cwd=None):
    """Runs HEAPREF with args; returns (exit status, stdout, stderr) as text."""
    p = subprocess.run([HEAPREF] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def is_asan_build(path):
    """Whether the binary at path was built with AddressSanitizer (tests that run once, or
    that cannot run under it, skip there)."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


class ProgError(Exception):
    """A test program failed to build or run."""


def _env(env):
    e = dict(os.environ)
    if env:
        e.update({k: str(v) for k, v in env.items()})
    return e


def _go_output(go, args, env):
    try:
        p = subprocess.run([go] + args, cwd=TESTPROGS, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=BUILD_TIMEOUT)
    except OSError as e:
        raise ProgError("cannot run %s: %s" % (go, e))
    if p.returncode != 0:
        raise ProgError("%s %s failed (exit %d):\n%s%s" % (
            go, " ".join(args), p.returncode,
            p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")))
    return p.stdout.decode().strip()


def _toolchain(go, env):
    """Returns (go command, environment) to build with.

    A toolchain selected with GOTOOLCHAIN is downloaded into the module
    cache, and Go releases before 1.21 cannot build in module mode when
    their GOROOT lies inside GOMODCACHE (every package fails with
    'import "": import of unknown directory'). So resolve the selected
    toolchain's GOROOT and run its go command directly, with
    GOTOOLCHAIN=local and, if needed, a private empty module cache (the
    programs have no dependencies).
    """
    e = _env(env)
    if not (env and "GOTOOLCHAIN" in env):
        return go, e
    goroot = _go_output(go, ["env", "GOROOT"], e)
    modcache = _go_output(go, ["env", "GOMODCACHE"], e)
    gobin = os.path.join(goroot, "bin", "go")
    if not os.path.exists(gobin):
        return go, e
    e["GOTOOLCHAIN"] = "local"
    e["GOROOT"] = goroot
    root = os.path.realpath(goroot)
    for mc in modcache.split(os.pathsep):
        mc = os.path.realpath(mc) if mc else ""
        if mc and (root == mc or root.startswith(mc + os.sep)):
            private = os.path.join(tempfile.gettempdir(),
                                   "heapref-gomodcache-%d" % os.getuid())
            os.makedirs(private, exist_ok=True)
            e["GOMODCACHE"] = private
            break
    return gobin, e


def go_version(go="go", env=None):
    """`go env GOVERSION` of the toolchain build() would use."""
    gobin, e = _toolchain(go, env)
    return _go_output(gobin, ["env", "GOVERSION"], e)


def build(name, out_dir, go="go", env=None, gcflags=None, ldflags=None):
    """Builds testprogs/<name> into out_dir/<name> and returns its path.

    env overrides environment variables (e.g. {"GOTOOLCHAIN": "go1.22.12"});
    gcflags / ldflags are passed as -gcflags= / -ldflags=.
    Raises ProgError with the build output on failure.
    """
    if not os.path.isdir(os.path.join(TESTPROGS, name)):
        raise ProgError("no test program %r in %s" % (name, TESTPROGS))
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.abspath(os.path.join(out_dir, name))
    gobin, e = _toolchain(go, env)
    # -buildvcs=false: testprogs/ sits in the project's git work tree, and
    # stamping VCS information can fail (no git, "dubious ownership").
    args = ["build", "-buildvcs=false", "-o", out]
    if gcflags is not None:
        args.append("-gcflags=" + gcflags)
    if ldflags is not None:
        args.append("-ldflags=" + ldflags)
    args.append("./" + name)
    _go_output(gobin, args, e)
    return out


# ELF e_machine -> GOARCH, for the architectures the matrix builds for.
_ELF_MACHINES = {62: "amd64", 183: "arm64"}


def elf_goarch(binary):
    """The GOARCH of an ELF executable, from its header (None if not one we know)."""
    with open(binary, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF" or head[5] != 1:  # little-endian only
        return None
    return _ELF_MACHINES.get(int.from_bytes(head[18:20], "little"))


def _command(binary):
    """How to run binary here: itself, or under the emulator of its architecture."""
    try:
        emulator = toolchains.emulator_for(elf_goarch(binary))
    except toolchains.MatrixError as e:
        raise ProgError("cannot run %s: %s" % (binary, e))
    if not emulator:
        return [binary]
    path = shutil.which(emulator)
    if not path:
        raise ProgError("cannot run %s (GOARCH=%s): %s is not on PATH; install Debian's %s "
                        "(scripts/install-deps.sh --tests does)" % (
                            binary, elf_goarch(binary), emulator, toolchains.QEMU_PACKAGE))
    return [path, binary]


def run(binary, dump_path, args=(), timeout=RUN_TIMEOUT):
    """Runs a test program; returns its facts (parsed JSON from stdout).

    args are extra arguments before the dump path (e.g. gen's flags). A program
    built for another architecture (GOARCH=arm64) runs under its emulator
    (qemu-aarch64-static). Raises ProgError (with stderr) if it fails, prints no
    JSON object, or leaves the dump missing or empty.
    """
    try:
        os.remove(dump_path)
    except OSError as e:
        if e.errno != errno.ENOENT:
            raise
    cmd = _command(binary) + list(args) + [dump_path]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ProgError("cannot run %s: %s" % (" ".join(cmd), e))
    stderr = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        raise ProgError("%s exited %d:\n%s" % (" ".join(cmd), p.returncode, stderr))
    try:
        facts = json.loads(p.stdout.decode())
    except ValueError as e:
        raise ProgError("%s printed no facts JSON (%s):\nstdout: %r\nstderr: %s" % (
            " ".join(cmd), e, p.stdout[:2000], stderr))
    if not isinstance(facts, dict):
        raise ProgError("%s printed %r, not a JSON object" % (" ".join(cmd), facts))
    try:
        size = os.path.getsize(dump_path)
    except OSError:
        size = 0
    if size == 0:
        raise ProgError("%s left no dump at %s:\n%s" % (" ".join(cmd), dump_path, stderr))
    return facts


# The descriptor a program holds on after its dump when a test opens it
# (testprogs/internal/dump: HoldFD).
HOLD_FD = 100


def _thread_states(pid):
    states = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass   # a thread that just ended
    return states


def wait_all_stopped(pid, seconds):
    """Whether every thread of pid is in a tracing stop ("t") within seconds.

    heapref's stop seizes every thread; the low-pause copy borrows one beforehand for
    a moment (core_borrow.c), and a look at the main thread alone may catch that."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            states = _thread_states(pid)
        except OSError:
            return False   # the process is gone
        if states and all(s == "t" for s in states):
            return True
        time.sleep(0.01)
    return False


def wait_settled(pid, timeout=10.0):
    """Waits until no thread of pid runs, twice in a row 20 ms apart (or timeout).

    A program says "held" just before it blocks reading HOLD_FD; taken between the two,
    its main goroutine runs between safe points, where neither a core reader nor the
    runtime itself can read its frames. The wait makes the held state the one read."""
    deadline = time.monotonic() + timeout
    quiet = 0
    while quiet < 2 and time.monotonic() < deadline:
        quiet = quiet + 1 if "R" not in _thread_states(pid) else 0
        time.sleep(0.02)


def run_held(binary, dump_path, while_held, args=(), timeout=RUN_TIMEOUT, wrap=()):
    """Runs a test program that holds after writing its dump; returns (facts, result).

    The program gets one end of a socket pair as descriptor HOLD_FD; after its dump
    it says "held" there and waits, changing nothing, until it reads a byte. Then
    while_held(pid) runs (to take a core of the state the dump shows) and its result
    is returned with the facts. Programs for another architecture run under an
    emulator, whose process is not the program's: ProgError. wrap: a command that runs
    the program (unshare --pid --fork ...); while_held then gets the wrapper's process id.
    """
    cmd = _command(binary)
    if len(cmd) > 1:
        raise ProgError("%s runs under an emulator: its process is not the Go program's" %
                        binary)
    cmd = list(wrap) + cmd
    ours, theirs = socket.socketpair()
    saved = os.dup(HOLD_FD) if _fd_open(HOLD_FD) else None
    os.dup2(theirs.fileno(), HOLD_FD)
    try:
        p = subprocess.Popen(cmd + list(args) + [dump_path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, pass_fds=(HOLD_FD,))
    finally:
        theirs.close()
        if saved is None:
            os.close(HOLD_FD)
        else:
            os.dup2(saved, HOLD_FD)
            os.close(saved)
    try:
        ours.settimeout(timeout)
        said = ours.recv(5)
        if said != b"held\n":
            p.kill()
            out, err = p.communicate()
            raise ProgError("%s did not hold after its dump (said %r):\n%s" % (
                binary, said, err.decode(errors="replace")))
        wait_settled(p.pid)
        result = while_held(p.pid)
        ours.send(b"x")
        out, err = p.communicate(timeout=timeout)
    finally:
        ours.close()
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode != 0:
        raise ProgError("%s exited %d:\n%s" % (binary, p.returncode, err.decode(errors="replace")))
    return json.loads(out.decode()), result


def emulated_core(binary, dump_path, core_dir, args=(), timeout=RUN_TIMEOUT):
    """Runs a program built for another architecture under its emulator, holding after
    its dump, and makes the emulator write the program's core (qemu-user writes the
    guest's own core, qemu_<prog>_<date>_<pid>.core in the working directory, when the
    program dies of a signal): GOTRACEBACK=crash, SIGABRT once held. Returns the core's
    path in core_dir; the host's core of the emulator itself, if any, is removed."""
    cmd = _command(binary)
    ours, theirs = socket.socketpair()
    os.dup2(theirs.fileno(), HOLD_FD)
    env = dict(os.environ, GOTRACEBACK="crash")

    def unlimited_cores():
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    try:
        p = subprocess.Popen(cmd + list(args) + [os.path.abspath(dump_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             cwd=core_dir, pass_fds=(HOLD_FD,), preexec_fn=unlimited_cores)
    finally:
        theirs.close()
        os.close(HOLD_FD)
    try:
        ours.settimeout(timeout)
        said = ours.recv(5)
        if said != b"held\n":
            raise ProgError("%s did not hold after its dump (said %r)" % (binary, said))
        wait_settled(p.pid)   # the emulator's threads are the program's
        p.send_signal(signal.SIGABRT)
        p.communicate(timeout=timeout)
    finally:
        ours.close()
        if p.poll() is None:
            p.kill()
            p.wait()
    cores = [f for f in os.listdir(core_dir) if f.startswith("qemu_") and f.endswith(".core")]
    for f in os.listdir(core_dir):
        if f == "core" or f.startswith("core."):
            os.remove(os.path.join(core_dir, f))
    if len(cores) != 1:
        raise ProgError("%s under its emulator left %d guest cores in %s" % (
            binary, len(cores), core_dir))
    return os.path.join(core_dir, cores[0])


def _fd_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _source_digest(name):
    """Hash of the program's sources, the shared package and go.mod."""
    h = hashlib.sha256()
    paths = [os.path.join(TESTPROGS, "go.mod")]
    for d in (os.path.join(TESTPROGS, name), os.path.join(TESTPROGS, "internal")):
        for root, dirs, files in os.walk(d):
            dirs.sort()
            paths.extend(os.path.join(root, f) for f in sorted(files))
    for path in paths:
        h.update(os.path.relpath(path, TESTPROGS).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(f.read())
        h.update(b"\0")
    return h.hexdigest()


_prepared = {}


def prepare(name, work_dir, args=(), **build_kwargs):
    """Builds and runs a program once; returns (binary, dump, facts).

    Results are cached by (name, args, go, env, gcflags, ldflags, sources)
    in a subdirectory of work_dir, both within this process and on disk, so
    several tests (or several test processes sharing work_dir) build and
    run each variant once. A lock file serialises concurrent preparers.
    """
    key_parts = {
        "name": name,
        "args": list(args),
        "go": build_kwargs.get("go", "go"),
        "env": sorted((build_kwargs.get("env") or {}).items()),
        "gcflags": build_kwargs.get("gcflags"),
        "ldflags": build_kwargs.get("ldflags"),
        "src": _source_digest(name),
    }
    key = hashlib.sha256(json.dumps(key_parts, sort_keys=True).encode()).hexdigest()[:16]
    cache_key = (os.path.abspath(work_dir), key)
    if cache_key in _prepared:
        return _prepared[cache_key]

    d = os.path.join(work_dir, "%s-%s" % (name, key))
    os.makedirs(d, exist_ok=True)
    binary = os.path.join(d, name)
    dump_path = os.path.join(d, name + ".dump")
    facts_path = os.path.join(d, "facts.json")
    with open(os.path.join(d, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        facts = None
        if os.path.exists(facts_path) and os.path.exists(binary):
            try:
                with open(facts_path) as f:
                    facts = json.load(f)
                if os.path.getsize(dump_path) == 0:
                    facts = None
            except (OSError, ValueError):
                facts = None
        if facts is None:
            try:
                os.remove(facts_path)
            except OSError:
                pass
            build(name, d, **build_kwargs)
            facts = run(binary, dump_path, args=args)
            tmp = facts_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(facts, f, sort_keys=True)
            os.replace(tmp, facts_path)
    result = (binary, dump_path, facts)
    _prepared[cache_key] = result
    return result
