"""The sandbox's view of the file system: built in its own mount namespace, then made its root.

Only what a Python program needs is there: the system's libraries (/usr and the /lib
directories, read-only), the Python installation (read-only, at its own path), a few device
nodes, its own /proc (which shows the sandbox's processes only), and three small file systems
in memory: /tmp, /dev/shm and the working directory /scratch, which hold nothing when the run
starts (but the program's file and an empty `./out/`, for the files it leaves the person)
and vanish with it; a shell run also sees a copy of its session's files, read-only, in
`./workspace/`. The interpreter's site-packages is an empty file system of its own,
read-only, into which only the packages offered (`packages`: matplotlib and what it needs)
are bound, read-only too, with fontconfig's configuration (/etc/fonts) for their fonts.
The rest of the machine (the rest of /etc, /home, /root, the worker's files and its
environment) is simply not there, and the old root is detached, not just hidden.
"""

from __future__ import annotations

import contextlib
import os

from bot.sandbox.limits import SANDBOX_UID, RunPlan
from bot.sandbox.outputs import OUT
from bot.sandbox.syscalls import (
    MNT_DETACH,
    MS_BIND,
    MS_NOATIME,
    MS_NODEV,
    MS_NODIRATIME,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_RELATIME,
    MS_REMOUNT,
    mount,
    pivot_root,
    umount,
)

SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")
SCRATCH = "/scratch"
PROGRAM = "main.py"
SCRIPT = "main.sh"  # a shell run's script
WORKSPACE = "workspace"  # where a shell run sees its session's files, read-only
PASSWD = f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:{SCRATCH}:/bin/sh\n"
GROUP = f"sandbox:x:{SANDBOX_UID}:\n"


def _kept_flags(path: str) -> int:
    """The flags a remount must keep: a mount namespace made by an unprivileged user may
    not clear the access-time and noexec flags of the mounts it was given."""
    flags = os.statvfs(path).f_flag
    kept = flags & (MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
    return kept | (MS_RELATIME if flags & os.ST_RELATIME else 0)


def _bind_read_only(source: str, target: str) -> None:
    os.makedirs(target, exist_ok=True)
    mount(source, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | _kept_flags(target)
    mount("none", target, None, flags)


def _memory_fs(target: str, size_mb: int, options: str, flags: int = 0) -> None:
    os.makedirs(target, exist_ok=True)
    data = f"size={size_mb}m,{options}"
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | flags, data)


def _system(root: str, prefix: str) -> None:
    for name in SYSTEM:
        host = "/" + name
        if os.path.islink(host):
            os.symlink(os.readlink(host), root + host)
        elif os.path.isdir(host):
            _bind_read_only(host, root + host)
    if not prefix.startswith("/usr/"):
        _bind_read_only(prefix, root + prefix)
    os.makedirs(root + "/etc")
    if os.path.exists("/etc/ld.so.cache"):
        open(root + "/etc/ld.so.cache", "wb").close()
        mount("/etc/ld.so.cache", root + "/etc/ld.so.cache", None, MS_BIND)
    if os.path.isdir("/etc/fonts"):  # where fontconfig (matplotlib's fc-list) finds fonts
        _bind_read_only("/etc/fonts", root + "/etc/fonts")
    for name, text in (("passwd", PASSWD), ("group", GROUP)):
        with open(f"{root}/etc/{name}", "w") as file:
            file.write(text)


def _packages(root: str, plan: RunPlan) -> None:
    """The offered packages, and nothing else of the site-packages the interpreter has; left
    out where that directory does not exist (its mount point cannot be made read-only)."""
    site = root + plan.site
    if not plan.site or not plan.packages or not os.path.isdir(site):
        return
    _memory_fs(site, 1, "mode=0755")
    for path in plan.packages:
        target = os.path.join(site, os.path.basename(path))
        if os.path.isdir(path):
            os.mkdir(target)
        else:
            open(target, "wb").close()
        mount(path, target, None, MS_BIND | MS_REC)
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | _kept_flags(target)
        mount("none", target, None, flags)
    mount("none", site, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _devices(root: str, tmp_mb: int) -> None:
    _memory_fs(root + "/dev", 1, "mode=0755", MS_NOEXEC)
    for name in DEVICES:
        target = f"{root}/dev/{name}"
        open(target, "wb").close()
        mount(f"/dev/{name}", target, None, MS_BIND)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0")):
        os.symlink(link, f"{root}/dev/{name}")
    os.symlink("/proc/self/fd/1", root + "/dev/stdout")
    os.symlink("/proc/self/fd/2", root + "/dev/stderr")
    _memory_fs(root + "/dev/shm", tmp_mb, "mode=1777", MS_NOEXEC)


def _proc(root: str) -> None:
    """The sandbox's own /proc; where the kernel refuses it (a container that masks parts
    of its /proc), the program goes without one, which only takes from it."""
    os.makedirs(root + "/proc")
    with contextlib.suppress(OSError):
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _scratch(root: str, size_mb: int, code: bytes, name: str = PROGRAM) -> None:
    """The working directory: the program's file, and `./out/` made for it, so that the
    first thing anyone writes (`plt.savefig("out/chart.png")`) needs no folder made first."""
    owner = f"uid={SANDBOX_UID},gid={SANDBOX_UID}"
    _memory_fs(root + SCRATCH, size_mb, f"mode=0700,{owner}", MS_NOEXEC)
    path = f"{root}{SCRATCH}/{name}"
    with open(path, "wb") as file:
        file.write(code)
    out = f"{root}{SCRATCH}/{OUT}"
    os.mkdir(out, 0o700)
    for made in (path, out):
        os.chown(made, SANDBOX_UID, SANDBOX_UID)


def _workspace(root: str, copy: str) -> None:
    """A shell run's copy of its session's files, bound read-only into the working directory:
    what it changes there stays in the sandbox's memory or fails, never the session's files."""
    target = f"{root}{SCRATCH}/{WORKSPACE}"
    os.mkdir(target, 0o755)
    mount(copy, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    mount("none", target, None, flags | _kept_flags(target))


def build_root(plan: RunPlan, code: bytes) -> None:
    """Make the sandbox's file system and enter it. Runs as the namespace's first process,
    with the capabilities of the new user namespace and before the program starts."""
    root, limits = plan.root, plan.limits
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    _memory_fs(root, 1, "mode=0755")
    _system(root, plan.python_prefix)
    _packages(root, plan)
    _devices(root, limits.tmp_mb)
    _proc(root)
    _memory_fs(root + "/tmp", limits.tmp_mb, "mode=1777", MS_NOEXEC)
    _scratch(root, limits.scratch_mb, code, SCRIPT if plan.shell else PROGRAM)
    if plan.workspace:
        _workspace(root, plan.workspace)
    os.chdir(root)
    pivot_root(".", ".")
    umount(".", MNT_DETACH)
    os.chdir("/")
    read_only = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    mount("none", "/", None, read_only)
    mount("none", "/dev", None, read_only | MS_NOEXEC)
