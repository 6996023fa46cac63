"""MCP tools offered after a worker is ready: how long a worker's stdio MCP server takes to be
connected with its tools, counted from the worker's ready announcement.

A real redis-server and `parley worker` process with PARLEY_MCP_CONFIG naming the tests' small
stdio server (tests/mcp/servers/toolbox.py, built with the MCP SDK). The worker announces it is
ready on the `parley:workers` stream (Redis's clock, in the entry's id); the server's
"connected" state, with its tools, carries the moment the worker saw it (`ServerStatus.since`)
in the status the worker publishes (`bot.mcp.status`). The figure is the second minus the
first, 0 when the tools were there before the announcement. Target: within 1 s. Each start is
a new worker on the same Redis. Run with `make bench`, or `python -m tests.bench.mcp [N]`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from redis.asyncio import Redis

from bot.mcp.status import ServerStatus, mcp_status
from tests.bench.processes import DEADLINE_S, environment, fake_model, start_workers, stop
from tests.bench.table import Figure, report, samples
from tests.support.redis_server import RedisServer

STARTS = int(sys.argv[1]) if len(sys.argv) > 1 else samples(5, 1)
TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"
FIGURES = (
    "MCP tools offered after the worker is ready: median",
    "MCP tools offered after the worker's exec: median",
)


async def connected(redis: Redis) -> ServerStatus:
    """The toolbox server's status once some worker has it connected with its tools."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        status = (await mcp_status(redis)).get("toolbox")
        if status is not None and status.state == "connected" and status.tools:
            return status
        await asyncio.sleep(0.01)
    raise RuntimeError(f"the toolbox server was not connected after {DEADLINE_S} s")


async def one_start(env: dict[str, str], redis_url: str) -> tuple[float, float]:
    """(ms from the ready announcement, ms from the exec) to the tools connected."""
    execed = time.time() * 1000
    workers, ready = await start_workers(1, env, redis_url)
    try:
        async with Redis.from_url(redis_url) as redis:
            status = await connected(redis)
    finally:
        await stop(workers)
    since = status.since * 1000
    return max(0.0, since - ready[workers[0].pid]), since - execed


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "mcp.json"
        server_entry = {"command": sys.executable, "args": [str(TOOLBOX)], "trust": "allow"}
        config.write_text(json.dumps({"mcpServers": {"toolbox": server_entry}}))
        server = RedisServer(Path(tmp))
        server.start()
        fake, url = await fake_model()
        env = environment(server.url, tmp, url, PARLEY_MCP_CONFIG=str(config))
        try:
            taken = [await one_start(env, server.url) for _ in range(STARTS)]
        finally:
            await stop([fake])
            server.stop()
    after_ready = statistics.median(t[0] for t in taken)
    after_exec = statistics.median(t[1] for t in taken)
    print(
        f"MCP toolbox (stdio), {STARTS} worker starts: tools connected {after_ready:.0f} ms after "
        f"the ready announcement (median, 0 = before it), {after_exec:.0f} ms after the exec"
    )
    report(
        Figure("MCP tools offered after the worker is ready: median", after_ready, "ms", 1000),
        Figure("MCP tools offered after the worker's exec: median", after_exec, "ms"),
    )


if __name__ == "__main__":
    asyncio.run(main())
