"""web_search against fakes of SearXNG, Brave and Tavily, through the real ToolExecutor."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.assembly.catalog import standard_tools
from bot.assembly.tool_settings import fetch_limits, search_service
from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.tools.web.tools import web_tools
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock
from tests.fakes.search import HITS, KEY, FakeSearch, Kind

pytestmark = pytest.mark.e2e


def settings(kind: Kind, base_url: str, **more: Any) -> Settings:
    key: dict[str, Any] = {} if kind == "searxng" else {"search_api_key": KEY}
    return Settings(search_backend=kind, search_url=base_url, **key, **more)


def web(settings: Settings) -> dict[str, Tool]:
    """The web tools as a worker builds them from `settings`, by name."""
    return {t.name: t for t in web_tools(fetch_limits(settings), search_service(settings))}


async def run(settings: Settings, query: str = "tidal power") -> ToolOutcome:
    search = web(settings)["web_search"]
    executor = ToolExecutor(
        ToolRegistry([search]), timeout=20, concurrency=2, output_limit=16_000, backoff=0.01
    )
    ctx = ToolContext("console:t", Sender(id="console:t"))
    call = ToolUseBlock(id="s1", name="web_search", input={"query": query})
    [outcome] = await executor.run_all([call], ctx, {})
    return outcome


@pytest.fixture(params=["searxng", "brave", "tavily"])
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeSearch]:
    async with FakeSearch(request.param) as server:
        yield server


async def test_each_backend_gives_a_numbered_list(
    fake: FakeSearch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    outcome = await run(settings(fake.kind, fake.base_url))
    assert not outcome.is_error, outcome.content
    assert outcome.content.startswith('<untrusted-data source="web_search">\n1. Tidal power')
    assert f"   {HITS[0][1]}\n   {HITS[0][2]}" in outcome.content
    assert "5. Ocean energy" in outcome.content and "6. " not in outcome.content
    assert "<strong>" not in outcome.content
    [seen] = fake.requests
    if fake.kind == "tavily":
        assert seen.body["query"] == "tidal power" and seen.body["max_results"] == 5
    else:
        assert seen.query["q"] == "tidal power"
    assert KEY not in outcome.content and KEY not in caplog.text


async def test_a_wrong_key_is_said_without_the_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for kind in ("brave", "tavily"):
        async with FakeSearch(kind, key="another-key") as fake:
            outcome = await run(settings(kind, fake.base_url))
        assert outcome.is_error
        assert "refused the search (401): the API key is missing, wrong" in outcome.content
        assert KEY not in outcome.content and KEY not in caplog.text
        assert len(fake.requests) == 1  # not tried again


async def test_a_503_twice_then_200_is_retried_and_succeeds() -> None:
    async with FakeSearch("brave") as fake:
        fake.fail.extend([503, 503])
        outcome = await run(settings("brave", fake.base_url))
    assert not outcome.is_error, outcome.content
    assert "1. Tidal power" in outcome.content
    assert len(fake.requests) == 3


@pytest.mark.parametrize(
    ("status", "words"), [(404, "rejected the search (404)"), (429, "rate limiting")]
)
async def test_a_client_error_is_not_retried(status: int, words: str) -> None:
    async with FakeSearch("tavily") as fake:
        fake.fail.append(status)
        outcome = await run(settings("tavily", fake.base_url))
    assert outcome.is_error and words in outcome.content
    assert len(fake.requests) == 1


async def test_searxng_without_its_json_api_says_so() -> None:
    async with FakeSearch("searxng") as fake:
        fake.fail.append(403)
        outcome = await run(settings("searxng", fake.base_url))
    assert "JSON API may be off" in outcome.content
    assert len(fake.requests) == 1


async def test_an_unreachable_backend_is_tried_again_then_reported() -> None:
    async with FakeSearch("searxng") as fake:
        gone = fake.base_url
    outcome = await run(settings("searxng", gone))
    assert outcome.is_error and "Could not reach SearXNG" in outcome.content


def test_search_is_offered_only_when_a_backend_is_configured() -> None:
    names = [t.name for t in standard_tools(Settings())]
    assert "web_fetch" in names and "web_search" not in names
    configured = standard_tools(settings("brave", "http://127.0.0.1:9"))
    assert {"web_fetch", "web_search"} <= {t.name for t in configured}
    tools = web(settings("brave", "http://127.0.0.1:9"))
    assert tools["web_fetch"].read_only and tools["web_fetch"].untrusted
    assert tools["web_search"].read_only and tools["web_search"].untrusted
