"""Which scope a conversation's memories are, and how they reach the system prompt."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import event

from bot.agent.deps import TurnRequest
from bot.agent.prompt import Bootstrap, PromptBuilder
from bot.config.settings import Settings
from bot.memory.prompt import BUDGET, within_budget
from bot.memory.scope import memory_scope
from bot.session.deps import SessionStores
from bot.session.reads import prepared, read_for
from bot.session.turn import tool_context
from bot.store.engine import make_engine
from bot.store.memory import Memories, Memory
from bot.tools.base import ToolContext
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.state import SessionState

ANN = Sender(id="tg:1", name="Ann")
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)


def ctx(session: str, kind: str, user: Sender = ANN) -> ToolContext:
    return ToolContext(session, user, chat_kind=kind)


async def remembering(stores: SessionStores, text: str, state: SessionState) -> TurnRequest:
    """Ann's message in her private chat, prepared the way the session runner does it."""
    asked = Envelope(id="e1", session="tg:1", text=text, sender=ANN, platform="tg")
    reads = await read_for(asked, stores)
    turn = tool_context(asked, Settings(_env_file=None), reads.preferences)
    return await prepared(TurnRequest(turn, text=text), state, reads, stores.recall)


@pytest.mark.parametrize(
    ("session", "kind", "user", "scope"),
    [
        ("tg:1", "private", "tg:1", "tg:1"),
        ("tg:-100", "group", "tg:1", "chat:tg:-100"),
        ("tg:-100:7", "topic", "tg:1", "chat:tg:-100"),
        ("slack:T1:D1", "private", "slack:T1:U1", "slack:T1:U1"),
        ("slack:T1:D1:17.5", "private", "slack:T1:U1", "slack:T1:U1"),
        ("slack:T1:C1:17.5", "thread", "slack:T1:U1", "chat:slack:T1:C1"),
        ("http:" + "a" * 32, "private", "http:token", "http:token"),
    ],
)
def test_the_scope_is_the_person_in_private_and_the_chat_elsewhere(
    session: str, kind: str, user: str, scope: str
) -> None:
    assert memory_scope(ctx(session, kind, Sender(id=user))) == scope


def memory(number: int, text: str) -> Memory:
    return Memory(number, "tg:1", text, NOW)


def test_relevant_memories_come_first_and_all_are_listed_by_number() -> None:
    relevant = [memory(9, "likes green tea"), memory(2, "sister Eve")]
    recent = [memory(12, "x" * (BUDGET - 20)), memory(9, "likes green tea"), memory(8, "late")]
    assert within_budget(relevant, recent) == ["#2 sister Eve", "#8 late", "#9 likes green tea"]
    assert within_budget([], [memory(1, "a"), memory(2, "b")]) == ["#1 a", "#2 b"]


def test_memories_are_a_part_after_the_bootstrap_and_only_when_there_are_some() -> None:
    builder = PromptBuilder(Bootstrap.fixed("You are Parley."))
    plain = builder.system(ctx("tg:1", "private"), NOW)
    assert len(plain) == 2 and "What you remember" not in "".join(p.text for p in plain)
    parts = builder.system(ctx("tg:1", "private"), NOW, ("#1 likes green tea",))
    assert [p.stable for p in parts] == [True, False, False]
    assert parts[0].text == plain[0].text  # the cached bootstrap is untouched
    assert parts[1].text.startswith("## What you remember\n")
    assert parts[1].text.endswith("\n- #1 likes green tea")


async def test_memories_that_cannot_be_read_leave_the_turn_without_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = make_engine("postgresql://parley:hunter2@127.0.0.1:1/parley")
    try:
        never_used = Redis.from_url("redis://127.0.0.1:1")
        services = SessionStores.open(engine, never_used)
        with caplog.at_level(logging.WARNING):
            request = await remembering(services, "tea", SessionState())
        assert (request.memory, request.allowed, request.ctx.preferences.model) == ((), (), None)
    finally:
        await engine.dispose()
    assert "could not read what the turn of tg:1 in tg:1 needs" in caplog.text
    assert "hunter2" not in caplog.text


async def test_a_turn_carries_the_last_turns_memories_until_they_change(
    services: SessionStores, memories: Memories
) -> None:
    """Chosen again per message, the relevant ones would change the system prompt, and with
    it the provider's cached conversation, at every message."""
    for n in range(25):
        await memories.add("tg:1", f"fact {n}: the {'blue' if n % 2 else 'red'} box")
    state = SessionState()
    first = await remembering(services, "the red box?", state)
    second = await remembering(services, "and the blue one?", state)
    assert first.memory and second.memory == first.memory
    await memories.add("tg:1", "fact 25: the green box")
    third = await remembering(services, "and the green one?", state)
    assert any("green" in line for line in third.memory) and third.memory != first.memory
    assert len(await memories.forget("tg:1", "green")) == 1
    fourth = await remembering(services, "and the green one?", state)
    assert not any("green" in line for line in fourth.memory)
    fresh = await remembering(services, "the blue box?", SessionState())  # /new
    assert fresh.memory != first.memory


async def test_a_scope_without_memories_costs_a_turn_one_read(
    services: SessionStores, memories: Memories
) -> None:
    """A new session's first turn is prepared while its person waits for the first word;
    with nothing to choose from, it does not search and list an empty scope as well."""
    statements: list[str] = []

    def executed(*args: Any) -> None:
        statements.append(args[2])

    event.listen(memories.engine.sync_engine, "before_cursor_execute", executed)
    first = await remembering(services, "the red box?", SessionState())
    memory_reads = [sql for sql in statements if "memories" in sql]
    assert (first.memory, len(memory_reads)) == ((), 1)
    await memories.add("tg:1", "the red box is in the attic")
    statements.clear()
    second = await remembering(services, "the red box?", SessionState())
    memory_reads = [sql for sql in statements if "memories" in sql]
    assert second.memory and len(memory_reads) == 3  # the count, the search, the newest


async def test_a_turns_reads_are_one_statement(services: SessionStores, memories: Memories) -> None:
    """The turn's first event waits for these reads: one statement on one connection,
    however many things the turn is prepared with."""
    await memories.add("tg:1", "the red box is in the attic")
    await services.grants.add("tg:1", "tg:1", ["shell", "calculator"], "tg:1")
    await services.people.set("tg:1", {"language": "Welsh", "timezone": "Europe/London"})
    await services.chats.set_instruction("tg:1", "be brief")
    await services.chats.switch("tg:1", "web_fetch", on=False, by="tg:1")
    statements: list[str] = []

    def executed(*args: Any) -> None:
        statements.append(args[2])

    event.listen(memories.engine.sync_engine, "before_cursor_execute", executed)
    asked = Envelope(id="e1", session="tg:1", text="hi", sender=ANN, platform="tg")
    reads = await read_for(asked, services)
    assert len(statements) == 1
    assert reads.allowed == ("calculator", "shell")
    assert (reads.preferences.language, reads.preferences.timezone) == ("Welsh", "Europe/London")
    assert reads.memories is not None and reads.memories[0] == 1
    assert (reads.chat.instruction, reads.chat.tools_off) == ("be brief", frozenset({"web_fetch"}))
