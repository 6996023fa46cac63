"""The mailboxes' backlog as `/metrics` shows it, read from the real Lua scripts' keys on a
real Redis: envelopes count from their submission until their turn commits them, sessions
until they are released, and idle sessions cost nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from bot.mailbox.backlog import Backlog, backlog
from bot.mailbox.inbox import Mailbox
from bot.telemetry import metrics
from bot.vocabulary.envelope import Envelope, Sender


class Jobs:
    """arq's side: the drain jobs asked for (no worker runs here)."""

    def __init__(self) -> None:
        self.enqueued: list[tuple[Any, ...]] = []

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        self.enqueued.append((function, *args))


def envelope(session: str, n: int) -> Envelope:
    return Envelope(id=f"{session}-{n}", session=session, text=f"m{n}", sender=Sender(id="t:u"))


@pytest.fixture
async def mailbox(redis_url: str) -> AsyncIterator[Mailbox]:
    redis = Redis.from_url(redis_url)
    yield Mailbox(redis, Jobs())
    await redis.aclose()


async def test_envelopes_count_until_committed_and_sessions_until_released(
    mailbox: Mailbox,
) -> None:
    assert await backlog(mailbox.redis) == Backlog(0, 0, 0)
    for n in range(3):
        await mailbox.submit(envelope("t:a", n))
    for n in range(2):
        await mailbox.submit(envelope("t:b", n))
    await mailbox.submit(envelope("t:b", 0))  # a redelivery: dropped, not counted
    assert await backlog(mailbox.redis) == Backlog(envelopes=5, sessions=2, running=0)

    token = await mailbox.take_lease("t:a", ttl=30)
    assert token is not None
    assert await backlog(mailbox.redis) == Backlog(envelopes=5, sessions=2, running=1)
    await mailbox.commit("t:a", token, await mailbox.peek("t:a"))
    assert await backlog(mailbox.redis) == Backlog(envelopes=4, sessions=2, running=1)
    await mailbox.commit("t:a", token, await mailbox.peek("t:a", 2))
    # Drained but not yet released: nothing waits there any more.
    assert await backlog(mailbox.redis) == Backlog(envelopes=2, sessions=1, running=0)
    assert await mailbox.release_if_empty("t:a", token) is True
    assert await backlog(mailbox.redis) == Backlog(envelopes=2, sessions=1, running=0)

    await mailbox.forget("t:b")
    assert await backlog(mailbox.redis) == Backlog(0, 0, 0)


async def test_every_page_of_a_large_armed_set_is_read_once(mailbox: Mailbox) -> None:
    sessions = [f"t:many:{i}" for i in range(250)]
    for i, session in enumerate(sessions):
        for n in range(1 + i % 3):
            await mailbox.submit(envelope(session, n))
    expected = sum(1 + i % 3 for i in range(len(sessions)))
    for page in (7, 100, 1000):
        found = await backlog(mailbox.redis, page=page)
        assert found == Backlog(envelopes=expected, sessions=len(sessions), running=0), page


async def test_the_exposition_shows_the_backlog_as_gauges(mailbox: Mailbox) -> None:
    for n in range(4):
        await mailbox.submit(envelope("t:shown", n))
    shown = {
        sample.name: (family.type, sample.value)
        for family in text_string_to_metric_families(
            (await metrics.exposition(mailbox.redis)).decode()
        )
        for sample in family.samples
    }
    assert shown["parley_queue_depth"] == ("gauge", 4)
    assert shown["parley_sessions_waiting"] == ("gauge", 1)
    assert shown["parley_sessions_running"] == ("gauge", 0)
