"""Pytest fixtures for the fake model APIs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.llm.server import FakeLLM


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as fake:
        yield fake
