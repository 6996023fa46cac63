"""The tasks on APScheduler's clock: each due run becomes an envelope in its session's mailbox.

APScheduler 3 keeps its jobs in this process's memory; the tasks table is the truth, loaded at
start and applied task by task as changes are announced (`TaskScheduler.apply`), with a full
`reload` now and then for an announcement that was lost. Only the scheduler that holds the
leader lease runs one of these (see `worker.scheduler`).

Each run is named by the task and the time it was due (`Task.run_id`), never by when it was
sent: two schedulers during a takeover, or a run sent again after a crash, give the mailbox
the same envelope id, and its dedup keeps one.

A task's `next_run_at` is written after every run. At start a run that came due while no
scheduler ran is found there, and APScheduler's misfire rules apply the task's `if_missed`:
`skip` runs it only within the grace period (PARLEY_TASK_GRACE), `run_once` runs it however
late; several missed runs of a recurring task make one (coalescing).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.executors.base import BaseExecutor
from apscheduler.job import Job
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from redis.exceptions import RedisError

from bot.tasks.book import TaskBook
from bot.tasks.model import Task
from bot.vocabulary.envelope import Envelope

log = logging.getLogger(__name__)
Submit = Callable[[Envelope], Awaitable[Any]]
# Sending a run waits out a Redis that is briefly away, for at most this long in all.
SEND_FOR_S = 60.0


class _Runs(BaseExecutor):  # type: ignore[misc]
    """Runs a job on the scheduler's loop and tells it the time the run was due, which
    APScheduler's own executors keep to themselves; that time names the run."""

    def __init__(self, scheduler: TaskScheduler) -> None:
        super().__init__()
        self._tasks = scheduler
        self._running: set[asyncio.Task[None]] = set()

    def _do_submit_job(self, job: Job, run_times: list[datetime]) -> None:
        run_at = run_times[-1]  # every job coalesces: one run, the latest due
        now = datetime.now(UTC)
        following = job.trigger.get_next_fire_time(run_at, now)
        grace = job.misfire_grace_time
        late = grace is not None and now - run_at > timedelta(seconds=grace)
        task_id: int = job.args[0]
        work = (self._tasks.skip if late else self._tasks.fire)(task_id, run_at, following)
        running = asyncio.get_running_loop().create_task(work)
        self._running.add(running)
        running.add_done_callback(lambda done: self._finished(job.id, done))

    def _finished(self, job_id: str, done: asyncio.Task[None]) -> None:
        self._running.discard(done)
        failure = None if done.cancelled() else done.exception()
        if failure is not None:
            self._run_job_error(job_id, failure, failure.__traceback__)
        else:
            self._run_job_success(job_id, [])

    def shutdown(self, wait: bool = True) -> None:
        for running in self._running:
            running.cancel()


class TaskScheduler:
    def __init__(
        self, book: TaskBook, submit: Submit, *, grace: float, is_admin: Callable[[str], bool]
    ) -> None:
        """`grace`: how late (s) a missed run may still start (PARLEY_TASK_GRACE);
        `is_admin`: whether a task's creator is an admin now (PARLEY_ADMINS)."""
        self.grace = grace
        self.is_admin = is_admin
        self.book = book
        self.submit = submit
        self._known: dict[int, Task] = {}
        self._clock = AsyncIOScheduler(timezone=UTC)
        self._clock.add_executor(_Runs(self), "default")

    async def start(self) -> None:
        """Load every active task and start the clock (on the running loop)."""
        self._clock.start()
        await self.reload()

    def stop(self) -> None:
        if self._clock.running:
            self._clock.shutdown(wait=False)

    async def reload(self) -> None:
        """Make the clock hold exactly the active tasks of the table."""
        tasks = {task.id: task for task in await self.book.every()}
        for gone in set(self._known) - set(tasks):
            self._forget(gone)
        for task in tasks.values():
            self._schedule(task)

    async def apply(self, task_id: int) -> None:
        """One task was added, changed or ended."""
        task = await self.book.get(task_id)
        if task is None or not task.active:
            self._forget(task_id)
        else:
            self._schedule(task)

    def _schedule(self, task: Task) -> None:
        """Put `task` on the clock at its stored next run, which may be past (missed). A task
        already there as it is defined now stays: its clock is ahead of the table's
        `next_run_at`, which is written after each run."""
        known = self._known.get(task.id)
        if known is not None and _definition(known) == _definition(task):
            return
        first = task.next_run_at or datetime.now(UTC)
        grace = None if task.if_missed == "run_once" else max(1, round(self.grace))
        self._clock.add_job(
            self._noop,
            trigger=task.schedule.trigger(),
            args=[task.id],
            id=str(task.id),
            name=f"task {task.id}",
            next_run_time=first,
            misfire_grace_time=grace,
            coalesce=True,
            max_instances=1,
            replace_existing=True,
        )
        self._known[task.id] = task

    def _forget(self, task_id: int) -> None:
        self._known.pop(task_id, None)
        with contextlib.suppress(JobLookupError):  # a one-off task's job goes once it ran
            self._clock.remove_job(str(task_id))

    @staticmethod
    async def _noop(task_id: int) -> None:
        """The jobs' function as APScheduler knows it; `_Runs` calls `fire` or `skip`."""

    async def fire(self, task_id: int, run_at: datetime, following: datetime | None) -> None:
        """Send the run due at `run_at`, unless the task ended meanwhile."""
        task = await self._current(task_id)
        if task is None:
            return
        sender = task.creator.model_copy(update={"is_admin": self.is_admin(task.creator.id)})
        envelope = task.envelope(run_at).model_copy(update={"sender": sender})
        await self._send(envelope)
        log.info("task %s: sent its run due %s", task_id, run_at.isoformat())
        await self.book.ran(task_id, run_at, following)
        if following is None:
            self._known.pop(task_id, None)

    async def skip(self, task_id: int, run_at: datetime, following: datetime | None) -> None:
        """A run missed beyond the grace period, by a task whose policy is to skip it."""
        if await self._current(task_id) is None:
            return
        log.warning("task %s: skipped its run due %s (missed)", task_id, run_at.isoformat())
        await self.book.skipped(task_id, run_at, following)
        if following is None:
            self._known.pop(task_id, None)

    async def _current(self, task_id: int) -> Task | None:
        """The task as the table has it now (a cancel may not have been announced yet), or
        as last loaded while the database is away; None if it ended."""
        try:
            task = await self.book.get(task_id)
        except Exception:
            log.warning("task %s: database away, running it as last loaded", task_id)
            task = self._known.get(task_id)
        if task is None or not task.active:
            self._forget(task_id)
            return None
        return task

    async def _send(self, envelope: Envelope) -> None:
        """Into the mailbox, waiting out a Redis that is briefly away."""
        loop = asyncio.get_running_loop()
        deadline, delay = loop.time() + SEND_FOR_S, 0.5
        while True:
            try:
                await self.submit(envelope)
                return
            except (OSError, RedisError) as exc:
                if loop.time() + delay > deadline:
                    raise
                log.warning("could not send %s (%s); again in %.1f s", envelope.id, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5)


def _definition(task: Task) -> tuple[Any, ...]:
    """What makes a task run when and where it does; its progress (runs, next run) aside."""
    return (task.schedule, task.if_missed, task.prompt, task.target, task.creator, task.status)
