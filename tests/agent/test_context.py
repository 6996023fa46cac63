"""Context management: compaction bounds the request, caching makes long chats cheap."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.agent.compaction import IMAGE_TOKENS, SUMMARY_PREFIX, estimate_tokens
from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.assembly.agent import build_agent
from bot.files.store import FileStore
from bot.tools.builtin import builtin_tools
from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import (
    MakeAgent,
    Sleeps,
    collect,
    completed,
    context,
    make_settings,
    of_type,
)
from tests.fakes.llm import Fail, FakeLLM, RecordedRequest, Reply, ToolCallSpec
from tests.support.images import image_bytes

WINDOW, THRESHOLD = 8000, 0.5  # a small window; the agents have only the built-in tools, whose
# schemas leave room for messages in it
BUDGET_CHARS = int(WINDOW * THRESHOLD) * 4


def is_summary_request(request: RecordedRequest) -> bool:
    return "condense chat transcripts" in json.dumps(request.body.get("system", request.body))


def chatty(request: RecordedRequest) -> Reply:
    if is_summary_request(request):
        return Reply(text="The user asked numbered questions; the assistant answered each.")
    return Reply(text="word " * 250)


async def long_chat(fake: FakeLLM, make_agent: MakeAgent, turns: int) -> list[ev.AgentEvent]:
    agent = make_agent(
        builtin_tools(), context_window=WINDOW, compact_threshold=THRESHOLD, compact_keep_turns=2
    )
    state = SessionState()
    events: list[ev.AgentEvent] = []
    for n in range(turns):
        events += await collect(agent, state, f"question number {n}: " + "please " * 100)
    assert fake.rejected == []
    return events


async def test_compaction_bounds_every_request(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    fake_llm.responder = chatty
    events = await long_chat(fake_llm, make_agent, 30)
    chat_requests = [r for r in fake_llm.requests if not is_summary_request(r)]
    sizes = [len(json.dumps(r.body)) for r in chat_requests]
    assert len(chat_requests) == 30
    # Without compaction the 30th request would carry all 30 turns (~60,000 characters).
    assert max(sizes) < BUDGET_CHARS * 1.25, sizes
    compactions = of_type(events, ev.Compacted)
    assert len(compactions) >= 3 and all(c.summarized for c in compactions)
    assert all(c.tokens_after < c.tokens_before for c in compactions)
    last = json.dumps(chat_requests[-1].body)
    assert SUMMARY_PREFIX.strip() in last and "question number 29" in last
    assert "question number 28" in last  # the recent turns stay verbatim
    assert "question number 5:" not in last


async def test_a_summary_is_dated_by_the_oldest_turn_it_folds(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """What a summary says was said when the turns it folds were, an earlier summary's
    included: retention (and the record) go by that date, not by when it was written."""
    fake_llm.responder = chatty
    agent = make_agent(
        builtin_tools(), context_window=WINDOW, compact_threshold=THRESHOLD, compact_keep_turns=2
    )
    state = SessionState()
    events = await collect(agent, state, "question number 0: " + "please " * 100)
    first = state.messages[0].at
    for n in range(1, 20):
        events += await collect(agent, state, f"question number {n}: " + "please " * 100)
    assert len(of_type(events, ev.Compacted)) >= 2
    summary = state.messages[0]
    assert summary.summary and summary.at == first
    assert all(message.at >= first for message in state.messages[1:])


async def test_failed_summary_falls_back_to_dropping(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    def no_summaries(request: RecordedRequest) -> Reply | Fail:
        if is_summary_request(request):
            return Fail(400, "invalid_request_error", "summaries are broken today")
        return chatty(request)

    fake_llm.responder = no_summaries
    events = await long_chat(fake_llm, make_agent, 20)
    compactions = of_type(events, ev.Compacted)
    assert compactions and not any(c.summarized for c in compactions)
    sizes = [len(json.dumps(r.body)) for r in fake_llm.requests if not is_summary_request(r)]
    assert max(sizes) < BUDGET_CHARS * 1.25
    assert completed(events).finish_reason == "end_turn"


async def test_one_long_turn_blanks_old_tool_output(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(builtin_tools(), context_window=WINDOW, compact_threshold=THRESHOLD)
    steps = iter(range(100))

    def tool_heavy(request: RecordedRequest) -> Reply:
        n = next(steps)
        if n < 12:
            return Reply(
                tool_calls=[ToolCallSpec("calculator", {"expression": f"{n}*1" + "+0" * 300})]
            )
        return Reply(text="done")

    fake_llm.responder = tool_heavy
    events = await collect(agent, SessionState(), "do a lot")
    assert completed(events).text == "done"
    sizes = [len(json.dumps(r.body)) for r in fake_llm.requests if not is_summary_request(r)]
    assert max(sizes) < BUDGET_CHARS * 1.25
    assert "[tool output removed to save space]" in json.dumps(fake_llm.requests[-1].body)
    assert fake_llm.rejected == []


@pytest.fixture
async def caching_llm() -> AsyncIterator[FakeLLM]:
    async with FakeLLM(cache_min_tokens=1024) as fake:
        yield fake


async def test_multi_turn_chat_reads_mostly_from_cache(caching_llm: FakeLLM) -> None:
    built = build_agent(make_settings(caching_llm, "anthropic"))
    minutes = iter(range(0, 10_000, 7))  # each model call happens 7 minutes after the last

    def clock() -> datetime:
        return datetime(2026, 11, 22, 9, 0, tzinfo=UTC) + timedelta(minutes=next(minutes))

    agent = Agent(replace(built.deps, clock=clock))
    state = SessionState()
    caching_llm.responder = lambda _: Reply(text="a considered answer " * 40)
    usages = []
    try:
        for n in range(6):
            events = await collect(agent, state, f"message {n} " + "detail " * 60)
            usages.append(completed(events).usage)
    finally:
        await agent.aclose()
    last = usages[-1]
    assert last.cache_read_tokens > 0.7 * last.prompt_tokens, usages
    assert sum(u.cache_read_tokens for u in usages[2:]) > 0.6 * sum(
        u.prompt_tokens for u in usages[2:]
    )
    assert caching_llm.rejected == []


async def test_images_count_for_what_the_model_reads_and_are_named_in_the_summary(
    fake_llm: FakeLLM, make_agent: MakeAgent, tmp_path: Path
) -> None:
    """A photo is a reference of a few hundred bytes in the context but some 1,600 tokens
    to the model: three photos pass half an 8,000-token window, so the turns are folded,
    and the summary is told which files they held."""
    store = FileStore(tmp_path)
    fake_llm.responder = lambda request: Reply(
        text="notes" if is_summary_request(request) else "A photo."
    )
    agent = make_agent(
        context_window=WINDOW, compact_threshold=THRESHOLD, compact_keep_turns=1,
        files_dir=tmp_path,
    )  # fmt: skip
    state = SessionState()
    events: list[ev.AgentEvent] = []
    for n in range(4):
        photo = store.put(image_bytes((64 + n, 48), "PNG"), "image/png", f"photo{n}.png")
        events += await collect(agent, state, f"and this, {n}?", attachments=(photo,))
    assert of_type(events, ev.Compacted)
    [summary, *_] = [r for r in fake_llm.requests if is_summary_request(r)]
    assert "sent a file: photo0.png (image/png)" in json.dumps(summary.body)
    assert estimate_tokens([state.messages[-2]]) >= IMAGE_TOKENS


# The windows the APIs enforce for the models below, as the registry knows them: the default
# model's is larger than that of the model a chat switches to (or falls back to).
WINDOWS = {"claude": 200_000, "gpt-4o": 128_000}
SMALLER = "gpt-4o"


def part(n: int) -> str:
    """A long message, some 35,000 tokens: four of them fill the smaller window."""
    return f"part {n}: " + "word " * 28_000


def noting(request: RecordedRequest) -> Reply:
    if is_summary_request(request):
        return Reply(text="The user sent long parts; the assistant noted each.")
    return Reply(text="noted")


async def long_parts(
    fake: FakeLLM, turns: int, model: str | None = None, **settings: Any
) -> tuple[list[ev.AgentEvent], SessionState]:
    """`turns` long parts sent to an agent with the default settings, on `model` if given."""
    agent = build_agent(make_settings(fake, "anthropic", **settings), tools=builtin_tools())
    agent = Agent(replace(agent.deps, sleep=Sleeps()))  # retries' waits recorded, not waited
    state = SessionState()
    events: list[ev.AgentEvent] = []
    try:
        for n in range(turns):
            request = TurnRequest(context(agent), text=part(n), model=model)
            events += [event async for event in agent.run(state, request)]
    finally:
        await agent.aclose()
    return events, state


async def test_a_chat_on_a_model_with_a_smaller_window_compacts_in_time() -> None:
    """Default settings; a chat switched (`/model`) to a model whose window is smaller than
    the default's. Compaction is sized for the model the call goes to: the context is
    folded before it passes that window, and no call is refused as too long."""
    async with FakeLLM(context_windows=WINDOWS) as fake:
        fake.responder = noting
        events, _ = await long_parts(fake, 5, model=SMALLER)
    assert fake.rejected == []
    assert [c.finish_reason for c in of_type(events, ev.Completed)] == ["end_turn"] * 5
    assert of_type(events, ev.Compacted)
    assert {r.body["model"] for r in fake.requests} == {SMALLER}  # the summaries too


async def test_a_fallback_with_a_smaller_window_is_sent_a_context_that_fits() -> None:
    """Default settings but a fallback model with a smaller window. The default takes the
    first turns; it is overloaded when the context holds some 140,000 tokens, within its
    own window but not the fallback's: the context is folded for the fallback (by the
    fallback, as the default is overloaded) before the call goes there."""
    overloaded = asyncio.Event()

    def brain(request: RecordedRequest) -> Reply | Fail:
        if overloaded.is_set() and request.body["model"].startswith("claude"):
            return Fail(529, "overloaded_error", "Overloaded")
        return noting(request)

    async with FakeLLM(context_windows=WINDOWS) as fake:
        fake.responder = brain
        _, state = await long_parts(fake, 3, fallback_models=[SMALLER])
        assert not any(is_summary_request(r) for r in fake.requests)  # within the default's
        overloaded.set()
        agent = build_agent(
            make_settings(fake, "anthropic", fallback_models=[SMALLER]), tools=builtin_tools()
        )
        agent = Agent(replace(agent.deps, sleep=Sleeps()))
        try:
            request = TurnRequest(context(agent), text=part(3))
            events = [event async for event in agent.run(state, request)]
        finally:
            await agent.aclose()
    assert fake.rejected == []
    assert completed(events).finish_reason == "end_turn" and completed(events).model == SMALLER
    kinds = [type(e) for e in events if isinstance(e, ev.FailedOver | ev.Compacted)]
    assert kinds == [ev.FailedOver, ev.Compacted]
    summaries = [r.body["model"] for r in fake.requests if is_summary_request(r)]
    assert summaries == [SMALLER]
