#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for kubectl, for the README's pod commands (test_install.py).

The pod is made by the test: its service is a process that is PID 1 in a process
namespace of its own (unshare --pid --fork). Its state is a JSON file (FAKE_POD):
{"pod": name, "app": the service's container, "service_pid": its PID as this host sees
it, "dir": where debugging containers' roots go}. It does what the README uses, with
the arguments kubectl takes, and refuses anything else:

  debug POD --image=IMAGE --target=APP --profile=sysadmin|general -c NAME -- CMD...
        a debugging container NAME: an empty root with /tmp, sharing the service's
        processes (the command it would run is not needed here);
  cp SRC POD:DST -c NAME      a file into that root;   cp POD:SRC DST -c NAME  out of it;
  exec POD -c NAME -- CMD...  CMD in that root, in the service's process namespace,
                              with that namespace's /proc mounted (as a container has).
"""

import json
import os
import shutil
import subprocess
import sys


def fail(msg):
    sys.stderr.write("fake kubectl: %s\n" % msg)
    sys.exit(2)


def load():
    with open(os.environ["FAKE_POD"]) as f:
        return json.load(f)


def take_container(args):
    """Removes -c NAME (or --container=NAME) from args; returns NAME."""
    for i, a in enumerate(args):
        if a == "-c" and i + 1 < len(args):
            name = args[i + 1]
            del args[i:i + 2]
            return name
        if a.startswith("--container="):
            del args[i]
            return a.split("=", 1)[1]
    fail("no -c CONTAINER")


def root_of(pod, name):
    root = os.path.join(pod["dir"], name)
    if not os.path.isdir(root):
        fail("no container %s in pod %s (kubectl debug first)" % (name, pod["pod"]))
    return root


def check_pod(pod, name):
    if name != pod["pod"]:
        fail("no pod %s" % name)


def debug(pod, args):
    sep = args.index("--") if "--" in args else len(args)
    opts = args[:sep]
    name = take_container(opts)
    check_pod(pod, opts[0])
    flags = dict(a[2:].split("=", 1) for a in opts[1:])
    if flags.get("target") != pod["app"]:
        fail("--target must name the service's container %s" % pod["app"])
    if flags.get("profile") not in ("sysadmin", "general"):
        fail("--profile must give CAP_SYS_PTRACE (sysadmin or general)")
    if "image" not in flags:
        fail("no --image")
    root = os.path.join(pod["dir"], name)
    os.makedirs(os.path.join(root, "tmp"))
    os.makedirs(os.path.join(root, "proc"))


def cp(pod, args):
    name = take_container(args)
    if len(args) != 2:
        fail("cp SRC DST")
    src, dst = args
    if ":" in dst:
        p, path = dst.split(":", 1)
        check_pod(pod, p)
        shutil.copy2(src, os.path.join(root_of(pod, name), path.lstrip("/")))
    elif ":" in src:
        p, path = src.split(":", 1)
        check_pod(pod, p)
        shutil.copy2(os.path.join(root_of(pod, name), path.lstrip("/")), dst)
    else:
        fail("cp: one side must be POD:PATH")


def exec_(pod, args):
    name = take_container(args)
    sep = args.index("--")
    check_pod(pod, args[0])
    root = root_of(pod, name)
    script = 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"'
    cmd = ["nsenter", "--target", str(pod["service_pid"]), "--pid", "--",
           "unshare", "--mount", "--propagation", "private", "sh", "-c", script, root]
    sys.exit(subprocess.call(cmd + args[sep + 1:]))


def main():
    args = sys.argv[1:]
    verbs = {"debug": debug, "cp": cp, "exec": exec_}
    if not args or args[0] not in verbs:
        fail("only %s" % ", ".join(sorted(verbs)))
    verbs[args[0]](load(), args[1:])


if __name__ == "__main__":
    main()
