"""`parley scheduler` processes with their default settings: one leads and sends each run once,
a standby takes over when the leader dies or stops, and a run missed while no scheduler ran
follows its task's policy. Runs are read from the sessions' inboxes (no worker takes them)."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.config.settings import load_settings
from bot.redis import keys
from bot.redis.results import done
from bot.store.database import Database, open_database
from bot.tasks.book import TASKS, NewTask, TaskBook
from bot.tasks.model import IfMissed, Target, Task
from bot.telemetry import metrics
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.schedule import Schedule
from tests.support.metric_names import sample
from tests.support.redis_server import RedisServer
from tests.support.schedulers import Schedulers
from tests.support.stack import ROOT
from tests.support.waiting import until
from worker.scheduler import RELOAD_EVERY_S

ANN = Sender(id="tg:42", name="Ann")


@dataclass
class Scene:
    redis: Redis
    book: TaskBook
    schedulers: Schedulers

    async def task(
        self,
        schedule: Schedule,
        *,
        if_missed: IfMissed = "skip",
        next_run_at: datetime | None = None,
    ) -> Task:
        """A task of Ann's in a session of its own; `next_run_at` in the past makes it a task
        whose run came due while no scheduler ran."""
        session = f"http:{uuid.uuid4().hex}"
        new = NewTask(
            Target(session=session, platform="http"), ANN, "tick", "-", schedule, if_missed
        )
        task = await self.book.add(new, max_active=100, now=datetime.now(UTC))
        if next_run_at is not None:
            async with self.book.engine.begin() as db:
                change = TASKS.update().where(TASKS.c.id == task.id)
                await db.execute(change.values(next_run_at=next_run_at, status="active"))
        found = await self.book.get(task.id)
        assert found is not None
        return found

    async def envelopes(self, task: Task) -> list[Envelope]:
        """The task's runs waiting in its session's inbox, oldest first."""
        inbox = await done(self.redis.lrange(keys.session(task.target.session, "inbox"), 0, -1))
        return [Envelope.model_validate_json(raw) for raw in inbox]

    async def runs(self, task: Task) -> list[str]:
        return [envelope.id for envelope in await self.envelopes(task)]

    def told(self, what: str) -> Callable[[], str]:
        """`what`, and the schedulers' logs, for a test that waited in vain."""
        return lambda: "\n".join([what, *map(self.schedulers.log, self.schedulers.processes)])


@pytest.fixture
async def scene(tmp_path: Path) -> AsyncIterator[Scene]:
    server = RedisServer(tmp_path / "redis")
    server.directory.mkdir()
    server.start()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": server.url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        "PARLEY_LOG_LEVEL": "INFO",
    }
    settings = load_settings(redis_url=server.url, database_url=env["DATABASE_URL"])
    database: Database = await open_database(settings)
    redis = Redis.from_url(server.url)
    schedulers = Schedulers(server.url, env, tmp_path)
    try:
        yield Scene(redis, TaskBook(database.engine, redis), schedulers)
    finally:
        await schedulers.stop()
        await redis.aclose()
        await database.aclose()
        server.stop()


def every(seconds: int, anchor: datetime | None = None) -> Schedule:
    start = anchor or datetime.now(UTC)
    return Schedule(kind="interval", spec=str(seconds), zone="Europe/Lisbon", anchor=start)


def once(at: datetime) -> Schedule:
    return Schedule(kind="once", spec=at.isoformat(), zone="Europe/Lisbon", anchor=at)


def sent_lines(log: str, task: Task) -> list[str]:
    return [line for line in log.splitlines() if f"task {task.id}: sent its run" in line]


async def test_one_scheduler_of_two_sends_each_run_and_the_standby_takes_over(scene: Scene) -> None:
    first, second = await scene.schedulers.start(), await scene.schedulers.start()
    leader = await scene.schedulers.wait_for_leader()
    standby = second if leader is first else first
    task = await scene.task(every(2))

    async def three_runs() -> bool:
        return len(await scene.runs(task)) >= 3

    await until(three_runs, scene.told("three runs"))
    assert sent_lines(scene.schedulers.log(standby), task) == []  # one scheduler ran them
    before = await scene.runs(task)
    leader.send_signal(signal.SIGKILL)
    await leader.wait()
    assert await scene.schedulers.wait_for_leader([standby]) is standby

    async def three_more() -> bool:
        return len(sent_lines(scene.schedulers.log(standby), task)) >= 3

    await until(three_more, scene.told("three runs sent by the standby"))
    runs = await scene.runs(task)
    assert runs[: len(before)] == before
    assert len(runs) == len(set(runs))  # each run once, also around the takeover
    times = [int(run.rsplit(":", 1)[1]) for run in runs]
    assert times == sorted(times) and all((b - a) % 2 == 0 for a, b in pairwise(times))


