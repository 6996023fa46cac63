"""Turns a second at saturation with an instant model, for 1, 2 and 4 worker processes, and
the CPU each turn costs the processes that orchestrate it.

The path measured is the HTTP API's, the way a client's message really arrives: many clients,
each with a session of its own, post a message (`POST /api/sessions/{id}/messages`) to a
`parley web` process and read the turn's events it streams back (SSE) until `completed`, then
post the next one. The web process submits to Redis; `parley worker` processes run the turns
and write their events; the web process relays them. A turn counts once its `completed` event
arrived with exactly the text the model sent. The model is the fake model in a process of its
own, answering each message at once (`tests.fakes.llm.words`); the record goes to PostgreSQL
(several workers write it at once, as in production; SQLite where PostgreSQL is not installed,
and in the smoke run, which starts faster).
Redis runs with AOF, fsync every second, as `parley up` starts it.

For comparison, the same turns are also submitted straight into the mailbox
(`Mailbox.submit`) and awaited on the session's event stream, without the web process: the
difference is the cost of the ingress and of relaying the events.

The clients keep the workers saturated, each in conversations of ten turns; each figure is
taken over a window of turns after a warm-up. Orchestration CPU per turn is the user + system
time of the web and worker processes (from /proc) over the window, divided by its turns: the
model, Redis, the database and the clients are left out. Redis commands and SQL transactions
per turn (INFO commandstats, pg_stat_database: all that Redis and the database served, the
mailbox clients' own commands included) are printed beside it. On a shared machine the
turns a second swing with the load; the CPU per turn and the counts are the steadier figures.
Run with `make bench`, or `python -m tests.bench.throughput`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
from arq.connections import ArqRedis, RedisSettings, create_pool
from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender
from tests.bench.processes import environment, fake_model, serving
from tests.bench.table import Figure, quick, report, samples
from tests.fakes.llm.words import reply_text
from tests.support.postgres_server import PostgresServer, find_bindir
from tests.support.redis_server import RedisServer, free_port
from tests.support.workers import Announcements

FIGURES = (
    "throughput: turns/s, 1 worker",
    "throughput: turns/s, 2 workers",
    "throughput: turns/s, 4 workers",
    "throughput: 2 workers / 1",
    "throughput: orchestration CPU per turn, 2 workers",
)
SCALE = (1, 2, 4)
CLIENTS = samples(64, 8)  # conversations at once: enough to keep 4 workers busy
CONVERSATION = 10  # turns in each session: the history stays as short as a real chat's
WARM_UP = samples(300, 10)  # turns before each window
WINDOW = samples(2000, 30)  # turns measured per configuration
WORDS = 12  # the instant reply: one sentence, in one delta
ASKED = f"{WORDS} words"
TRANSACTIONS = (
    "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
)
DEADLINE_S = 600.0  # a window on a very busy machine is slow, not broken


@dataclass
class Count:
    """Turns completed so far by all clients, and turns that did not end as they should."""

    turns: int = 0
    wrong: int = 0
    problem: str = ""


@dataclass(frozen=True)
class Reading:
    """What the processes had spent at one moment: CPU seconds of the web and worker
    processes, commands Redis had run, transactions the database had ended."""

    cpu: float
    commands: Counter[str]  # by command
    transactions: int

    def __sub__(self, other: Reading) -> Reading:
        return Reading(
            self.cpu - other.cpu,
            self.commands - other.commands,
            self.transactions - other.transactions,
        )


@dataclass(frozen=True)
class Window:
    turns: int
    seconds: float
    spent: Reading

    @property
    def rate(self) -> float:
        return self.turns / self.seconds

    @property
    def cpu_ms(self) -> float:
        return self.spent.cpu / self.turns * 1000


@dataclass
class Meters:
    """Reads what the processes spent: /proc, Redis's INFO and PostgreSQL's statistics."""

    redis: Redis
    database: AsyncEngine | None  # PostgreSQL's, to read its statistics
    pids: Callable[[], list[int]]

    async def read(self) -> Reading:
        stats = await self.redis.info("commandstats")
        commands = Counter({k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()})
        return Reading(
            sum(cpu_seconds(pid) for pid in self.pids()), commands, await self._transactions()
        )

    async def _transactions(self) -> int:
        if self.database is None:
            return 0
        async with self.database.connect() as connection:
            ended = await connection.scalar(text(TRANSACTIONS))
        return int(ended or 0)


def cpu_seconds(pid: int) -> float:
    """User + system time of a running process, from /proc (0 where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def completed_right(data: bytes, count: Count) -> None:
    """Count one turn from its `completed` event: right if it carries the model's text."""
    event = json.loads(data)
    if event.get("type") == "completed" and event.get("text") == reply_text(WORDS):
        count.turns += 1
    else:
        count.wrong += 1
        count.problem = data.decode()[:300]


async def over_http(http: aiohttp.ClientSession, base: str, count: Count) -> None:
    """One client: conversations of `CONVERSATION` turns, each in a new session, one
    message after another, each read to its end."""
    while True:
        async with http.post(f"{base}/api/sessions") as created:
            session = (await created.json())["id"]
        for _ in range(CONVERSATION):
            await http_turn(http, f"{base}/api/sessions/{session}/messages", count)


async def http_turn(http: aiohttp.ClientSession, url: str, count: Count) -> None:
    """Post one message and read its events to the end: `completed` should be the last."""
    async with http.post(url, json={"text": ASKED}) as answer:
        last = b""
        async for line in answer.content:
            if line.startswith(b"data: "):
                last = line[6:]
        if answer.status != 200 or not last:
            count.wrong += 1
            count.problem = f"HTTP {answer.status}"
            return
        completed_right(last, count)


async def through_mailbox(url: str, mailbox: Mailbox, client: int, count: Count) -> None:
    """One client without the web process: submit, then read the session's events stream;
    conversations of `CONVERSATION` turns, like the HTTP clients'."""
    redis = Redis.from_url(url)
    try:
        for turn in range(sys.maxsize):
            session = f"bench:mailbox:{client}:{turn // CONVERSATION}"
            events = keys.events(session)
            since = await redis.xrevrange(events, count=1)
            position = since[0][0].decode() if since else "0-0"
            envelope_id = f"{session}-{turn}"
            sender = Sender(id="bench:api", is_admin=True)
            await mailbox.submit(
                Envelope(id=envelope_id, session=session, text=ASKED, sender=sender)
            )
            position = await until_completed(redis, events, position, envelope_id, count)
    finally:
        await redis.aclose()


async def until_completed(
    redis: Redis, events: str, position: str, envelope_id: str, count: Count
) -> str:
    while True:
        for _, entries in await redis.xread({events: position}, block=10_000):
            for entry_id, fields in entries:
                position = entry_id.decode()
                mine = envelope_id in fields[b"envelopes"].decode().split(",")
                if mine and json.loads(fields[b"event"])["type"] == "completed":
                    completed_right(fields[b"event"], count)
                    return position


async def window(count: Count, meters: Meters) -> Window:
    """Wait out the warm-up, then time `WINDOW` turns and what the processes spent."""
    await turns_reach(count, count.turns + WARM_UP)
    turns, started, before = count.turns, time.monotonic(), await meters.read()
    await turns_reach(count, turns + WINDOW)
    spent = await meters.read() - before
    return Window(count.turns - turns, time.monotonic() - started, spent)


async def turns_reach(count: Count, target: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while count.turns < target:
        if count.wrong:
            raise RuntimeError(f"{count.wrong} turns did not end as they should: {count.problem}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {count.turns} of {target} turns in {DEADLINE_S:.0f} s")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def clients(start: Callable[[int], Coroutine[Any, Any, None]]) -> AsyncIterator[None]:
    """`CLIENTS` clients running `start(n)` until the block ends."""
    tasks = [asyncio.create_task(start(n)) for n in range(CLIENTS)]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class Processes:
    """The web process and the workers running, all stopped at the end."""

    env: dict[str, str]
    redis_url: str
    web: asyncio.subprocess.Process | None = None
    workers: list[asyncio.subprocess.Process] | None = None

    def pids(self) -> list[int]:
        running = [*(self.workers or []), *([self.web] if self.web else [])]
        return [p.pid for p in running]

    async def start_web(self, port: int) -> str:
        env = {**self.env, "PARLEY_HTTP_PORT": str(port)}
        self.web = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "worker", "web", env=env
        )
        base = f"http://127.0.0.1:{port}"
        await serving(base, self.web)
        return base

    async def add_workers(self, count: int) -> None:
        """`count` more workers, each ready once it announced itself."""
        self.workers = self.workers or []
        announcements = Announcements(self.redis_url)
        after = await announcements.last()
        started = [
            await asyncio.create_subprocess_exec(
                sys.executable, "-m", "worker", "worker", env=self.env
            )
            for _ in range(count)
        ]
        self.workers += started
        for proc in started:
            await announcements.wait(after, proc.pid, partial(ended, proc))

    async def stop(self) -> None:
        for proc in [*(self.workers or []), *([self.web] if self.web else [])]:
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()


def ended(proc: asyncio.subprocess.Process) -> str | None:
    return None if proc.returncode is None else f"it exited with {proc.returncode}"


async def scaling(
    processes: Processes, base: str, pool: ArqRedis, database: AsyncEngine | None
) -> dict[int, Window]:
    """The HTTP path with 1, 2 and 4 workers: the same clients, more workers each time."""
    count = Count()
    measured: dict[int, Window] = {}
    connector = aiohttp.TCPConnector(limit=CLIENTS)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=DEADLINE_S)
    async with (
        aiohttp.ClientSession(connector=connector, timeout=timeout) as http,
        clients(lambda _: over_http(http, base, count)),
    ):
        for workers in SCALE:
            await processes.add_workers(workers - len(processes.workers or []))
            measured[workers] = await window(count, Meters(pool, database, processes.pids))
            print(line(f"HTTP API, {workers} worker{'s' * (workers > 1)}", measured[workers]))
    return measured


async def without_web(
    processes: Processes, pool: ArqRedis, url: str, database: AsyncEngine | None
) -> Window:
    """Straight into the mailbox with every worker running: the turns without the ingress."""
    count = Count()
    mailbox = Mailbox(pool, pool)
    workers = [p.pid for p in processes.workers or []]
    async with clients(lambda n: through_mailbox(url, mailbox, n, count)):
        measured = await window(count, Meters(pool, database, lambda: workers))
    print(line(f"Mailbox.submit, {len(workers)} workers", measured) + " (workers only)")
    return measured


def line(label: str, measured: Window) -> str:
    spent, turns = measured.spent, measured.turns
    sql = f", {spent.transactions / turns:4.1f} SQL transactions" if spent.transactions else ""
    top = ", ".join(f"{name} {n / turns:.1f}" for name, n in spent.commands.most_common(6))
    return (
        f"{label:26} {measured.rate:7.1f} turns/s; a turn: {measured.cpu_ms:5.2f} ms CPU, "
        f"{spent.commands.total() / turns:5.1f} Redis commands{sql}   "
        f"({turns} turns in {measured.seconds:.1f} s)\n{'':28}Redis commands a turn: {top}"
    )


@contextlib.contextmanager
def database(folder: str) -> Iterator[str]:
    """PostgreSQL where it is installed, else a SQLite file in `folder`."""
    bindir = None if quick() else find_bindir()
    if bindir is None:
        yield f"sqlite+aiosqlite:///{folder}/parley.db"
        return
    server = PostgresServer(bindir)
    server.start()
    try:
        yield server.create_database()
    finally:
        server.stop()
        server.remove()


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, database(tmp) as database_url:
        server = RedisServer(Path(tmp), "--appendfsync", "everysec")
        server.start()
        fake, model_url = await fake_model()
        env = environment(server.url, tmp, model_url, DATABASE_URL=database_url)
        env = {k: v for k, v in env.items() if not k.startswith("PARLEY_BENCH_")}
        processes = Processes(env, server.url)
        pool = await create_pool(RedisSettings.from_dsn(server.url))
        postgres = database_url.startswith("postgresql")
        engine = create_async_engine(database_url, poolclass=NullPool) if postgres else None
        try:
            base = await processes.start_web(free_port())
            kind = database_url.split(":")[0]
            print(f"{CLIENTS} clients, conversations of {CONVERSATION} turns; {kind}")
            measured = await scaling(processes, base, pool, engine)
            mailbox = await without_web(processes, pool, server.url, engine)
        finally:
            await processes.stop()
            fake.terminate()
            await fake.wait()
            await pool.aclose()
            if engine is not None:
                await engine.dispose()
            server.stop()
    summarise(measured, mailbox)


def summarise(measured: dict[int, Window], mailbox: Window) -> None:
    ratio = measured[2].rate / measured[1].rate
    web_ms = measured[SCALE[-1]].cpu_ms - mailbox.cpu_ms
    print(f"2 workers / 1: {ratio:.2f}x; the ingress and relay cost about {web_ms:.2f} ms a turn")
    report(
        Figure(FIGURES[0], measured[1].rate, "turns/s"),
        Figure(FIGURES[1], measured[2].rate, "turns/s", 200, higher_is_better=True),
        Figure(FIGURES[2], measured[4].rate, "turns/s"),
        Figure(FIGURES[3], ratio, "x", 1.7, higher_is_better=True),
        Figure(FIGURES[4], measured[2].cpu_ms, "ms"),
    )


if __name__ == "__main__":
    asyncio.run(main())
