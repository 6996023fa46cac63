"""Parley's workers on hosts of their own, on one machine: `unshare --uts --pid --fork` gives
each worker process a host name and a pid namespace, so that, as in containers, every worker
is process 1 of its host and only the host name tells them apart. Needs root (CI runs as
root on Debian); without `unshare`, or where it is refused, the test fails, it never skips.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time

import pytest
from redis.asyncio import Redis

from bot.redis.keys import READY_STREAM
from tests.support.stack import Stack
from tests.support.workers import READY_WITHIN, Announcements


def on_host(host: str, command: list[str]) -> list[str]:
    """`command` as process 1 of a host named `host`; killing the returned process (the
    `unshare`) kills it and everything it started."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.fail("unshare (util-linux) is needed to give workers host names of their own")
    inner = f'hostname {host} && exec "$@"'
    return [unshare, "--uts", "--pid", "--fork", "--kill-child", "sh", "-c", inner, "sh", *command]


async def start_worker_on(stack: Stack, host: str) -> tuple[asyncio.subprocess.Process, str]:
    """A `parley worker` on `host`, once it announced itself ready from there; its process
    and its liveness id. It logs to worker-HOST.log."""
    after = await Announcements(stack.redis_url).last()
    path = stack.tmp / f"worker-{host}.log"
    with path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            *on_host(host, [sys.executable, "-m", "worker", "worker"]),
            env=stack.env,
            cwd=stack.tmp,
            stdout=log,
            stderr=log,
        )
    stack.workers.append(proc)
    redis = Redis.from_url(stack.redis_url)
    deadline = time.monotonic() + READY_WITHIN
    try:
        while proc.returncode is None and time.monotonic() < deadline:
            for _, entries in await redis.xread({READY_STREAM: after}, block=500) or []:
                for entry_id, fields in entries:
                    after = entry_id.decode()
                    if fields[b"host"].decode() == host:
                        worker_id = fields[b"worker"].decode()
                        stack.named[worker_id] = proc
                        return proc, worker_id
    finally:
        await redis.aclose()
    why = f"it exited with {proc.returncode}" if proc.returncode is not None else "not ready"
    pytest.fail(f"the worker on {host} never became ready ({why}); its log:\n{path.read_text()}")
