"""web_fetch as the model calls it: through the real ToolExecutor, in a thread of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.assembly.tool_settings import fetch_limits
from bot.config.settings import Settings
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.tools.web.tools import web_tools
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock
from tests.tools.web.servers import PageServer, Trap

pytestmark = pytest.mark.e2e


async def fetch(url: str, settings: Settings) -> ToolOutcome:
    tools = web_tools(fetch_limits(settings), None)  # as a worker builds it from `settings`
    executor = ToolExecutor(
        ToolRegistry(tools), timeout=30, concurrency=2, output_limit=16_000, backoff=0.01
    )
    ctx = ToolContext("console:t", Sender(id="console:t"))
    [outcome] = await executor.run_all(
        [ToolUseBlock(id="f1", name="web_fetch", input={"url": url})], ctx, {}
    )
    return outcome


@pytest.fixture
async def pages() -> AsyncIterator[PageServer]:
    async with PageServer() as server:
        yield server


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("localhost", "loopback"),
        ("10.0.0.1", "private"),
        ("169.254.169.254", "metadata"),
        ("metadata.google.internal", "metadata"),
        ("[fd00:ec2::254]", "metadata"),
    ],
)
async def test_with_default_settings_internal_hosts_are_refused(host: str, why: str) -> None:
    async with Trap("127.0.0.1") as trap:
        outcome = await fetch(f"http://{host}:{trap.port}/latest/meta-data/", Settings())
    assert outcome.is_error and outcome.content.startswith('<untrusted-data source="web_fetch">')
    assert "Refused: " in outcome.content and why in outcome.content
    assert trap.hits == []


async def test_an_allowed_page_comes_back_as_its_article(pages: PageServer) -> None:
    outcome = await fetch(f"{pages.url}/article", Settings(fetch_allow_hosts=["127.0.0.1"]))
    assert not outcome.is_error, outcome.content
    assert outcome.content.startswith(
        '<untrusted-data source="web_fetch">\nTitle: Tidal power in the Bay of Fundy'
    )
    assert "highest tides in the world" in outcome.content
    assert "CHEAP WIDGETS" not in outcome.content


async def test_a_503_is_tried_again_and_a_404_is_not(pages: PageServer) -> None:
    allowed = Settings(fetch_allow_hosts=["127.0.0.1"])
    outcome = await fetch(f"{pages.url}/flaky", allowed)
    assert not outcome.is_error and "steady now" in outcome.content
    assert pages.counts["/flaky"] == 3
    outcome = await fetch(f"{pages.url}/status/404", allowed)
    assert outcome.is_error and "answered 404 Not Found" in outcome.content
    assert pages.counts["/status/404"] == 1
