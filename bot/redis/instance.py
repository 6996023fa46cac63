"""This process among every process of a deployment, whichever host it runs on.

A host name alone does not tell two processes apart (containers on the host's network share
its name) and neither does a pid (every container's first process is 1): two workers with
the same of both would write over each other's metrics and MCP status in Redis, and each
would report the other's. The name is the host's, then the pid, then a random part drawn
once per process: readable (`host-a:1:3f9c2a1b`) and never the same for two processes.
"""

from __future__ import annotations

import os
import socket
import uuid

NONCE = uuid.uuid4().hex[:8]


def instance() -> str:
    """This process's name, for the Redis keys each process keeps of its own."""
    return f"{socket.gethostname()}:{os.getpid()}:{NONCE}"
