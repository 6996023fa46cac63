"""MCP servers that misbehave, for the tests of the bounds a worker keeps:

- `unruly.py serve [BANNER]`: a working server that first prints BANNER lines that are not
  JSON-RPC to stdout (a start-up banner), with tools that flood stderr or return a huge result;
- `unruly.py gated GATE`: that server, answering nothing until the file GATE exists;
- `unruly.py garbage`: prints lines that are not JSON-RPC to stdout for ever;
- `unruly.py hang PIDS`: starts a child that sleeps, writes its own pid and the child's to the
  file PIDS, ignores SIGTERM and never answers;
- `unruly.py parent PIDS`: the same child and file, then the working server, which exits at
  its stdin's end and leaves the child behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("unruly")
LINE = b"noisy: " + b"x" * 1016 + b"\n"  # 1 KB


@server.tool()
def flood(megabytes: float, last_words: str) -> str:
    """Write `megabytes` of lines to stderr, then `last_words`; say how long it took."""
    began = time.monotonic()
    for _ in range(int(megabytes * 1024)):
        os.write(2, LINE)
    os.write(2, last_words.encode() + b"\n")
    return f"{time.monotonic() - began:.3f}"


@server.tool()
def huge(megabytes: float) -> str:
    """A result of `megabytes` of text: its start, then dots."""
    return "the start of a huge result " + "." * int(megabytes * 1024 * 1024)


@server.tool()
def crash() -> str:
    """End this server in the middle of the call."""
    os._exit(3)


def start_child(pids: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    pids.write_text(f"{os.getpid()} {child.pid}")


def hang(pids: Path) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    start_child(pids)
    while True:
        time.sleep(3600)


def garbage() -> None:
    while True:
        print("Server listening on stdio (not JSON-RPC)", flush=True)
        time.sleep(0.001)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "hang":
        hang(Path(sys.argv[2]))
    elif mode == "garbage":
        garbage()
    elif mode == "parent":
        start_child(Path(sys.argv[2]))
        server.run()
    elif mode == "gated":
        while not Path(sys.argv[2]).exists():
            time.sleep(0.01)
        server.run()
    else:
        for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 0):
            print("unruly MCP server starting", flush=True)
        server.run()
