# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of what heapref writes and which processes it touches, as root
next to secrets (docs/cli.md, "Files and permissions").

Files: a regular file is replaced atomically, through a temporary file created 0600
with O_EXCL|O_NOFOLLOW beside it; /dev/null-like devices, terminals and FIFOs are
written as they are; other devices, sockets, directories and symbolic links to nothing
are refused and left as they were; a symbolic link to a file is followed and the file
replaced, the link kept, unless another user planted it in a shared sticky directory.
Cores and hprof exports (the process's memory) are 0600 whatever the umask, profiles
0666 less the umask. No output may be an input, through any name. SIGINT, SIGTERM and
SIGHUP remove the temporary file; after SIGKILL it is left 0600.

Processes: --pid checks everything it can before it stops anything (heapref itself, no
such process, not a Go program, another binary, not enough room for the core): these
runs set HEAPREF_TEST_HOLD_STOPPED, which would keep a stopped process stopped for
seconds, and a thread polls the target's state throughout: it must never be seen in
the ptrace stop ('t'). A target killed while its memory is copied gives one line and
no core.

Device nodes are made with mknod in a temporary directory, never the system's /dev;
the tests that need root (mknod, mount, another user) skip with the reason otherwise.
The other user is created where CI runs as root (CI set), else the test skips.
"""

import gzip
import os
import pwd
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progs  # noqa: E402

HEAPREF = progs.HEAPREF
OTHER_USER = "heapref-probe"   # made by the test where CI runs as root
HOLD = "3"                      # seconds a wrongly stopped process would stay stopped


def run(args, env=None, stdout=subprocess.PIPE, umask=None, cwd=None, timeout=600):
    """heapref with args: (status, stdout bytes, stderr text)."""
    def pre():
        if umask is not None:
            os.umask(umask)
    p = subprocess.run([HEAPREF] + [str(a) for a in args], stdout=stdout,
                       stderr=subprocess.PIPE, env=dict(os.environ, **(env or {})),
                       preexec_fn=pre, cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout or b"", p.stderr.decode(errors="replace")


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def leftovers(directory):
    return sorted(n for n in os.listdir(directory) if ".tmp." in n)


def is_profile(data):
    """Whether data is a gzipped pprof profile (a protobuf inside gzip)."""
    try:
        return len(gzip.decompress(data)) > 0
    except (OSError, EOFError):
        return False


def can_mknod(directory):
    probe = os.path.join(directory, "probe-null")
    try:
        os.mknod(probe, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as e:
        return str(e)
    os.remove(probe)
    return None


class Outputs(unittest.TestCase):
    """Where the bytes of -o go, on the dump of testprogs/finalizer."""

    @classmethod
    def setUpClass(cls):
        cls.binary, cls.dump, _ = progs.prepare("finalizer", progs.WORK)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="heapref-outputs-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def analyze(self, out, *extra, **kw):
        return run(["analyze", "-o", out, *extra, self.binary, self.dump], **kw)

    def refused(self, res, status, *words):
        code, out, err = res
        self.assertEqual(code, status, err)
        self.assertEqual(out, b"")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, err)
        for w in words:
            self.assertIn(w, lines[0])
        self.assertEqual(leftovers(self.dir), [])

    def mknod(self, name, kind, major, minor):
        why = can_mknod(self.dir)
        if why:
            self.skipTest("cannot make device nodes here: %s" % why)
        p = self.path(name)
        os.mknod(p, 0o666 | kind, os.makedev(major, minor))
        return p

    def assert_device(self, path, kind, major, minor):
        st = os.lstat(path)
        self.assertEqual(stat.S_IFMT(st.st_mode), kind, "%s is no longer a device" % path)
        self.assertEqual((os.major(st.st_rdev), os.minor(st.st_rdev)), (major, minor))

    # -- what is written as it is, what is refused ------------------------------------

    def test_null_device_written_not_replaced(self):
        null = self.mknod("null", stat.S_IFCHR, 1, 3)
        code, _, err = self.analyze(null)
        self.assertEqual(code, 0, err)
        self.assert_device(null, stat.S_IFCHR, 1, 3)
        self.assertEqual(leftovers(self.dir), [])

    def test_full_device_is_an_output_error(self):
        full = self.mknod("full", stat.S_IFCHR, 1, 7)
        self.refused(self.analyze(full), 3, full, "No space left")
        self.assert_device(full, stat.S_IFCHR, 1, 7)

    def test_other_devices_refused(self):
        for name, kind, major, minor in (("random", stat.S_IFCHR, 1, 8),
                                         ("loop", stat.S_IFBLK, 7, 200)):
            with self.subTest(device=name):
                dev = self.mknod(name, kind, major, minor)
                self.refused(self.analyze(dev), 3, dev, "device")
                self.assert_device(dev, kind, major, minor)

    def test_fifo_written(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        got = {}

        def read():
            with open(fifo, "rb") as f:
                got["data"] = f.read()
        reader = threading.Thread(target=read)
        reader.start()
        code, _, err = self.analyze(fifo)
        reader.join(30)
        self.assertEqual(code, 0, err)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertTrue(is_profile(got.get("data", b"")), "no profile came through the FIFO")

    def test_socket_and_directory_refused(self):
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        sock.bind(self.path("sock"))
        self.refused(self.analyze(self.path("sock")), 3, "sock", "socket")
        self.assertTrue(stat.S_ISSOCK(os.lstat(self.path("sock")).st_mode))
        os.mkdir(self.path("adir"))
        self.refused(self.analyze(self.path("adir")), 3, "adir", "directory")
        self.assertEqual(os.listdir(self.path("adir")), [])

    def test_stdout_by_name(self):
        """/dev/fd/1 (and /dev/stdout, not tried: a heapref that replaced it would damage
        the machine) is standard output, a pipe or a file."""
        code, out, err = self.analyze("/dev/fd/1")
        self.assertEqual(code, 0, err)
        self.assertTrue(is_profile(out))
        with open(self.path("redirected"), "wb") as f:   # stdout a file, not a pipe
            code, _, err = self.analyze("/dev/fd/1", stdout=f)
        self.assertEqual(code, 0, err)
        with open(self.path("redirected"), "rb") as f:
            self.assertTrue(is_profile(f.read()))
        self.assertEqual(leftovers(self.dir), [])

    # -- symbolic links -----------------------------------------------------------------

    def test_symlink_to_a_file_replaces_the_file(self):
        os.mkdir(self.path("real"))
        target = self.path("real/p.pb.gz")
        with open(target, "wb") as f:
            f.write(b"old")
        os.symlink(target, self.path("link"))
        code, _, err = self.analyze(self.path("link"))
        self.assertEqual(code, 0, err)
        self.assertTrue(os.path.islink(self.path("link")), "the link was replaced")
        with open(target, "rb") as f:
            self.assertTrue(is_profile(f.read()))
        self.assertEqual(leftovers(self.dir) + leftovers(self.path("real")), [])

    def test_symlink_to_nothing_refused(self):
        os.symlink(self.path("nowhere/x"), self.path("dangling"))
        self.refused(self.analyze(self.path("dangling")), 3, "dangling", "symbolic link")
        self.assertFalse(os.path.exists(self.path("nowhere")))

    # -- modes ----------------------------------------------------------------------------

    def test_modes_follow_the_contents(self):
        for umask in (0o000, 0o022):
            with self.subTest(umask=oct(umask)):
                for name in ("p.pb.gz", "a.pb.gz", "x.hprof"):
                    if os.path.exists(self.path(name)):
                        os.remove(self.path(name))
                code, _, err = self.analyze(self.path("p.pb.gz"), umask=umask)
                self.assertEqual(code, 0, err)
                self.assertEqual(mode_of(self.path("p.pb.gz")), 0o666 & ~umask)
                code, _, err = run(["allocs", "-o", self.path("a.pb.gz"), self.binary,
                                    self.dump], umask=umask)
                self.assertEqual(code, 0, err)
                self.assertEqual(mode_of(self.path("a.pb.gz")), 0o666 & ~umask)
                code, _, err = run(["hprof", "-o", self.path("x.hprof"), self.binary,
                                    self.dump], umask=umask)
                self.assertEqual(code, 0, err)
                self.assertEqual(mode_of(self.path("x.hprof")), 0o600,
                                 "an hprof export holds the heap's contents")

    def test_existing_hprof_replaced_private(self):
        out = self.path("x.hprof")
        with open(out, "wb") as f:
            f.write(b"old")
        os.chmod(out, 0o644)
        code, _, err = run(["hprof", "-o", out, self.binary, self.dump])
        self.assertEqual(code, 0, err)
        self.assertEqual(mode_of(out), 0o600)

    # -- never an input -------------------------------------------------------------------

    def test_no_input_overwritten(self):
        work = self.path("in")
        os.mkdir(work)
        binary = shutil.copy(self.binary, os.path.join(work, "prog"))
        dump = shutil.copy(self.dump, os.path.join(work, "in.dump"))
        os.link(dump, os.path.join(work, "hard.dump"))
        os.symlink(binary, os.path.join(work, "soft-prog"))
        before = {n: open(os.path.join(work, n), "rb").read() for n in ("prog", "in.dump")}
        cases = [
            ["analyze", "-o", dump, binary, dump],
            ["analyze", "-o", os.path.join(work, "hard.dump"), binary, dump],
            ["analyze", "-o", os.path.join(work, "soft-prog"), binary, dump],
            ["analyze", "--text", "-o", dump, binary, dump],
            ["hprof", "-o", binary, binary, dump],
            ["allocs", "-o", dump, binary, dump],
            ["diff", "-o", binary, binary, dump, binary, dump],
        ]
        for args in cases:
            with self.subTest(args=args):
                code, out, err = run(args)
                self.assertEqual(code, 2, err)
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn("does not overwrite its inputs", err)
                for n, data in before.items():
                    with open(os.path.join(work, n), "rb") as f:
                        self.assertEqual(f.read(), data, "%s changed" % n)
                self.assertTrue(os.path.islink(os.path.join(work, "soft-prog")))
                self.assertEqual(leftovers(work), [])


# -- another user ----------------------------------------------------------------------------

def other_user():
    """(uid, gid) of OTHER_USER, created when running as root under CI; or a reason."""
    if os.geteuid() != 0:
        return "not root: a file of another user cannot be planted"
    try:
        pw = pwd.getpwnam(OTHER_USER)
    except KeyError:
        if not os.environ.get("CI"):
            return "no user %s, and this is not CI (the test creates it only there)" % OTHER_USER
        p = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                            "/usr/sbin/nologin", OTHER_USER], capture_output=True, text=True)
        if p.returncode != 0:
            return "cannot create user %s: %s" % (OTHER_USER, p.stderr.strip())
        pw = pwd.getpwnam(OTHER_USER)
    return pw.pw_uid, pw.pw_gid


def as_user(user, fn):
    """Runs fn() in a child process as user (uid, gid); raises if it fails."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(user[1])
            os.setuid(user[0])
            fn()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError("as user %s: failed" % (user,))


class Processes(unittest.TestCase):
    """--pid, --save-core, and what happens to the target, on testprogs/example held."""

    @classmethod
    def setUpClass(cls):
        cls.binary, _, _ = progs.prepare("example", progs.WORK)
        cls.other_binary, _, _ = progs.prepare("cycle", progs.WORK)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="heapref-pid-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def held(self, fn):
        """fn(pid) while example holds after its dump; its result."""
        _, result = progs.run_held(self.binary, self.path("held.dump"), fn)
        os.remove(self.path("held.dump"))
        return result

    def never_stopped(self, pid, args, env=None):
        """Runs heapref with args (HEAPREF_TEST_HOLD_STOPPED set: a stop would last
        seconds) while polling pid's state: (status, stderr, states seen)."""
        seen, done = set(), threading.Event()

        def poll():
            while not done.is_set():
                try:
                    with open("/proc/%d/stat" % pid) as f:
                        seen.add(f.read().rsplit(")", 1)[1].split()[0])
                except OSError:
                    return
        t = threading.Thread(target=poll)
        t.start()
        try:
            code, _, err = run(args, env=dict(env or {}, HEAPREF_TEST_HOLD_STOPPED=HOLD),
                               cwd=self.dir)
        finally:
            done.set()
            t.join()
        self.assertNotIn("t", seen, "the process was stopped: %s" % err)
        return code, err

    def refused_unstopped(self, pid, args, status, *words, env=None):
        code, err = self.never_stopped(pid, args, env)
        self.assertEqual(code, status, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        for w in words:
            self.assertIn(w, err)
        self.assertEqual(leftovers(self.dir), [])
        return err

    # -- checked before the stop ----------------------------------------------------------

    def test_not_a_go_program_is_not_stopped(self):
        """A mistyped PID: a big Python process (256 MB touched) is left running."""
        py = subprocess.Popen([sys.executable, "-c",
                               "import sys, time\n"
                               "b = bytearray(256 << 20)\n"
                               "for i in range(0, len(b), 4096): b[i] = 1\n"
                               "print('ready', flush=True)\n"
                               "time.sleep(60)\n"], stdout=subprocess.PIPE)
        self.addCleanup(lambda: (py.kill(), py.wait()))
        self.assertEqual(py.stdout.readline().strip(), b"ready")
        t0 = time.monotonic()
        self.refused_unstopped(py.pid, ["analyze", "--pid", py.pid, "-o", self.path("p.pb.gz")],
                               1, "not a Go program", "not stopped")
        self.assertLess(time.monotonic() - t0, float(HOLD))
        self.assertFalse(os.path.exists(self.path("p.pb.gz")))

    def test_heapref_itself(self):
        p = subprocess.run(["sh", "-c", 'exec "$0" analyze --pid $$', HEAPREF],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("heapref itself", p.stderr)

    def test_outputs_that_are_inputs_refused_before_the_stop(self):
        prog = shutil.copy(self.binary, self.path("prog"))
        with open(prog, "rb") as f:
            before = f.read()

        def check(pid):
            exe = "/proc/%d/exe" % pid
            # the process's executable, by that name; BINARY, a copy of it
            self.refused_unstopped(pid, ["analyze", "--pid", pid, "--save-core", exe], 2,
                                   "does not overwrite its inputs")
            self.refused_unstopped(pid, ["analyze", "--pid", pid, "--save-core", prog, prog],
                                   2, "does not overwrite its inputs")
            self.refused_unstopped(pid, ["analyze", "--pid", pid, "-o", prog, prog], 2,
                                   "does not overwrite its inputs")
            self.refused_unstopped(pid, ["analyze", "--pid", pid, "--save-core",
                                         self.path("x"), "-o", self.path("x")], 2, "one file")
            self.refused_unstopped(pid, ["analyze", "--pid", pid, "--save-core", self.dir], 3,
                                   "directory")
        self.held(check)
        with open(prog, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_another_binary_refused_before_the_stop(self):
        def check(pid):
            return self.refused_unstopped(pid, ["analyze", "--pid", pid, self.other_binary,
                                                "-o", self.path("p.pb.gz")], 4,
                                          "Go build ID", "--force")
        self.held(check)
        self.assertFalse(os.path.exists(self.path("p.pb.gz")))

    def test_no_room_in_memory_refused_before_the_stop(self):
        self.held(lambda pid: self.refused_unstopped(
            pid, ["analyze", "--pid", pid, "-o", self.path("p.pb.gz")], 3, "GB of memory",
            "not stopped", env={"HEAPREF_TEST_MEMORY_AVAILABLE": "1000000"}))

    def test_saved_core_bigger_than_memory_warned(self):
        """A saved core the memory left beside the process cannot hold: a warning that
        its analysis will read it from the disk, and where it is; the analysis goes on."""
        core = self.path("c.core")

        def take(pid, env=None):
            p = subprocess.run([HEAPREF, "analyze", "--pid", str(pid), "--save-core", core,
                                "-o", self.path("p.pb.gz")], stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, **(env or {})))
            os.remove(core)
            return p.returncode, p.stderr

        tight, roomy = self.held(lambda pid: (
            take(pid, {"HEAPREF_TEST_MEMORY_AVAILABLE": "1000000"}), take(pid)))
        self.assertEqual(tight[0], 0, tight[1])
        warned = [line for line in tight[1].splitlines() if "warning" in line]
        self.assertEqual(len(warned), 1, tight[1])
        self.assertIn("bigger than the memory available beside process", warned[0])
        self.assertIn("(0.0 GB)", warned[0])
        self.assertIn(core, warned[0])
        self.assertEqual(roomy[0], 0, roomy[1])
        self.assertNotIn("warning", roomy[1])

    def test_no_room_on_disk_refused_before_the_stop(self):
        if os.geteuid() != 0:
            self.skipTest("not root: cannot mount a small file system")
        small = self.path("small")
        os.mkdir(small)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", small],
                           capture_output=True, text=True)
        if p.returncode != 0:
            self.skipTest("cannot mount a tmpfs here: %s" % p.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", small])
        core = os.path.join(small, "c.core")
        self.held(lambda pid: self.refused_unstopped(
            pid, ["analyze", "--pid", pid, "--save-core", core, "-o", self.path("p.pb.gz")],
            3, core, "free", "not stopped"))
        self.assertEqual(os.listdir(small), [])

    # -- the core file --------------------------------------------------------------------

    def test_core_is_private_whatever_the_umask(self):
        core = self.path("c.core")

        def take(pid):
            return run(["analyze", "--pid", pid, "--save-core", core, "-o",
                        self.path("p.pb.gz")], umask=0)
        code, _, err = self.held(take)
        self.assertEqual(code, 0, err)
        self.assertEqual(mode_of(core), 0o600)
        self.assertEqual(mode_of(self.path("p.pb.gz")), 0o666)
        self.assertEqual(leftovers(self.dir), [])

    def start_holding(self, pid, core, seconds):
        """heapref taking a core of pid into core, holding it stopped seconds after the copy."""
        return subprocess.Popen([HEAPREF, "analyze", "--pid", str(pid), "--save-core", core,
                                 "-o", self.path("p.pb.gz")], stderr=subprocess.PIPE,
                                env=dict(os.environ, HEAPREF_TEST_HOLD_STOPPED=str(seconds)))

    def signalled(self, sig):
        """heapref sent sig while it holds the process stopped, the core half made."""
        core = self.path("c.core")
        state = {}

        def take(pid):
            h = self.start_holding(pid, core, 30)
            end = time.monotonic() + 20
            while time.monotonic() < end and not leftovers(self.dir):
                time.sleep(0.02)
            state["tmp"] = leftovers(self.dir)
            self.assertTrue(progs.wait_all_stopped(pid, 20), "never stopped")
            state["modes"] = [mode_of(self.path(n)) for n in leftovers(self.dir)]
            h.send_signal(sig)
            h.communicate(timeout=60)
            state["status"] = h.returncode
            state["running"] = _wait_running(pid, 10)
        self.held(take)
        return state

    def test_signals_remove_the_temporary_core(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=sig.name):
                st = self.signalled(sig)
                self.assertEqual(len(st["tmp"]), 1, st)
                self.assertEqual(st["modes"], [0o600])
                self.assertEqual(st["status"], -sig)
                self.assertTrue(st["running"], "the process stayed stopped")
                self.assertEqual(os.listdir(self.dir), [], "left behind")

    def test_sigkill_leaves_only_a_private_temporary_core(self):
        st = self.signalled(signal.SIGKILL)
        self.assertTrue(st["running"], "the process stayed stopped")
        left = leftovers(self.dir)
        self.assertEqual(len(left), 1, left)
        self.assertEqual(mode_of(self.path(left[0])), 0o600)
        self.assertFalse(os.path.exists(self.path("c.core")))

    def test_target_killed_during_the_copy(self):
        core = self.path("c.core")
        got = {}

        def take(pid):
            h = self.start_holding(pid, core, 5)
            stopped = progs.wait_all_stopped(pid, 20)
            time.sleep(0.5)   # past the copy (milliseconds), into the 5 s hold after it
            os.kill(pid, signal.SIGKILL)
            got["err"] = h.communicate(timeout=60)[1].decode()
            got["code"] = h.returncode
            self.assertTrue(stopped, "never stopped")
        with self.assertRaises((progs.ProgError, OSError)):   # the program was killed
            self.held(take)
        self.assertEqual(got["code"], 1, got["err"])
        self.assertEqual(len(got["err"].splitlines()), 1, got["err"])
        self.assertIn("ended while heapref copied its memory", got["err"])
        self.assertEqual(sorted(os.listdir(self.dir)), ["held.dump"], "a partial core was kept")

    # -- planted by another user ----------------------------------------------------------

    def shared_dir(self):
        user = other_user()
        if isinstance(user, str):
            self.skipTest(user)
        os.chmod(self.dir, 0o755)   # the other user must reach shared/
        shared = self.path("shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)   # like /tmp
        return user, shared

    def test_planted_at_the_temporary_name(self):
        """Another user plants a symlink, then a file, at the core's temporary name
        (made predictable for the test with HEAPREF_TEST_TMP_SUFFIX)."""
        user, shared = self.shared_dir()
        victim = self.path("victim")
        with open(victim, "wb") as f:
            f.write(b"root's secret\n")
        os.chmod(victim, 0o600)
        core = os.path.join(shared, "c.core")
        planted = core + ".tmp.PLANTED"
        for kind in ("symlink", "file"):
            with self.subTest(planted=kind):
                if kind == "symlink":
                    as_user(user, lambda: os.symlink(victim, planted))
                else:
                    as_user(user, lambda: os.close(os.open(planted, os.O_CREAT | os.O_WRONLY,
                                                           0o666)))
                code, _, err = self.held(lambda pid: run(
                    ["analyze", "--pid", pid, "--save-core", core, "-o", self.path("p.pb.gz")],
                    env={"HEAPREF_TEST_TMP_SUFFIX": "PLANTED"}))
                self.assertEqual(code, 0, err)
                with open(victim, "rb") as f:
                    self.assertEqual(f.read(), b"root's secret\n")
                self.assertEqual(mode_of(victim), 0o600)
                st = os.lstat(planted)
                self.assertEqual(st.st_uid, user[0])
                if kind == "file":
                    self.assertEqual(st.st_size, 0, "the planted file got the core")
                self.assertEqual(mode_of(core), 0o600)
                self.assertEqual(os.lstat(core).st_uid, 0)
                os.remove(planted)
                os.remove(core)

    def test_planted_symlink_at_the_output_name(self):
        user, shared = self.shared_dir()
        victim = self.path("victim")
        with open(victim, "wb") as f:
            f.write(b"root's secret\n")
        link = os.path.join(shared, "c.core")
        as_user(user, lambda: os.symlink(victim, link))
        err = self.held(lambda pid: self.refused_unstopped(
            pid, ["analyze", "--pid", pid, "--save-core", link, "-o", self.path("p.pb.gz")],
            3, "another user"))
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"root's secret\n", err)


def _state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wait_running(pid, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _state(pid) in ("S", "R"):
            return True
        time.sleep(0.02)
    return False


if __name__ == "__main__":
    unittest.main()
