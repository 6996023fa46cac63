"""An HTTP session id is exactly what `POST /api/sessions` returns (32 lowercase hex
digits): any other id is unknown at once, without asking Redis or the database."""

from __future__ import annotations

import logging
from urllib.parse import quote

import pytest
from redis.asyncio import Redis

from tests.integration.http.test_bad_input import clean_log
from tests.support.stack import Stack

NOT_IDS = {
    "arabic-indic-digits": "٣" * 32,
    "superscript-digits": "²" * 32,
    "fullwidth-letters": "ａ" * 32,
    "accented-letters": "é" * 32,
    "upper-case-hex": "A" * 32,
    "one-short": "a" * 31,
}


async def lookups(redis: Redis) -> int:
    """How many EXISTS commands this Redis has run: a session id is looked up with one."""
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_exists", {}).get("calls", 0))


@pytest.mark.parametrize("name", list(NOT_IDS))
async def test_an_id_that_is_not_lowercase_hex_is_unknown_without_a_lookup(
    stack: Stack, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    caplog.set_level(logging.INFO)
    path = f"/api/sessions/{quote(NOT_IDS[name])}"
    redis = Redis.from_url(stack.redis_url)
    try:
        async with stack.client() as client:
            real = await stack.session(client)
            before = await lookups(redis)
            answers = [
                await client.post(f"{path}/messages", json={"text": "hi"}),
                await client.get(f"{path}/events"),
                await client.post(f"{path}/stop"),
            ]
            after = await lookups(redis)
            found = await client.post(f"/api/sessions/{real}/stop")
        for answer in answers:
            assert answer.status_code == 404, answer.text
            assert answer.json() == {"error": "unknown session"}
        assert after == before  # refused before Redis was asked
        assert found.status_code == 202, found.text  # a real id is still found
        assert await redis.keys("parley:{*}:inbox") == []
    finally:
        await redis.aclose()
    clean_log(caplog)
