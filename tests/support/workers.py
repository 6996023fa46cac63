"""Parley's workers for end-to-end tests, ready when they say so in Redis.

Most tests run a worker in their own event loop: `worker.jobs.run_until`, exactly what
`parley worker` runs, on the same Redis, database and fakes, without the seconds a new
interpreter spends importing everything. Tests about processes (kill -9, SIGTERM, SIGSTOP,
a tool that ends its process, the worker's own log) start `python -m worker worker` instead.
Either way a worker is ready once it announced itself on `bot.redis.keys.READY_STREAM`, which
it does just before its arq worker polls: the tests block on that entry, never on a log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.config.settings import Settings
from bot.redis.keys import READY_STREAM
from worker.jobs import run_until

# Generous: on a busy machine a new process can take many seconds to import the worker.
READY_WITHIN = 60.0


class Announcements:
    """The workers' ready stream, read from a point in it onwards."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url

    async def last(self) -> str:
        """Where to read from for the workers started after now."""
        redis = Redis.from_url(self.redis_url)
        try:
            entries = await redis.xrevrange(READY_STREAM, count=1)
        finally:
            await redis.aclose()
        return entries[0][0].decode() if entries else "0-0"

    async def wait(
        self,
        after: str,
        pid: int,
        failed: Callable[[], str | None],
        details: Callable[[], str] | None = None,
    ) -> str:
        """The liveness id of the first worker of process `pid` ready after `after`;
        `failed` says why the worker can no longer become ready (it ended), or None;
        `details` what to show if it never does (its log)."""
        deadline = time.monotonic() + READY_WITHIN
        redis = Redis.from_url(self.redis_url)
        try:
            while (problem := failed()) is None and time.monotonic() < deadline:
                try:
                    replies = await redis.xread({READY_STREAM: after}, block=500)
                except (RedisConnectionError, OSError):  # a Redis restarting: ask again
                    await asyncio.sleep(0.1)
                    continue
                for _, entries in replies:
                    for entry_id, fields in entries:
                        after = entry_id.decode()
                        if int(fields[b"pid"]) == pid:
                            return str(fields[b"worker"].decode())
        finally:
            await redis.aclose()
        why = problem or f"still not ready after {READY_WITHIN:.0f} s"
        shown = details() if details is not None else ""
        pytest.fail(f"the worker never became ready: {why}\n{shown}")


@dataclass
class InProcessWorker:
    """A worker running in the test's event loop; `stop` is its SIGTERM."""

    id: str
    task: asyncio.Task[None]
    stopping: asyncio.Event

    @classmethod
    async def start(cls, settings: Settings, announcements: Announcements) -> InProcessWorker:
        after = await announcements.last()
        stopping = asyncio.Event()
        task = asyncio.create_task(run_until(settings, stopping))

        def failed() -> str | None:
            if not task.done():
                return None
            return repr(task.exception()) if not task.cancelled() else "cancelled"

        try:
            worker_id = await announcements.wait(after, os.getpid(), failed)
        except BaseException:
            stopping.set()
            with contextlib.suppress(BaseException):
                await task
            raise
        return cls(worker_id, task, stopping)

    async def stop(self) -> None:
        """Shut down as on SIGTERM (turns handed back, tools and connections closed), and
        raise whatever the worker failed with."""
        self.stopping.set()
        async with asyncio.timeout(READY_WITHIN):
            await self.task
