"""The scheduler: how late runs reach their sessions' mailboxes, and how fast a standby leads.

A `parley scheduler` process runs against a Redis and a SQLite file of its own, with its
default settings. Three figures:
- "seen": a task made "in 2 seconds" is on the leader's clock this long after it was written
  (the announcement on `parley:tasks`; the scheduler's log line);
- "late": N one-off tasks due in the same second: each run's envelope is stamped when it is
  made (`received_at`), so its lateness is that stamp minus the due time; median, 95th
  percentile and the slowest are printed, with the time until the last one was in its inbox;
- "takeover": a second scheduler stands by; the leader is killed (SIGKILL) and the time until
  the standby leads is printed (at most the lease's TTL, PARLEY_SCHEDULER_LEASE, 6 s, plus its
  one-second poll), and a SIGTERM'd leader's hand-over.

Run with `make bench`, or `python -m tests.bench.scheduler [N]` (N tasks, default 200).
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from redis.asyncio import Redis

from bot.config.settings import load_settings
from bot.redis import keys
from bot.redis.results import done
from bot.store.database import open_database
from bot.tasks.book import NewTask, TaskBook
from bot.tasks.model import Target
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.schedule import Schedule
from tests.bench.processes import DEADLINE_S
from tests.bench.table import Figure, percentile, report, samples
from tests.support.parley import Process
from tests.support.redis_server import RedisServer
from tests.support.schedulers import Schedulers
from tests.support.stack import ROOT

BOSS = Sender(id="tg:1", name="Bench")
FIGURES = (
    "scheduler: runs due at once, p95 late",
    "scheduler: takeover after SIGKILL",
    "scheduler: takeover after SIGTERM",
)


async def _made_runs(redis: Redis, sessions: list[str]) -> list[Envelope]:
    found = []
    for session in sessions:
        raw = await done(redis.lrange(keys.session(session, "inbox"), 0, -1))
        found += [Envelope.model_validate_json(item) for item in raw]
    return found


async def _late(book: TaskBook, redis: Redis, count: int) -> None:
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=4)
    sessions = [f"http:{uuid.uuid4().hex}" for _ in range(count)]
    for session in sessions:
        schedule = Schedule(kind="once", spec=due.isoformat(), zone="UTC", anchor=due)
        new = NewTask(
            Target(session=session, platform="http"), BOSS, "go", due.isoformat(), schedule
        )
        await book.add(new, max_active=10**6, now=datetime.now(UTC))
    runs: list[Envelope] = []
    while len(runs) < count:
        await asyncio.sleep(0.05)
        runs = await _made_runs(redis, sessions)
    last_in = time.time() - due.timestamp()
    late = sorted(run.received_at - due.timestamp() for run in runs)
    p95 = percentile(late, 0.95)
    report(Figure("scheduler: runs due at once, p95 late", p95 * 1000, "ms"))
    print(
        f"late: {count} runs due at once: median {statistics.median(late) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, slowest {late[-1] * 1000:.0f} ms "
        f"(all in their inboxes {last_in * 1000:.0f} ms after the due time)"
    )


async def _seen(book: TaskBook, schedulers: Schedulers, leader: Process) -> None:
    now = datetime.now(UTC)
    due = now + timedelta(seconds=2)
    schedule = Schedule(kind="once", spec=due.isoformat(), zone="UTC", anchor=now)
    target = Target(session=f"http:{uuid.uuid4().hex}", platform="http")
    written = time.time()
    task = await book.add(
        NewTask(target, BOSS, "go", "in 2 s", schedule), max_active=10**6, now=now
    )
    line = f'Added job "task {task.id}"'
    while line not in schedulers.log(leader):  # noqa: ASYNC110 (the log is the signal)
        await asyncio.sleep(0.005)
    seen = (time.time() - written) * 1000
    print(f"seen: a new task is on the leader's clock {seen:.0f} ms after it was written")


async def _takeover(schedulers: Schedulers) -> None:
    for how in (signal.SIGKILL, signal.SIGTERM):
        leader = await schedulers.wait_for_leader()
        standby = await schedulers.start()
        await _up(schedulers, standby)
        began = time.monotonic()
        leader.send_signal(how)
        await schedulers.wait_for_leader([standby])
        took = time.monotonic() - began
        print(f"takeover after {how.name}: the standby leads {took:.2f} s later")
        report(Figure(f"scheduler: takeover after {how.name}", took, "s"))


async def _up(schedulers: Schedulers, standby: Process) -> None:
    """Once the standby said it is up (its log line, written just before it first asks for
    the lease): it polls the lease from then on."""
    deadline = time.monotonic() + DEADLINE_S
    while "is up" not in schedulers.log(standby):
        if standby.returncode is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the standby scheduler never came up: {schedulers.log(standby)}")
        await asyncio.sleep(0.01)


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server = RedisServer(tmp / "redis")
        server.directory.mkdir()
        server.start()
        url = f"sqlite+aiosqlite:///{tmp}/parley.db"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": os.environ.get("HOME", "/tmp"),
            "PYTHONPATH": str(ROOT),
            "REDIS_URL": server.url,
            "DATABASE_URL": url,
            "PARLEY_LOG_LEVEL": "INFO",
        }
        database = await open_database(load_settings(redis_url=server.url, database_url=url))
        redis = Redis.from_url(server.url)
        schedulers = Schedulers(server.url, env, tmp)
        try:
            book = TaskBook(database.engine, redis)
            leader = await schedulers.start()
            await schedulers.wait_for_leader()
            await _seen(book, schedulers, leader)
            await _late(book, redis, count)
            await _takeover(schedulers)
        finally:
            await schedulers.stop()
            await redis.aclose()
            await database.aclose()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else samples(200, 10)))