async def published(scene: Scene, schedulers: int, leading: int) -> bool:
    """Whether the schedulers' metrics snapshots (what /metrics adds up) count `schedulers`
    running, `leading` of them leading."""
    shown = metrics.merged(await metrics.snapshots(scene.redis)).decode()
    found = sample(shown, "parley_schedulers"), sample(shown, "parley_scheduler_leading")
    return found == (schedulers, leading)


async def test_a_leader_stopped_cleanly_hands_over_within_a_second_or_two(scene: Scene) -> None:
    first, second = await scene.schedulers.start(), await scene.schedulers.start()
    leader = await scene.schedulers.wait_for_leader()
    standby = second if leader is first else first
    await until(lambda: published(scene, 2, 1), scene.told("two schedulers, one leading"))
    loop = asyncio.get_running_loop()
    asked = loop.time()
    left = await scene.redis.pttl(keys.SCHEDULER_LEADER) / 1000  # were it left to expire
    leader.send_signal(signal.SIGTERM)
    await scene.schedulers.wait_for_leader([standby])
    took = loop.time() - asked
    print(f"standby leads {took:.2f} s after the leader's SIGTERM (the lease had {left:.1f} s)")
    assert await leader.wait() == 0
    assert took < left  # the lease was let go, not waited out (the default lease, 6 s)
    await until(lambda: published(scene, 1, 1), scene.told("the standby alone, leading"))
    due = datetime.now(UTC) + timedelta(seconds=2)
    task = await scene.task(once(due))

    async def ran() -> bool:
        return len(await scene.runs(task)) == 1

    await until(ran, scene.told("the standby sends the run"))
    (run,) = await scene.envelopes(task)
    # sent at its time: the new leader applied the task's announcement, rather than finding
    # it at its periodic reload of the table, some 27 s late here
    assert run.received_at - due.timestamp() < RELOAD_EVERY_S / 2


async def test_runs_missed_while_no_scheduler_ran_follow_each_tasks_policy(scene: Scene) -> None:
    """With the default grace period (10 minutes)."""
    now = datetime.now(UTC)
    long_ago, lately = now - timedelta(minutes=20), now - timedelta(minutes=1)
    skipped = await scene.task(once(long_ago), next_run_at=long_ago)
    made_up = await scene.task(once(long_ago), if_missed="run_once", next_run_at=long_ago)
    late = await scene.task(once(lately), next_run_at=lately)
    hourly_anchor = now - timedelta(hours=3, minutes=20)
    hourly_missed = hourly_anchor + timedelta(hours=1)
    hourly_skip = await scene.task(every(3600, hourly_anchor), next_run_at=hourly_missed)
    hourly_once = await scene.task(
        every(3600, hourly_anchor), if_missed="run_once", next_run_at=hourly_missed
    )
    await scene.schedulers.start()
    await scene.schedulers.wait_for_leader()

    async def settled() -> bool:
        tasks = [
            await scene.book.get(t.id) for t in (skipped, made_up, late, hourly_skip, hourly_once)
        ]
        return all(t is not None and (t.runs + t.missed) >= 1 for t in tasks)

    await until(settled, scene.told("every missed run handled"))
    assert await scene.runs(skipped) == []
    assert await scene.runs(made_up) == [made_up.run_id(long_ago)]
    assert await scene.runs(late) == [late.run_id(lately)]
    assert await scene.runs(hourly_skip) == []
    latest = hourly_anchor + timedelta(hours=3)  # three runs missed: one, the latest, is made
    assert await scene.runs(hourly_once) == [hourly_once.run_id(latest)]
    gone = await scene.book.get(skipped.id)
    assert gone is not None and gone.status == "missed" and gone.missed == 1
    kept = await scene.book.get(hourly_skip.id)
    assert kept is not None and kept.status == "active" and kept.missed == 1
    assert kept.next_run_at is not None and kept.next_run_at > now
    for task in (made_up, late):
        done = await scene.book.get(task.id)
        assert done is not None and done.status == "done" and done.runs == 1
