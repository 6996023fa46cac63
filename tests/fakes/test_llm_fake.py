"""The fake model APIs refuse what the real ones refuse, as the real SDKs see it."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY, FakeLLM, Reply, ToolCallSpec
from tests.fakes.llm.__main__ import demo_brain
from tests.fakes.llm.words import reply_text, visible_text, words_reply

USE = {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {}}


def claude(fake: FakeLLM, key: str = ANTHROPIC_KEY) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=key, base_url=fake.anthropic_base_url, max_retries=0)


def gpt(fake: FakeLLM, key: str = OPENAI_KEY) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=key, base_url=fake.openai_base_url, max_retries=0)


@pytest.mark.parametrize(
    ("messages", "extra", "message"),
    [
        ([{"role": "assistant", "content": "hi"}], {}, 'first message must use the "user" role'),
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
            {},
            "text content blocks must be non-empty",
        ),
        (
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [USE]},
                {"role": "user", "content": "no result"},
            ],
            {},
            "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}],
                }
            ],
            {},
            "unexpected `tool_use_id`",
        ),
        (
            [{"role": "user", "content": "q"}],
            {
                "tools": [
                    {
                        "name": f"t{i}",
                        "input_schema": {"type": "object"},
                        "cache_control": {"type": "ephemeral"},
                    }
                    for i in range(5)
                ]
            },
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        (
            [{"role": "user", "content": "q"}],
            {"tools": [{"name": "bad name", "input_schema": {"type": "object"}}]},
            "String should match pattern",
        ),
    ],
)
async def test_anthropic_rejects_invalid_requests(
    fake_llm: FakeLLM, messages: list[Any], extra: dict[str, Any], message: str
) -> None:
    client = claude(fake_llm)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model="claude-test", max_tokens=10, messages=messages, **extra)
    assert message in str(caught.value)
    assert len(fake_llm.rejected) == 1 and message in fake_llm.rejected[0][1]
    await client.close()


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [
                {"role": "user", "content": "q"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "user", "content": "no result"},
            ],
            "The following tool_call_ids did not have response messages: call_1",
        ),
        (
            [
                {"role": "user", "content": "q"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ],
            "messages with role 'tool' must be a response to a preceeding message",
        ),
    ],
)
async def test_openai_rejects_invalid_requests(
    fake_llm: FakeLLM, messages: list[Any], message: str
) -> None:
    client = gpt(fake_llm)
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="gpt-test", messages=messages)
    assert message in str(caught.value)
    await client.close()


async def test_a_prompt_too_long_for_its_models_window_is_refused() -> None:
    """As the APIs do: the prompt and `max_tokens` together must fit the window, counted
    as the usage counts tokens; a model given no window has no limit."""
    async with FakeLLM(context_windows={"claude-small": 1000, "gpt-small": 1000}) as fake:
        fake.responder = lambda _: Reply(text="ok")
        a, o = claude(fake), gpt(fake)
        said: list[Any] = [{"role": "user", "content": "word " * 700}]  # some 900 tokens
        with pytest.raises(anthropic.BadRequestError) as prompt:
            await a.messages.create(model="claude-small-1", max_tokens=10, messages=said * 2)
        with pytest.raises(anthropic.BadRequestError) as both:
            await a.messages.create(model="claude-small-1", max_tokens=200, messages=said)
        with pytest.raises(openai.BadRequestError) as either:
            await o.chat.completions.create(model="gpt-small", max_tokens=200, messages=said)
        fits = await a.messages.create(model="claude-small-1", max_tokens=10, messages=said)
        other = await a.messages.create(model="claude-big", max_tokens=10, messages=said * 2)
        await a.close()
        await o.close()
    assert "prompt is too long:" in str(prompt.value) and "> 1000 maximum" in str(prompt.value)
    assert "input length and `max_tokens` exceed context limit" in str(both.value)
    assert either.value.code == "context_length_exceeded"
    assert "maximum context length is 1000 tokens" in str(either.value)
    assert len(fake.rejected) == 3
    assert fits.usage.input_tokens + 10 <= 1000 < other.usage.input_tokens


async def test_wrong_keys_get_401(fake_llm: FakeLLM) -> None:
    a, o = claude(fake_llm, "nope"), gpt(fake_llm, "nope")
    with pytest.raises(anthropic.AuthenticationError):
        await a.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}]
        )
    with pytest.raises(openai.AuthenticationError):
        await o.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert fake_llm.requests == []
    await a.close()
    await o.close()


async def test_non_streamed_answers_parse_in_the_sdks(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(
        Reply(text="hi", tool_calls=[ToolCallSpec("calc", {"x": 1}, id="toolu_7")]),
        Reply(text="hello"),
    )
    a, o = claude(fake_llm), gpt(fake_llm)
    message = await a.messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}]
    )
    assert message.stop_reason == "tool_use"
    assert message.content[1].type == "tool_use" and message.content[1].input == {"x": 1}
    completion = await o.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "q"}]
    )
    assert completion.choices[0].message.content == "hello"
    await a.close()
    await o.close()


async def test_unscripted_request_is_a_500_and_recorded(fake_llm: FakeLLM) -> None:
    client = gpt(fake_llm)
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert len(fake_llm.unscripted) == 1
    await client.close()


@pytest.mark.parametrize(
    ("asked", "deltas", "delay"),
    [("200 words", 2, 0.0), ("200 words at 80 tokens/s", 95, 0.05)],
)
async def test_the_demo_brain_streams_the_words_asked_for_at_their_pace(
    fake_llm: FakeLLM, asked: str, deltas: int, delay: float
) -> None:
    """A benchmark's `N words [at R tokens/s]` gets `reply_text(N)`: at once in a couple of
    deltas, or in four-token deltas spaced for R tokens a second."""
    fake_llm.responder = demo_brain
    reply = words_reply(asked)
    assert reply is not None and reply.delay == pytest.approx(delay)
    client = claude(fake_llm)
    stamped = f"[Thu 26 Nov 2026 15:00 UTC] {asked}"
    async with client.messages.stream(
        model="m", max_tokens=5, messages=[{"role": "user", "content": stamped}]
    ) as stream:
        got = [text async for text in stream.text_stream]
    assert "".join(got) == reply_text(200)
    assert len(got) == deltas
    assert visible_text(200).startswith("Here are 200 words.\n\nword0 word1")
    assert words_reply("200 wordsmiths") is None
    await client.close()
