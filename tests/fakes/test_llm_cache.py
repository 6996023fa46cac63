"""The fake Anthropic API caches prompts the way the real one documents it, as the real SDK
reads it: breakpoints, the minimum cacheable prefix, prefix matching with its 20-block
lookback, the entries' lifetimes, and the usage fields."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply
from tests.fakes.llm.cache import tokens

MARK: dict[str, Any] = {"type": "ephemeral"}
LONG = "x" * 8000  # about 2,000 tokens: above the 1,024-token minimum


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def text(value: str, mark: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": value, **({"cache_control": mark} if mark else {})}


def conversation(turns: int, mark: dict[str, Any] | None = MARK) -> list[dict[str, Any]]:
    """`turns` user/assistant exchanges and a last user message carrying the breakpoint."""
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        messages += [
            {"role": "user", "content": [text(f"question {n}")]},
            {"role": "assistant", "content": [text(f"answer {n}")]},
        ]
    messages.append({"role": "user", "content": [text(f"question {turns}", mark)]})
    return messages


async def ask(
    fake: FakeLLM,
    messages: list[dict[str, Any]],
    system: list[dict[str, Any]],
    model: str = "claude-test",
) -> Any:
    """The usage of a streamed call, as the SDK's `message_start` gives it."""
    fake.enqueue(Reply(text="ok"))
    client = anthropic.AsyncAnthropic(
        api_key=ANTHROPIC_KEY, base_url=fake.anthropic_base_url, max_retries=0
    )
    try:
        create: Any = client.messages.create  # the blocks are plain dicts here
        stream = await create(
            model=model, max_tokens=10, system=system, messages=messages, stream=True
        )
        async with stream:
            starts = [e.message.usage async for e in stream if e.type == "message_start"]
    finally:
        await client.close()
    usage = starts[0]
    assert fake.requests[-1].usage is not None
    assert fake.requests[-1].usage.cache_read == usage.cache_read_input_tokens
    return usage


async def test_a_prefix_is_written_then_read_and_only_the_rest_is_input() -> None:
    async with FakeLLM() as fake:
        system = [text(LONG, MARK)]
        first = await ask(fake, conversation(0, None), system)
        second = await ask(fake, conversation(1, None), system)
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens >= 1024
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    # input_tokens is only what follows the cached prefix: the messages
    assert second.input_tokens < 100 and second.input_tokens > first.input_tokens


async def test_a_prefix_under_the_minimum_is_neither_written_nor_read() -> None:
    async with FakeLLM(cache_min_tokens=1024) as fake:
        system = [text("short", MARK)]
        await ask(fake, conversation(0), system)
        again = await ask(fake, conversation(0), system)
    assert again.cache_read_input_tokens == 0 and again.cache_creation_input_tokens == 0
    assert again.input_tokens >= tokens({"system": text("short")})


async def test_the_conversation_is_read_up_to_20_blocks_back_and_no_further() -> None:
    async with FakeLLM() as fake:
        system = [text(LONG)]
        await ask(fake, conversation(0), system)  # writes the prefix up to message 1
        near = await ask(fake, conversation(9), system)  # 18 blocks later
        await ask(fake, conversation(0), [text(LONG + "y")])
        far = await ask(fake, conversation(11), [text(LONG + "y")])  # 22 blocks later
    assert near.cache_read_input_tokens >= 2000
    assert far.cache_read_input_tokens == 0 and far.cache_creation_input_tokens >= 2000


async def test_a_changed_earlier_block_or_another_model_misses() -> None:
    async with FakeLLM() as fake:
        await ask(fake, conversation(0), [text(LONG, MARK)])
        other_model = await ask(fake, conversation(0), [text(LONG, MARK)], "claude-other")
        changed = await ask(fake, conversation(0), [text(LONG + ".", MARK)])
    assert other_model.cache_read_input_tokens == 0
    assert changed.cache_read_input_tokens == 0


async def test_an_entry_lapses_five_minutes_after_its_last_use_or_an_hour_with_1h() -> None:
    clock = Clock()
    async with FakeLLM(clock=clock) as fake:
        short, hour = [text(LONG, MARK)], [text(LONG + "h", {"type": "ephemeral", "ttl": "1h"})]
        written = await ask(fake, conversation(0, None), hour)
        assert written.cache_creation.ephemeral_1h_input_tokens == (
            written.cache_creation_input_tokens
        )
        await ask(fake, conversation(0, None), short)
        clock.now += 240
        refreshed = await ask(fake, conversation(0, None), short)  # read: lives 5 more minutes
        clock.now += 240
        still = await ask(fake, conversation(0, None), short)
        clock.now += 301
        lapsed = await ask(fake, conversation(0, None), short)
        hour_later = await ask(fake, conversation(0, None), hour)
    assert refreshed.cache_read_input_tokens > 0 and still.cache_read_input_tokens > 0
    assert lapsed.cache_read_input_tokens == 0 and lapsed.cache_creation_input_tokens > 0
    assert hour_later.cache_read_input_tokens > 0


@pytest.mark.parametrize(
    ("system", "last", "message"),
    [
        ([text("s", {"type": "persistent"})], None, "Input should be 'ephemeral'"),
        ([text("s", {"type": "ephemeral", "ttl": "2h"})], None, "Input should be '5m' or '1h'"),
        (
            [text("s", MARK)],
            {"type": "ephemeral", "ttl": "1h"},
            "a ttl='1h' cache_control block must not come after a ttl='5m'",
        ),
    ],
)
async def test_malformed_breakpoints_are_refused(
    system: list[dict[str, Any]], last: dict[str, Any] | None, message: str
) -> None:
    async with FakeLLM() as fake:
        with pytest.raises(anthropic.BadRequestError) as caught:
            await ask(fake, conversation(0, last), system)
    assert message in str(caught.value)
