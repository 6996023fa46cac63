"""A quiet check-in's reply is held until its run ends: nothing reaches the chat when its
whole answer is the marker, everything does otherwise, and a decision that waits for the
person or a file shows at once. The egress every worker answers through (`PlatformEgress`)
over the HTTP platform's real stream in Redis."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from adapters.http.egress import HttpEgress
from bot.redis import keys
from bot.session.egress import PlatformEgress
from bot.tasks.model import NOTHING_TO_REPORT
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.usage import Usage

SESSION = "test:quiet"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


def run(*, quiet: bool = True, kind: str = "scheduled") -> Envelope:
    return Envelope(
        id="task:3:100", session=SESSION, kind=kind, text="check", sender=Sender(id="tg:1"),
        quiet=quiet,
    )  # fmt: skip


async def shown(redis: Redis) -> list[tuple[str, str | None]]:
    raw = await redis.xrange(keys.events(SESSION))
    events = [json.loads(fields[b"event"]) for _, fields in raw]
    return [(e["type"], e.get("text")) for e in events]


async def play(redis: Redis, envelope: Envelope, *pieces: str, answer: str = "") -> None:
    """A run that streams `pieces` and completes with `answer` (the whole text if none)."""
    stream = PlatformEgress(HttpEgress(redis), {}).open([envelope], fresh=True)
    for piece in pieces:
        await stream.send(ev.TextDelta(text=piece))
    done = ev.Completed(
        finish_reason=ev.FinishReason.END_TURN, iterations=1, usage=Usage(),
        text=answer or "".join(pieces),
    )  # fmt: skip
    await stream.send(done)
    await stream.close()


async def test_a_check_in_with_nothing_to_report_posts_nothing(redis: Redis) -> None:
    await play(redis, run(), "NOTHING_", "TO_REPORT")
    assert await shown(redis) == []
    await play(redis, run(), " NOTHING_TO_REPORT.\n")  # the model's stray dot and spaces
    assert await shown(redis) == []


async def test_a_check_in_with_news_posts_it_all(redis: Redis) -> None:
    await play(redis, run(), "The build ", "failed.")
    said = "The build failed."
    assert await shown(redis) == [("text_delta", said), ("completed", said)]


async def test_a_check_in_that_reset_its_text_is_judged_by_its_last_answer(redis: Redis) -> None:
    stream = PlatformEgress(HttpEgress(redis), {}).open([run()])
    await stream.send(ev.TextDelta(text="Let me look."))
    await stream.send(ev.TextReset(reason="again"))
    await stream.send(ev.TextDelta(text=NOTHING_TO_REPORT))
    await stream.close()
    assert await shown(redis) == []


async def test_a_decision_that_waits_shows_at_once(redis: Redis) -> None:
    stream = PlatformEgress(HttpEgress(redis), {}).open([run()])
    await stream.send(ev.TextDelta(text="May I restart it?"))
    assert await shown(redis) == []
    asking = ev.ConfirmationRequired(confirmation_id="c1", calls=[])
    await stream.send(asking)
    assert ("confirmation_required", None) in await shown(redis)  # not held to the end
    await stream.close()
    assert (await shown(redis))[0] == ("text_delta", "May I restart it?")


async def test_other_runs_stream_as_ever(redis: Redis) -> None:
    await play(redis, run(quiet=False), NOTHING_TO_REPORT)  # a task that is not quiet
    assert ("text_delta", NOTHING_TO_REPORT) in await shown(redis)
