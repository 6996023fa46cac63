"""A session runner on the test Redis and database, with the fake model (`rig`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.llm import FakeLLM
from tests.support.runner import Rig, runner_rig


@pytest.fixture
async def rig(redis_url: str, database_url: str, fake_llm: FakeLLM) -> AsyncIterator[Rig]:
    async with runner_rig(redis_url, database_url, fake_llm) as made:
        yield made
