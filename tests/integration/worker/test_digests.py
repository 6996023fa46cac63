"""A worker writes yesterday's digest by itself, with the defaults: the day's record read by
the default model through the real SDK, the digest kept as its person's memory. Real worker,
Redis and database; fake model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.memory.digest import DIGESTER
from bot.store.digests import Digests
from bot.store.memory import Memories
from tests.fakes.llm import RecordedRequest, Reply
from tests.memory.test_digest import said
from tests.support.chat_stores import database_of
from tests.support.stack import Stack
from tests.support.waiting import until

ANN = "tg:1"


@pytest.mark.slow(12)  # the worker's first look for digests due comes 10 s after it starts
async def test_a_worker_writes_yesterdays_digest_by_itself(stack: Stack) -> None:
    yesterday = datetime.now(UTC) - timedelta(days=1)
    noon = yesterday.replace(hour=12, minute=0, second=0, microsecond=0)
    asked: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> Reply:
        asked.append(request)
        return Reply("Ann's sister Jo lands on Friday at 18:40.")

    stack.fake.responder = answer
    async with database_of(stack) as database:
        await said(database, ANN, ANN, [("My sister Jo lands Friday at 18:40", "Noted.")], noon)
        await stack.start_worker()

        async def digested() -> bool:
            return bool(await Digests(database.engine).written(ANN, noon.date()))

        await until(digested, "yesterday's digest written", within=40)
        [digest] = await Memories(database.engine).all(ANN)
    assert digest.day == noon.date()
    assert digest.text == f"{noon.date().isoformat()}: Ann's sister Jo lands on Friday at 18:40."
    [request] = asked
    assert request.system_text() == DIGESTER
    assert "My sister Jo lands Friday at 18:40" in str(request.body["messages"])
