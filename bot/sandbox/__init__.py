"""The sandbox that runs the model's Python programs.

A program runs as a stranger would be allowed to: in fresh user, mount, PID, network, IPC and
UTS namespaces, as an unprivileged user without capabilities, with a read-only view of the
Python installation and the system's libraries only, no network at all, a system-call filter
and resource limits. `runner` starts it from the worker without blocking its loop; `stage` is
the program that builds the namespaces (it runs as its own process, and imports nothing of
Parley's beyond this package); `probe` checks once whether this machine can provide all that.

This module imports nothing, so that the stage process starts fast.
"""
