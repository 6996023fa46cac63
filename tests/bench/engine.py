"""What one turn costs as the conversation grows, on loopback, with its state in a real Redis.

The fake model APIs run in a separate process and answer at once, so the figures are Parley's
own cost plus the SDK's: building the prompt and the request, parsing the stream, the loop's
bookkeeping, and the state's load, saves and commit in Redis the way a worker does them
(`bot.session.runner`), the older turns of a long context moved to SQLite, and the run's record
(its row, its messages, the session's totals) written to SQLite after each turn. A turn's work must
not grow with the conversation: the figures compare the first turns with the last ones, count
the bytes each turn sends to Redis, and weigh the session's keys at the end; a load by a
worker that kept no copy (Redis's recent turns and SQL's older ones) is timed last.
`python -m tests.bench.engine [turns]`; `make bench` runs it.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.assembly.agent import build_agent
from bot.config.settings import Settings
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.session.states import StateStore
from bot.session.watch import RunWatch
from bot.store.cold_context import ColdContext
from bot.store.database import open_database
from bot.store.history import History
from bot.tools.base import ToolContext
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.state import SessionState
from tests.bench.processes import fake_model
from tests.bench.table import Figure, report, samples
from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY
from tests.support.redis_server import RedisServer

TURNS = 1000
WINDOW = 50  # turns at each end whose medians are compared
MODELS = {"anthropic": "claude-bench", "openai": "gpt-bench"}
HOT_STATE_LIMIT = 64 * 1024


class _NoJobs:
    """The bench takes its turns itself; a wake-up job would have no worker to go to."""

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class Case:
    first: list[float] = field(default_factory=list)  # s to the first text
    whole: list[float] = field(default_factory=list)  # s for the whole turn, Redis included
    record: list[float] = field(default_factory=list)  # s of the run's record, in the whole
    cpu: list[float] = field(default_factory=list)  # this process's CPU s per turn
    sent: list[int] = field(default_factory=list)  # bytes Redis received per turn
    cold_load: float = 0.0  # CPU s of a load by a worker without the kept copy, at the end
    hot_bytes: int = 0  # the session's keys in Redis after the last turn


@asynccontextmanager
async def fake_server() -> AsyncIterator[str]:
    proc, url = await fake_model()
    try:
        yield url
    finally:
        proc.terminate()
        await proc.wait()


async def received(redis: Redis) -> int:
    return int((await redis.info("stats"))["total_net_input_bytes"])


STATE_KEYS = ("state", "context", "saved")  # the hot state; the rest is the mailbox's


async def hot_bytes(redis: Redis, session: str) -> int:
    """What the session's state takes in Redis, as MEMORY USAGE counts it."""
    total = 0
    for name in STATE_KEYS:
        total += int(await redis.memory_usage(keys.session(session, name), samples=0) or 0)
    return total


@dataclass
class Worker:
    """What a worker's turn goes through, for one session it holds the lease of."""

    agent: Agent
    mailbox: Mailbox
    store: StateStore
    history: History
    session: str
    token: str


async def turn(worker: Worker, n: int, text: str) -> tuple[float | None, float, float]:
    """One turn as a worker takes it: load the state, run, save after every step, record
    the run, commit."""
    session, token, store = worker.session, worker.token, worker.store
    envelope = Envelope(id=f"{session}:{n}", session=session, text=text, sender=Sender(id="u"))
    await worker.mailbox.submit(envelope)
    started, first = time.perf_counter(), None
    state = await store.load(session) or SessionState()
    zone = worker.agent.deps.settings.timezone
    ctx = ToolContext(session, Sender(id="bench"), default_timezone=zone)
    watch = RunWatch.of(state, resumed=False)

    async def checkpoint(current: SessionState) -> None:
        watch.keep(current)
        await store.save(session, token, current)

    request = TurnRequest(ctx, text=text, envelope_ids=(envelope.id,))
    async for event in worker.agent.run(state, request, checkpoint=checkpoint):
        watch.see(event)
        if isinstance(event, ev.TextDelta) and first is None:
            first = time.perf_counter() - started
    record = watch.record([envelope], "message", worker.agent.deps.settings.model, "u")
    assert record is not None
    recording = time.perf_counter()
    await worker.history.record(state, record)
    recorded = time.perf_counter() - recording
    await store.commit(session, token, [envelope], state)
    return first, time.perf_counter() - started, recorded


async def measure(
    url: str, redis: Redis, history: History, api: str, with_tool: bool, turns: int
) -> Case:
    settings = Settings(
        model=MODELS[api],
        anthropic_api_key=ANTHROPIC_KEY,
        anthropic_base_url=url,
        openai_api_key=OPENAI_KEY,
        openai_base_url=url + "/v1",
    )
    agent = build_agent(settings)
    mailbox = Mailbox(redis, _NoJobs())
    cold = ColdContext(history.engine)
    store = StateStore(mailbox, cold)
    session = f"bench:{api}:{with_tool}"
    token = await mailbox.take_lease(session, ttl=3600)
    assert token is not None
    worker = Worker(agent, mailbox, store, history, session, token)
    case = Case()
    for n in range(turns):
        text = f"what is {n} * 2" if with_tool else f"message number {n}"
        before, cpu = await received(redis), time.process_time()
        first, whole, record = await turn(worker, n, text)
        case.cpu.append(time.process_time() - cpu)
        case.sent.append(await received(redis) - before)
        case.first.append(first or whole)
        case.whole.append(whole)
        case.record.append(record)
    case.hot_bytes = await hot_bytes(redis, session)
    cpu = time.process_time()
    loaded = await StateStore(mailbox, cold).load(session)  # another worker's: no kept copy
    case.cold_load = time.process_time() - cpu
    assert loaded == await store.load(session)
    await agent.aclose()
    return case


def median(values: list[float] | list[int]) -> float:
    return float(statistics.median(values))


def show(name: str, case: Case) -> None:
    def pair(values: list[float], scale: float = 1000) -> str:
        early, late = median(values[:WINDOW]) * scale, median(values[-WINDOW:]) * scale
        return f"{early:6.1f} / {late:6.1f}"

    sent = [float(s) for s in case.sent]
    print(
        f"{name:28} {pair(case.first)}  {pair(case.whole)}  {pair(case.record)}  "
        f"{pair(case.cpu)}  {pair(sent, 1 / 1024)}  {case.hot_bytes / 1024:7.1f}  "
        f"{case.cold_load * 1000:7.1f}"
    )


def figures(name: str, case: Case) -> list[Figure]:
    """Late against early turns (the target: no growth), and the late turns' own figures."""
    turns = len(case.cpu)
    early, late = median(case.cpu[:WINDOW]), median(case.cpu[-WINDOW:])
    sent_early, sent_late = median(case.sent[:WINDOW]), median(case.sent[-WINDOW:])
    first = median(case.first[-WINDOW:]) * 1000
    return [
        Figure(f"engine {name}: CPU per turn, late/early", late / early, "×", 1.5),
        Figure(f"engine {name}: CPU per turn after {turns} turns", late * 1000, "ms"),
        Figure(f"engine {name}: first text after {turns} turns", first, "ms"),
        Figure(
            f"engine {name}: a run's record, late/early",
            median(case.record[-WINDOW:]) / median(case.record[:WINDOW]),
            "×",
            1.5,
        ),
        Figure(
            f"engine {name}: bytes to Redis per turn, late/early", sent_late / sent_early, "×", 1.5
        ),
        Figure(
            f"engine {name}: Redis hot state after {turns} turns",
            case.hot_bytes / 1024,
            "KiB",
            HOT_STATE_LIMIT / 1024,
        ),
        Figure(
            f"engine {name}: CPU of a cold load after {turns} turns", case.cold_load * 1000, "ms"
        ),
    ]


async def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else samples(TURNS, 2 * WINDOW)
    print(f"engine on loopback with Redis, {turns} turns per case; medians of the first and the")
    print(f"last {WINDOW} turns (the context grows by one turn each time)")
    print(
        "case                         first text ms      whole turn ms      record ms"
        "          CPU ms/turn        KiB to Redis/turn  hot KiB  cold load CPU ms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp), "--appendfsync", "everysec")
        server.start()
        redis = Redis.from_url(server.url)
        url = f"sqlite+aiosqlite:///{tmp}/parley.db"
        database = await open_database(Settings(_env_file=None, database_url=url))
        try:
            async with fake_server() as url:
                for api in ("anthropic", "openai"):
                    for with_tool in (False, True):
                        case = await measure(url, redis, database.history, api, with_tool, turns)
                        name = api + (" + calculator call" if with_tool else "")
                        show(name, case)
                        report(*figures(name, case))
        finally:
            await database.aclose()
            await redis.aclose()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
