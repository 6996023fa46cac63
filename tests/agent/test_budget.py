"""A run's token budget holds before each model call: no room, no call; else its answer is
capped at the room left."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

from bot.agent import budget
from bot.agent.compaction import estimate_text_tokens, overhead_tokens
from bot.llm.base import ModelRequest, SystemPart, ToolSpec
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.usage import Usage


def request(text: str = "hello " * 100, max_tokens: int = 4096) -> ModelRequest:
    return ModelRequest(
        model="m",
        system=[SystemPart(text="be brief")],
        messages=[Message(role="user", content=[TextBlock(text=text)])],
        max_tokens=max_tokens,
    )


def test_without_a_budget_the_request_is_unchanged() -> None:
    asked = request()
    assert budget.within(None, Usage(input_tokens=10**9), asked) is asked


def test_the_answer_is_capped_at_the_room_left() -> None:
    asked = request()
    reads = budget.reads(asked)
    capped = budget.within(reads + 1000, Usage(input_tokens=300, output_tokens=200), asked)
    assert capped is not None and capped.max_tokens == 500
    assert budget.reads(asked) > len("hello " * 100) // 4  # the estimate has a margin


def test_no_room_for_an_answer_is_no_call() -> None:
    asked = request()
    reads = budget.reads(asked)
    assert budget.within(reads + budget.MIN_ANSWER - 1, Usage(), asked) is None
    assert budget.within(reads + budget.MIN_ANSWER, Usage(), asked) is not None


def test_the_overhead_counts_the_system_prompt_and_the_tools_json() -> None:
    """The tools' JSON is measured once per spec, and counts as the whole list would."""
    tools = [
        ToolSpec("calculator", "Evaluates arithmetic.", {"type": "object", "properties": {}}),
        ToolSpec("recall", "Finds what was said — in any language.", {"type": "object"}),
    ]
    asked = replace(request(), tools=tools)
    listed = json.dumps([dataclasses.asdict(tool) for tool in tools])
    expected = estimate_text_tokens("be brief", listed)
    assert overhead_tokens(asked) == overhead_tokens(asked) == expected
    assert overhead_tokens(replace(asked, tools=[])) == estimate_text_tokens("be brief", "[]")
