"""remember, forget and recall as the model calls them: through the tool executor, with the
database's memories, in the scope the conversation is in."""

from __future__ import annotations

import pytest

from bot.assembly.catalog import standard_tools
from bot.config.settings import Settings
from bot.memory.recall import Recall
from bot.memory.tools import memory_tools
from bot.store.memory import MAX_PER_SCOPE, Memories
from bot.store.memory_vectors import MemoryVectors
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.vocabulary.envelope import Sender
from tests.support.databases import call

ANN = Sender(id="tg:1", name="Ann")
BOB = Sender(id="tg:2", name="Bob")


@pytest.fixture
def executor(memories: Memories) -> ToolExecutor:
    registry = ToolRegistry(memory_tools(Recall(memories, MemoryVectors(memories.engine))))
    return ToolExecutor(registry, timeout=30, concurrency=4, output_limit=10_000)


def context(user: Sender, session: str, kind: str) -> ToolContext:
    return ToolContext(session_key=session, user=user, platform="telegram", chat_kind=kind)


async def test_remember_recall_and_forget_in_a_private_chat(
    executor: ToolExecutor, memories: Memories
) -> None:
    ann = context(ANN, "tg:1", "private")
    saved = await call(executor, ann, "remember", fact="Ann likes green tea")
    assert (saved.is_error, saved.content) == (False, "Saved to memory: #1 Ann likes green tea")
    again = await call(executor, ann, "remember", fact="Ann likes  green tea")
    assert again.content == "Already in memory: #1 Ann likes green tea"
    await call(executor, ann, "remember", fact="Ann's sister is Eve")
    found = await call(executor, ann, "recall", query='tea" OR *')
    assert (found.is_error, found.content) == (False, "#1 Ann likes green tea")
    assert (await call(executor, ann, "recall")).content == (
        "#2 Ann's sister is Eve\n#1 Ann likes green tea"
    )
    assert (await call(executor, ann, "forget", what="#2")).content == (
        "Forgot: #2 Ann's sister is Eve"
    )
    assert (await call(executor, ann, "forget", what="green tea")).content == (
        "Forgot: #1 Ann likes green tea"
    )
    nothing = await call(executor, ann, "forget", what="coffee")
    assert nothing.content == "Nothing in memory matches 'coffee'; recall shows what is kept."
    assert (await call(executor, ann, "recall")).content == "Memory is empty."
    assert await memories.all(ANN.id) == []


async def test_a_group_s_memories_and_a_person_s_never_meet(
    executor: ToolExecutor, memories: Memories
) -> None:
    private = context(ANN, "tg:1", "private")
    topic = context(ANN, "tg:-100:7", "topic")
    other_topic = context(BOB, "tg:-100:8", "topic")
    await call(executor, private, "remember", fact="Ann likes green tea")
    await call(executor, topic, "remember", fact="The team drinks black tea")
    assert (await call(executor, topic, "recall", query="tea")).content == (
        "#2 The team drinks black tea"
    )  # not Ann's own, though Ann asks
    assert (await call(executor, other_topic, "recall", query="tea")).content == (
        "#2 The team drinks black tea"
    )  # the chat's topics share the chat's memories
    assert (await call(executor, private, "recall", query="tea")).content == (
        "#1 Ann likes green tea"
    )
    bob = context(BOB, "tg:2", "private")
    assert (await call(executor, bob, "recall", query="tea")).content == (
        "Nothing in memory matches."
    )
    refused = await call(executor, topic, "forget", what="1")  # Ann's own, by its number
    assert refused.content.startswith("Nothing in memory matches '1'")
    assert [m.text for m in await memories.all(ANN.id)] == ["Ann likes green tea"]
    assert [m.text for m in await memories.all("chat:tg:-100")] == ["The team drinks black tea"]


async def test_bad_input_is_answered_in_one_line(executor: ToolExecutor) -> None:
    ann = context(ANN, "tg:1", "private")
    long = await call(executor, ann, "remember", fact="x" * 501)
    assert (long.is_error, long.content) == (
        True,
        "Invalid arguments for remember: fact: String should have at most 500 characters",
    )
    blank = await call(executor, ann, "remember", fact="   ")
    assert (blank.is_error, blank.content) == (
        True,
        "There is nothing to remember: the text is empty.",
    )
    vague = await call(executor, ann, "forget", what="?!")
    assert (vague.is_error, vague.content) == (
        True,
        "Say which memory to forget: its number, or its words.",
    )


async def test_the_cap_is_told_to_the_model(executor: ToolExecutor, memories: Memories) -> None:
    ann = context(ANN, "tg:1", "private")
    for n in range(MAX_PER_SCOPE):
        await memories.add(ANN.id, f"fact {n}")
    full = await call(executor, ann, "remember", fact="one more")
    assert (full.is_error, full.content) == (
        True,
        f"Memory is full ({MAX_PER_SCOPE} memories here); forget something first.",
    )


async def test_without_the_database_s_stores_the_tools_are_not_offered() -> None:
    """`parley chat` and `parley mcp` have no stores: the model is not offered the tools, and
    a call of one anyway is answered as a call of a tool that does not exist."""
    registry = ToolRegistry(standard_tools(Settings(_env_file=None)))
    console = ToolExecutor(registry, timeout=30, concurrency=4, output_limit=10_000)
    calls: dict[str, dict[str, object]] = {"remember": {"fact": "x"}, "forget": {"what": "1"}}
    assert not {*calls, "recall"} & {spec.name for spec in registry.specs}
    for name, arguments in {**calls, "recall": {}}.items():
        outcome = await call(console, context(ANN, "tg:1", "private"), name, **arguments)
        assert outcome.is_error, name
        assert outcome.content.startswith(f"Unknown tool {name!r}. Available tools: "), name
