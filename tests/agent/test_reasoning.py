"""The model thinking before it answers, through both real SDKs and the fake APIs: thinking
asked for as each API takes it, its blocks kept with their signatures and sent back within
a turn of tool calls (the fake refuses anything else, as the API does), shown as the run
says, and a state that carries them on in another process."""

from __future__ import annotations

import asyncio

import pytest

from bot.llm.anthropic import THINKING_BUDGET
from bot.vocabulary import events as ev
from bot.vocabulary.messages import RedactedThinkingBlock, ThinkingBlock
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec

THOUGHT = "The person wants 2^10. The calculator is exact; I will use it."
CALL = ToolCallSpec("calculator", {"expression": "2^10"})


@pytest.mark.parametrize("api", ["anthropic"])
async def test_thinking_is_kept_signed_and_sent_back_across_a_tool_call(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(
        model="claude-sonnet-4-5",  # a model that thinks on a budget
        reasoning="on", reasoning_effort="low", temperature=0.3, max_tokens=1000,
    )  # fmt: skip
    fake_llm.enqueue(
        Reply(thinking=THOUGHT, redacted=True, text="Let me compute.", tool_calls=[CALL]),
        Reply(thinking="1024 it is.", text="It is 1024."),
    )
    state = SessionState()
    events = await collect(agent, state, "2^10?")
    assert fake_llm.rejected == []  # the signature and the order were as the API wants them
    assert completed(events).finish_reason == "end_turn"
    first, second = fake_llm.requests
    budget = THINKING_BUDGET["low"]
    assert first.body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert first.body["max_tokens"] == 1000 + budget and "temperature" not in first.body
    sent_back = second.body["messages"][1]["content"]
    assert [b["type"] for b in sent_back[:3]] == ["thinking", "redacted_thinking", "text"]
    assert sent_back[0]["thinking"] == THOUGHT
    kept = state.messages[1].content
    assert isinstance(kept[0], ThinkingBlock) and kept[0].signature == sent_back[0]["signature"]
    assert isinstance(kept[1], RedactedThinkingBlock)
    thoughts = [e.text for e in of_type(events, ev.ThinkingDelta)]
    assert thoughts == [THOUGHT, "1024 it is."]  # shown whole, each once it ended
    assert shown_text(events) == "Let me compute.It is 1024."


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_turn_carried_on_elsewhere_sends_its_thinking_back(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """The state goes through JSON, as between workers, between the tool call and the answer.
    A model that thinks adaptively, asked to keep its thinking to itself."""
    agent = make_agent(reasoning="hidden")
    fake_llm.enqueue(Reply(thinking=THOUGHT, tool_calls=[CALL]), Reply(text="1024"))
    state = SessionState()
    cancel_after_tool = _CancelOnToolResult()
    await collect(agent, state, "2^10?", cancel=cancel_after_tool.event, on_event=cancel_after_tool)
    moved = SessionState.model_validate_json(state.model_dump_json())
    assert moved.messages[-1].tool_results  # stopped between the tool and the answer
    events = await collect(make_agent(reasoning="hidden"), moved)
    assert fake_llm.rejected == []
    assert completed(events).finish_reason == "end_turn"
    first, last = fake_llm.requests[0], fake_llm.requests[-1]
    assert first.body["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert first.body["output_config"] == {"effort": "medium"}
    sent_back = last.body["messages"][1]["content"][0]
    assert sent_back["type"] == "thinking" and sent_back["thinking"] == ""  # its signature only
    assert of_type(events, ev.ThinkingDelta) == []  # hidden: thought, never shown


@pytest.mark.parametrize("api", ["anthropic"])
async def test_thinking_streams_as_it_comes_and_is_not_sent_when_off(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    fake_llm.enqueue(
        Reply(thinking=THOUGHT, text="Hi.", chunk_size=10),
        Reply(thinking=THOUGHT, text="Hi again."),
    )
    state = SessionState()
    events = await collect(agent, state, "hello", config=RunConfig(reasoning="stream"))
    streamed = of_type(events, ev.ThinkingDelta)
    assert len(streamed) > 1 and "".join(e.text for e in streamed) == THOUGHT
    events = await collect(agent, state, "and now?")  # the deployment's default: off
    first, second = fake_llm.requests
    assert first.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "thinking" not in second.body and of_type(events, ev.ThinkingDelta) == []
    assert [b["type"] for b in second.body["messages"][1]["content"]] == ["text"]
    assert fake_llm.rejected == []


@pytest.mark.parametrize("api", ["openai"])
async def test_openai_compatible_reasoning_is_shown_and_never_sent_back(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(reasoning="stream", temperature=0.2)
    fake_llm.enqueue(Reply(thinking=THOUGHT, tool_calls=[CALL]), Reply(text="1024"))
    state = SessionState()
    events = await collect(agent, state, "2^10?")
    assert "".join(e.text for e in of_type(events, ev.ThinkingDelta)) == THOUGHT
    first, second = fake_llm.requests
    assert "reasoning_effort" not in first.body and first.body["temperature"] == 0.2
    assert THOUGHT not in str(second.body["messages"])
    kept = state.messages[1].content[0]
    assert isinstance(kept, ThinkingBlock) and kept.signature == ""
    assert fake_llm.rejected == []


@pytest.mark.parametrize("api", ["openai"])
async def test_openai_reasoning_models_get_an_effort_and_no_sampling(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(model="o4-mini", reasoning="on", reasoning_effort="high", temperature=0.2)
    fake_llm.enqueue(Reply(text="Done."))
    await collect(agent, SessionState(), "think hard")
    [request] = fake_llm.requests
    assert request.body["reasoning_effort"] == "high"
    assert "temperature" not in request.body and "max_completion_tokens" in request.body
    assert fake_llm.rejected == []


class _CancelOnToolResult:
    """Stops the run once its tool ran, as a worker that died there would leave it."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    async def __call__(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.ToolCallResult):
            self.event.set()
