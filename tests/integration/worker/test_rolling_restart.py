"""A rolling restart: every worker replaced, one after another, while messages keep coming.

Three `parley worker` processes with the default settings (lease, liveness, timeouts) take a
steady stream of messages over several sessions (`tests.support.traffic`: long streamed
replies, tool calls with a side effect), and a person on the HTTP API reads each reply's
stream as it comes. Each original worker in turn gets SIGTERM while it runs a turn, exits, and
a new one is started and awaited on its own signal of being ready (its entry in the ready
stream, and `parley health worker`'s signal file), as an orchestrator rolling a deployment
would. Afterwards every message is answered exactly once and in order per session, no reply is
cut or doubled (in the record, and as the HTTP client shows it), no side effect ran twice,
nothing is dead or left waiting.
"""

from __future__ import annotations

import asyncio
import signal
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from arq.connections import RedisSettings, create_pool

from bot.mailbox.inbox import Mailbox
from tests.support.parley import Process
from tests.support.stack import Stack, idle, lease_tokens, send, texts
from tests.support.traffic import Ledger, Traffic, answer_to, check_conversations
from tests.support.waiting import until
from worker import health

SESSIONS = 6
WORKERS = 3


def signalled(pid: int) -> bool:
    """Whether the worker of process `pid` writes the health signal `parley health worker`
    reads (the probe an orchestrator waits on before it stops the next one)."""
    return health.Signal("worker", pid=pid).path.exists()


@pytest.mark.slow(40)  # three workers started and stopped in turn under load
async def test_every_worker_replaced_under_load_loses_and_repeats_nothing(
    stack: Stack, tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    effects.mkdir()
    ledger = Ledger(effects)
    stack.fake.responder = ledger
    originals = [await stack.start_worker_process() for _ in range(WORKERS)]
    pool = await create_pool(RedisSettings.from_dsn(stack.redis_url))
    traffic = Traffic(Mailbox(pool, pool), SESSIONS)
    sending = asyncio.create_task(traffic.run(at_least=3))
    watched = asyncio.create_task(watcher(stack, traffic.stop))
    try:
        await until(lambda: ledger.calls >= SESSIONS, "the first turns running")
        for old in originals:
            await replace(stack, old, ledger)
        traffic.stop.set()
        await asyncio.wait_for(sending, 120)
        shown = await asyncio.wait_for(watched, 120)
    finally:
        traffic.stop.set()
        sending.cancel()
        watched.cancel()
    for s in range(SESSIONS):
        await until(partial(_drained, traffic, s), f"session {s}'s answers", within=120)
    await idle(stack.redis_url)
    sent = sum(traffic.sent.values())
    print(f"\n{sent} messages over {SESSIONS} sessions, {ledger.calls} model calls, all "
          f"{WORKERS} workers replaced")  # fmt: skip
    assert ledger.violations == []
    assert [problem for m, events in enumerate(shown) if (problem := whole(m, events))] == []
    database = stack.env["DATABASE_URL"]
    assert await check_conversations(traffic, stack.redis_url, effects, database) == []
    assert all(proc.returncode is None for proc in stack.workers[WORKERS:])
    assert stack.fake.rejected == []
    await pool.aclose()


async def watcher(stack: Stack, stop: asyncio.Event) -> list[list[dict[str, Any]]]:
    """A person on the HTTP API, in a session of its own (number SESSIONS), who sends a
    message, reads its reply's stream to the end, and sends the next, until `stop` (and at
    least three); each reply's events, as the client got them."""
    shown: list[list[dict[str, Any]]] = []
    async with stack.client() as client:
        session = await stack.session(client)
        while not stop.is_set() or len(shown) < 3:
            shown.append(await send(client, session, f"s{SESSIONS} m{len(shown)}"))
    return shown


def whole(m: int, events: list[dict[str, Any]]) -> str | None:
    """What is wrong with the reply to message `m` as its client shows it, or None: it ends
    with its answer once and whole, after a `reset` wherever a worker handed it over."""
    shown = texts(events)
    answer = answer_to(SESSIONS, [m])
    if not shown.endswith(answer) or shown.count(f"ans s{SESSIONS} m") != 1:
        return f"m{m}: the client shows {shown!r}"
    if events[-1]["type"] != "completed" or events[-1]["finish_reason"] != "end_turn":
        return f"m{m}: ended with {events[-1]}"
    return None


async def replace(stack: Stack, old: Process, ledger: Ledger) -> None:
    """SIGTERM `old` while it runs a turn, wait for its clean exit, start its successor and
    wait for it to be ready, then for turns to run again."""
    calls = ledger.calls
    # mid-turn: while it holds a session's lease, a turn of it streaming or in a tool
    await until(partial(_holds, stack, old), "the worker running a turn")
    stack.kill(old, signal.SIGTERM)
    assert await asyncio.wait_for(old.wait(), 60) == 0  # a clean exit, its turns handed over
    new = await stack.start_worker_process()  # ready: announced in the ready stream
    await until(partial(signalled, new.pid), "the new worker's health signal")
    await until(lambda: ledger.calls > calls + 2, "turns running between restarts")


async def _holds(stack: Stack, proc: Process) -> bool:
    """Whether worker process `proc` holds a session's lease now (its token names it)."""
    holders = [
        token.split(":", 1)[1].rpartition(":")[0]
        for token in (await lease_tokens(stack.redis_url)).values()
    ]
    return any(stack.named.get(worker) is proc for worker in holders)


async def _drained(traffic: Traffic, s: int) -> bool:
    return await traffic.mailbox.pending(traffic.session(s)) == 0
