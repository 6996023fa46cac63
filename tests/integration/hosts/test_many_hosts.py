"""Workers on two hosts (`host-a`, `host-b`: host names of their own, each worker process 1
of its own pid namespace, as in containers) against one Redis and one PostgreSQL, with the
test's web process: a burst of messages over several sessions is answered once each, in
order, by both hosts; each process keeps Redis keys of its own; a worker killed mid-turn on
one host leaves the turn to the other, which finishes it."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from adapters.http.place import session_key
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import Reply
from tests.integration.worker.test_guarantees import Ledger, mailbox_for, text_to
from tests.support.hosts import start_worker_on
from tests.support.stack import Stack, idle, lease_tokens, read_events, texts
from tests.support.waiting import WITHIN, until

SESSIONS, MESSAGES = 10, 4  # enough wake-ups that a loaded host-b still takes some
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.parametrize("database_url", ["postgresql"], indirect=True),
]


async def burst(mailbox: Mailbox) -> None:
    async def user(s: int) -> None:
        for m in range(MESSAGES):
            envelope = Envelope(
                id=f"s{s}-m{m}", session=f"test:s{s}", text=f"s{s} m{m}",
                sender=Sender(id=f"test:u{s}"),
            )  # fmt: skip
            assert (await mailbox.submit(envelope)).accepted
            await asyncio.sleep(0.01 * (s % 3))

    await asyncio.gather(*(user(s) for s in range(SESSIONS)))


async def turns_by_process(redis: Redis) -> dict[str, float]:
    """Each live process's count of turns, from the snapshots it keeps in Redis."""
    counts = {}
    async for key in redis.scan_iter(keys.METRICS_MATCH):
        snapshot = (await redis.get(key) or b"").decode()
        counted = [
            float(line.rsplit(" ", 1)[1])
            for line in snapshot.splitlines()
            if line.startswith("parley_turns_total{")
        ]
        counts[key.decode().removeprefix(keys.METRICS_PREFIX)] = sum(counted)
    return counts


async def test_two_hosts_share_the_work_and_one_takes_over_the_others_turn(
    stack: Stack,
) -> None:
    a, a_id = await start_worker_on(stack, "host-a")
    b, b_id = await start_worker_on(stack, "host-b")
    redis = Redis.from_url(stack.redis_url)
    ready = [fields for _, fields in await redis.xrange(keys.READY_STREAM)]
    hosts = {f[b"host"].decode(): (f[b"pid"].decode(), f[b"worker"].decode()) for f in ready}
    assert hosts == {"host-a": ("1", a_id), "host-b": ("1", b_id)}  # same pid, two hosts

    ledger = Ledger()
    stack.fake.responder = ledger
    mailbox, pool = await mailbox_for(stack)
    await burst(mailbox)
    await until(
        lambda: sum(map(len, ledger.seen.values())) >= SESSIONS * MESSAGES,
        "every message seen by the model",
    )
    await idle(stack.redis_url)
    assert ledger.violations == []
    assert dict(ledger.seen) == {str(s): list(range(MESSAGES)) for s in range(SESSIONS)}
    assert stack.fake.rejected == []

    counts: dict[str, float] = {}

    async def both_hosts_worked() -> bool:
        counts.clear()
        counts.update(await turns_by_process(redis))
        return {name.split(":")[0] for name, n in counts.items() if n > 0} == {
            "host-a",
            "host-b",
        }

    await until(both_hosts_worked, lambda: f"turns counted on both hosts: {counts}")
    names = list(counts)
    assert all(name.split(":")[1] == "1" for name in names)  # pid 1 on both...
    assert len(set(names)) == len(names) == 2  # ...and still two keys, one per process

    stack.fake.responder = None
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="This attempt dies with its host", chunk_size=4, gate=gate, gate_after=8),
        Reply(text="Finished on the other host."),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "go on"}
        ) as response:
            streaming = asyncio.Event()
            reading = asyncio.create_task(read_events(response, text_to(streaming)))
            await asyncio.wait_for(streaming.wait(), WITHIN)
            holder = (await lease_tokens(stack.redis_url))[session_key(session)].split(":")[1]
            doomed, survivor = (a, b) if holder == a_id else (b, a)
            assert holder in (a_id, b_id)
            doomed.kill()
            killed = time.monotonic()
            events = await asyncio.wait_for(reading, WITHIN)
    gate.set()
    took = time.monotonic() - killed
    print(f"\nthe other host finished the turn {took:.1f} s after its worker was killed")
    assert texts(events) == "Finished on the other host."
    assert events[-1]["type"] == "completed"
    assert survivor.returncode is None
    assert await doomed.wait() != 0
    await pool.aclose()
    await redis.aclose()
