"""The fake Messages API's extended thinking, as the real SDK sees it: what thinking rules
out, the signature it makes, and the checks of thinking sent back."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec
from tests.fakes.test_llm_fake import claude

ON: Any = {"type": "enabled", "budget_tokens": 1024}
RESULT: Any = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                            "content": "4"}]}  # fmt: skip
USE: Any = {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {}}


async def _thought(fake: FakeLLM) -> dict[str, Any]:
    """A signed thinking block, as the fake streamed it to the real SDK."""
    fake.enqueue(Reply(thinking="Let me add.", tool_calls=[ToolCallSpec("calc", {}, "toolu_1")]))
    client = claude(fake)
    async with client.messages.stream(
        model="claude-test", max_tokens=2048, thinking=ON,
        messages=[{"role": "user", "content": "2+2?"}],
    ) as stream:  # fmt: skip
        message = await stream.get_final_message()
    await client.close()
    block = message.content[0]
    assert block.type == "thinking" and block.thinking == "Let me add." and block.signature
    return block.model_dump()


@pytest.mark.parametrize(
    ("extra", "edit", "said"),
    [
        ({"temperature": 0.5}, None, "`temperature` may only be set to 1 when thinking"),
        ({"top_p": 0.5}, None, "`top_p` must be greater than or equal to 0.95"),
        ({"max_tokens": 1024}, None, "`max_tokens` must be greater than"),
        ({}, {"thinking": "Let me add, quietly."}, "Invalid `signature` in `thinking` block"),
        ({}, "drop", "a final `assistant` message must start with a thinking block"),
        ({"output_config": {"effort": "extreme"}}, None, "output_config.effort: Input should"),
    ],
)
async def test_what_thinking_rules_out_is_refused(
    fake_llm: FakeLLM, extra: dict[str, Any], edit: Any, said: str
) -> None:
    thought = await _thought(fake_llm)
    asked = [USE] if edit == "drop" else [{**thought, **(edit or {})}, USE]
    messages: Any = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": asked},
    ]
    client = claude(fake_llm)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(  # this SDK no longer names the sampling settings
            model="claude-test", thinking=ON, messages=[*messages, RESULT],
            max_tokens=extra.pop("max_tokens", 2048), extra_body=extra,
        )  # fmt: skip
    await client.close()
    assert said in str(caught.value)


async def test_thinking_sent_back_as_it_came_is_taken(fake_llm: FakeLLM) -> None:
    thought = await _thought(fake_llm)
    fake_llm.enqueue(Reply(text="4"))
    client = claude(fake_llm)
    messages: Any = [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": [thought, USE]},
        RESULT,
    ]
    answer = await client.messages.create(
        model="claude-test", max_tokens=2048, thinking=ON, messages=messages
    )
    await client.close()
    assert [b.type for b in answer.content] == ["text"] and fake_llm.rejected == []
