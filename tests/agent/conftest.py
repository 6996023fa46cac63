"""Agents wired to the fake model server through the real SDKs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.assembly.agent import build_agent
from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Sender
from bot.vocabulary.files import FileRef
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY, FakeLLM

MODELS = {"anthropic": "claude-test", "openai": "gpt-test"}


class Sleeps(list[float]):
    """Records backoff delays instead of waiting them out."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_settings(fake: FakeLLM, api: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model": MODELS[api],
        "anthropic_api_key": ANTHROPIC_KEY,
        "anthropic_base_url": fake.anthropic_base_url,
        "openai_api_key": OPENAI_KEY,
        "openai_base_url": fake.openai_base_url,
    }
    return Settings(**(values | overrides))


MakeAgent = Callable[..., Agent]


@pytest.fixture(params=["anthropic", "openai"])
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def make_agent(fake_llm: FakeLLM, api: str, sleeps: Sleeps) -> AsyncIterator[MakeAgent]:
    built: list[Agent] = []

    def make(tools: list[Tool] | None = None, **overrides: Any) -> Agent:
        agent = build_agent(make_settings(fake_llm, api, **overrides), tools=tools, sleep=sleeps)
        built.append(agent)
        return agent

    yield make
    for agent in built:
        await agent.aclose()


def context(agent: Agent, user: str = "console:ann") -> ToolContext:
    return ToolContext(
        "test:session",
        Sender(id=user, name="Ann"),
        default_timezone=agent.deps.settings.timezone,
    )


async def collect(
    agent: Agent,
    state: SessionState,
    text: str | None = None,
    *,
    decisions: dict[str, bool] | None = None,
    answers: dict[str, str] | None = None,
    cancel: Any = None,
    on_event: Callable[[ev.AgentEvent], Awaitable[None]] | None = None,
    allowed: tuple[str, ...] = (),
    config: RunConfig | None = None,
    attachments: tuple[FileRef, ...] = (),
) -> list[ev.AgentEvent]:
    request = TurnRequest(
        context(agent),
        text=text,
        attachments=attachments,
        decisions=decisions,
        answers=answers,
        allowed=allowed,
        config=config or RunConfig(),
    )
    events: list[ev.AgentEvent] = []
    async for event in agent.run(state, request, cancel=cancel):
        events.append(event)
        if on_event is not None:
            await on_event(event)
    return events


def shown_text(events: list[ev.AgentEvent]) -> str:
    """What a consumer shows after applying resets: text since the last reset of each call."""
    text = ""
    for event in events:
        if isinstance(event, ev.TextReset):
            text = text[: text.rfind("\x00") + 1] if "\x00" in text else ""
        elif isinstance(event, ev.Iteration):
            text += "\x00"
        elif isinstance(event, ev.TextDelta):
            text += event.text
    return text.replace("\x00", "")


def of_type(events: list[ev.AgentEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def completed(events: list[ev.AgentEvent]) -> ev.Completed:
    last = events[-1]
    assert isinstance(last, ev.Completed)
    return last
