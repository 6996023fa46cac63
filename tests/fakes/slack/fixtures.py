"""Pytest fixture for the fake Slack."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.slack.server import FakeSlack


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake
