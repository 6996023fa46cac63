"""Per-person limits on a real Redis: the minute's messages, the day's tokens, and the gate
that says so once per window."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from redis.asyncio import Redis

from adapters.chat.access import Gate
from adapters.chat.usage import limits_text
from bot.config.settings import Settings
from bot.people.limits import DAY_TTL, Limits, day, duration, until_midnight
from bot.redis import keys
from bot.vocabulary.runs import RunRecord, SessionInfo
from bot.vocabulary.usage import Usage
from tests.support.waiting import until

WAIT = re.compile(r"you can write again in (\d+) s\.$")


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, admins=["tg:9"], **values)


@pytest.fixture
async def limits(redis_client: Redis) -> Limits:
    return Limits(redis_client, settings())


async def test_the_default_lets_20_messages_a_minute_in_and_says_when_the_21st_may_come(
    limits: Limits,
) -> None:
    assert limits.settings.user_messages_per_minute == 20
    for n in range(20):
        assert await limits.check("tg:1", f"tg:{n}") is None
    over = await limits.check("tg:1", "tg:20")
    assert over is not None and over.kind == "messages"
    assert over.text.startswith("You have sent 20 messages in the last minute; ")
    wait = WAIT.search(over.text)
    assert wait is not None and 55 <= int(wait[1]) <= 60 and 55 <= over.retry_seconds <= 60
    assert await limits.check("tg:1", "tg:3") is None  # a redelivery is not counted again
    assert await limits.check("tg:1", "tg:21") is not None  # the refusals were not counted
    assert await limits.redis.zcard(keys.limit("tg:1", "messages")) == 20
    assert await limits.check("tg:2", "tg:22") is None  # another person is unaffected
    standing = await limits.standing("tg:1")
    assert (standing.messages_left, standing.messages_limit) == (0, 20)


async def test_web_processes_checking_at_once_let_exactly_the_limit_in(redis_url: str) -> None:
    clients = [Redis.from_url(redis_url) for _ in range(4)]  # as if four web processes
    try:
        per_process = [Limits(client, settings()) for client in clients]
        verdicts = await asyncio.gather(
            *(per_process[n % 4].check("slack:U1", f"m{n}") for n in range(60))
        )
    finally:
        for client in clients:
            await client.aclose()
    assert sum(verdict is None for verdict in verdicts) == 20


async def test_the_window_slides_and_the_wait_is_until_room_is_made(
    redis_client: Redis,
) -> None:
    limits = Limits(redis_client, settings(user_messages_per_minute=3))
    for n in range(3):
        assert await limits.check("tg:1", f"m{n}") is None
    seconds, micros = await redis_client.time()
    now_ms = seconds * 1000 + micros // 1000
    await redis_client.zadd(keys.limit("tg:1", "messages"), {"m0": now_ms - 59_000})
    over = await limits.check("tg:1", "m3")
    assert over is not None and over.retry_after <= 1.0

    async def admitted() -> bool:
        return await limits.check("tg:1", "m3") is None

    # asked again after the wait the refusal named
    await until(admitted, "the oldest message leaving the window", every=over.retry_after)
    assert (await limits.standing("tg:1")).messages_left == 0


async def test_admins_are_exempt_and_leave_nothing_behind(limits: Limits) -> None:
    for n in range(30):
        assert await limits.check("tg:9", f"m{n}") is None
    assert await limits.redis.keys("parley:limit:*") == []
    assert limits_text(await limits.standing("tg:9")) == "Your limits: none (you are an admin)."


async def test_a_turn_counts_once_and_the_budget_refuses_once_it_is_used(
    redis_client: Redis,
) -> None:
    limits = Limits(redis_client, settings(user_tokens_per_day=1000))
    assert await limits.charge("tg:1", "tg:100", 600) == 600
    assert await limits.charge("tg:1", "tg:100", 600) == 600  # recorded again after a crash
    assert await limits.check("tg:1", "m1") is None  # under the budget
    assert await limits.charge("tg:1", "tg:101", 500) == 1100  # the crossing turn finishes
    over = await limits.check("tg:1", "m2")
    assert over is not None and over.kind == "tokens"
    assert over.text.startswith("You have used your 1,000 tokens for today; the budget renews")
    assert over.text.endswith(f"at 00:00 UTC, in {duration(over.retry_after)}.")
    assert 0 < over.retry_after <= 86_400
    assert await limits.check("tg:2", "m3") is None  # another person's budget is their own
    key = keys.limit("tg:1", f"tokens:{day(datetime.now(UTC))}")
    assert DAY_TTL - 60 < await redis_client.ttl(key) <= DAY_TTL
    standing = await limits.standing("tg:1")
    assert standing.messages_left == 20 - 1  # the refused message was not counted
    assert "; 0 of 1,000 tokens left today (renews at 00:00 UTC, in " in limits_text(standing)


async def test_a_recorded_turn_counts_its_tokens_in_cached_and_out(limits: Limits) -> None:
    usage = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=100, cache_write_tokens=7)
    record = RunRecord(
        where=SessionInfo("tg:1", "tg", "private", ""),
        envelope_ids=["tg:7", "tg:8"],
        trigger="message",
        sender="tg:1",
        model="m",
        finish_reason="end_turn",
        iterations=1,
        usage=usage,
        started_at=0,
        finished_at=1,
    )
    await limits.charge_turn(record)
    await limits.charge_turn(record)
    assert await limits.tokens_used("tg:1") == 122


async def test_the_gate_tells_once_per_window_and_commands_never_count(
    redis_client: Redis,
) -> None:
    gate = Gate(settings(user_messages_per_minute=1), redis_client)
    assert (await gate.take_message("tg:1", "a")).admitted
    first, again = await gate.take_message("tg:1", "b"), await gate.take_message("tg:1", "c")
    assert not first.admitted and first.tell is not None
    assert first.tell.startswith("You have sent 1 message in the last minute; ")
    assert not again.admitted and again.tell is None
    assert 0 < await redis_client.ttl(keys.limit("tg:1", "told:messages")) <= 60
    assert (await gate.admit("tg:1", "chat 1")).admitted  # commands pass the gate as before


def test_waits_read_as_a_person_reads_them() -> None:
    assert [duration(s) for s in (0.2, 35, 59.5, 61, 720, 11_520, 7200)] == [
        "1 s",
        "35 s",
        "60 s",
        "2 min",
        "12 min",
        "3 h 12 min",
        "2 h",
    ]
    assert until_midnight(datetime(2025, 3, 1, 20, 48, tzinfo=UTC)) == 3 * 3600 + 12 * 60
    assert day(datetime(2025, 3, 1, 23, 59, tzinfo=UTC)) == "2025-03-01"
