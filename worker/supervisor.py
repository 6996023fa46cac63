"""A worker's supervisor: the slots sessions' turns run in as tasks, and what every job reads.

Each arq job of a worker (the drain job, an expiry, a reminder, the retention) finds it in its
context as `ctx["supervisor"]`. It lives apart from `worker.jobs` so that a job kept in a module
of its own (`worker.reminders`) reads it without importing `worker.jobs`, which imports that
module: the worker's modules import one way, as `pyproject.toml`'s import-linter contract says.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.config.settings import Settings
from bot.mailbox.inbox import Mailbox
from bot.redis.confirmations import Confirmations
from bot.session.egress import Egress
from bot.session.retention import ContextRetention
from bot.session.runner import SessionRunner
from bot.store.archive import Archive

log = logging.getLogger(__name__)


@dataclass
class Supervisor:
    """Runs sessions' turns as tasks, at most `limit` sessions at once, and stops them on shutdown.

    A full worker stops taking jobs from arq (`picking(False)`), so a new message goes to a
    worker with room instead of waiting here for one of this worker's long turns to end.
    A wake-up it took all the same (arq hands a worker a batch of jobs per poll, and a slot
    may fill between the poll and the job) is not kept waiting for a slot either: it goes
    back to the queue at once, for whichever worker has room first, this one included once
    a turn ends. Turns wait first for tools still on their way (`tools_ready`: the MCP
    servers' first connections, in a worker's first seconds).
    """

    settings: Settings
    runner: SessionRunner
    mailbox: Mailbox
    confirmations: Confirmations
    egress: Egress
    archive: Archive
    contexts: ContextRetention  # retention's cut of live contexts
    limit: asyncio.Semaphore
    tasks: set[asyncio.Task[None]]
    picking: Callable[[bool], None] = lambda _: None
    tools_ready: Callable[[], Awaitable[None]] | None = None

    async def wake(self, session: str) -> None:
        if self.limit.locked():  # full: never wait here behind long turns (see above)
            self.picking(False)
            await self.mailbox.wake(session)
            return
        await self.limit.acquire()  # at once: a slot is free and nothing awaited since
        self.picking(not self.limit.locked())
        task = asyncio.create_task(self._take_turns_in_slot(session))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _take_turns_in_slot(self, session: str) -> None:
        try:
            if self.tools_ready is not None:
                await self.tools_ready()
            await self.runner.take_turns(session)
        except Exception:
            # Redis was lost while the lease was being taken: if it was not taken, the sweep
            # wakes the session again; if only its answer was lost, the lease is freed (in seconds
            # for a worker that restarts with a new liveness id, else after its TTL).
            log.warning("could not take up %s", session, exc_info=True)
        finally:
            self.limit.release()
            self.picking(True)

    async def stop(self) -> None:
        """Stop the turns running here, then let go of what they answered with."""
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if (voice := self.runner.deps.voice) is not None:
            await voice.aclose()
