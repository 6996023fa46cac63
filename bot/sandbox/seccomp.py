"""The system-call filter: the last layer, for what the namespaces leave reachable.

The network namespace already has no way out; refusing every socket family but AF_UNIX
keeps the kernel's network code (and its bugs) out of reach too. The other calls refused
are those a program could use to attack the kernel or its neighbours rather than to compute:
debugging other processes, new namespaces (a user namespace gives a program capabilities of
its own), mounting, kernel keyrings, BPF, io_uring (which runs calls this filter never sees),
modules and the like. Refused calls fail with an error, so a program sees an exception it can
read instead of dying.
"""

from __future__ import annotations

import errno
import socket

import pyseccomp as seccomp  # type: ignore[import-untyped]

from bot.sandbox.syscalls import NEW_NAMESPACE_FLAGS

REFUSED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "quotactl",
    "lookup_dcookie",
    "personality",
    "uselib",
    "ioperm",
    "iopl",
)


def _flag_bits(mask: int) -> list[int]:
    return [1 << bit for bit in range(mask.bit_length()) if mask >> bit & 1]


def _known(name: str) -> bool:
    """Whether this architecture has the call at all (aarch64 has no iopl, for one)."""
    try:
        number: int = seccomp.resolve_syscall(seccomp.system_arch(), name)
        return number >= 0
    except (ValueError, OSError):
        return False


def install() -> None:
    """Load the filter into this process; it holds across exec and for every child, and it
    sets no_new_privs, so nothing run later can gain privileges (set-user-ID programs)."""
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    refuse = seccomp.ERRNO(errno.EPERM)
    for name in REFUSED:
        if _known(name):
            rules.add_rule(refuse, name)
    not_unix = seccomp.Arg(0, seccomp.NE, socket.AF_UNIX)
    for name in ("socket", "socketpair"):
        rules.add_rule(seccomp.ERRNO(errno.EAFNOSUPPORT), name, not_unix)
    for bit in _flag_bits(NEW_NAMESPACE_FLAGS):
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, bit, bit))
    # clone3 passes its flags in memory, which a filter cannot read: without it the C
    # library falls back to clone, whose flags the rules above see
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()
