"""A compaction a person asks for (`/compact`): all but the last `keep_turns` turns folded into
a summary the model writes, whatever the budget, cut only where a turn starts; nothing to fold
in a short conversation; and nothing dropped when the model writes no summary."""

from __future__ import annotations

import json

from bot.agent.compaction import SUMMARY_PREFIX, estimate_tokens
from bot.agent.loop import Agent
from bot.tools.builtin import builtin_tools
from bot.vocabulary.messages import ToolResultBlock
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect
from tests.agent.test_context import is_summary_request
from tests.fakes.llm import Fail, FakeLLM, RecordedRequest, Reply, ToolCallSpec

NOTES = "Ann asked about numbers 0 and 1."


def answering(request: RecordedRequest) -> Reply:
    """A summary when asked for one; the calculator for "add"; else the number asked."""
    if is_summary_request(request):
        return Reply(text=NOTES)
    last = json.dumps(request.body["messages"][-1])
    if "tool_result" in last or '"tool"' in last:  # either API's tool result
        return Reply(text="It is 4.")
    asked = request.last_user_text().splitlines()[-1]
    if "add" in asked:
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+2"})])
    return Reply(text=f"answer to: {asked}")


async def chat(agent: Agent, *said: str) -> SessionState:
    state = SessionState()
    for text in said:
        await collect(agent, state, text)
    return state


async def test_all_but_the_last_turns_are_folded_whatever_the_budget(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.responder = answering
    agent = make_agent(builtin_tools(), compact_keep_turns=2)
    state = await chat(agent, "number 0", "number 1", "please add two and two", "number 3")
    compactor = agent.deps.compactor
    assert not compactor.needed(state.messages, 0, agent.default_model)  # far under budget
    before = estimate_tokens(state.messages)
    result = await compactor.compact(state.messages, 0, agent.default_model, force=True)
    assert result is not None and result.summarized and result.folded == 4
    summary, *kept = result.messages
    assert summary.summary and summary.text == SUMMARY_PREFIX + NOTES
    assert summary.at == state.messages[0].at  # dated by the oldest turn it folds
    assert [m.id for m in kept] == [m.id for m in state.messages[4:]]
    assert kept[0].text.endswith("please add two and two")  # the tool's turn, whole
    results = [b for m in kept for b in m.content if isinstance(b, ToolResultBlock)]
    assert [r.tool_use_id for r in results] == [u.id for m in kept for u in m.tool_uses]
    assert (result.tokens_before, result.tokens_after) == (before, estimate_tokens(result.messages))
    (asked,) = [r for r in fake_llm.requests if is_summary_request(r)]
    assert asked.body["model"] == agent.default_model
    assert "number 0" in json.dumps(asked.body) and "number 3" not in json.dumps(asked.body)


async def test_a_short_conversation_or_one_folded_already_has_nothing_to_fold(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.responder = answering
    agent = make_agent(builtin_tools(), compact_keep_turns=2)
    compactor, model = agent.deps.compactor, agent.default_model
    assert await compactor.compact([], 0, model, force=True) is None
    state = await chat(agent, "number 0", "number 1")
    assert await compactor.compact(state.messages, 0, model, force=True) is None
    await collect(agent, state, "number 2")
    folded = await compactor.compact(state.messages, 0, model, force=True)
    assert folded is not None and folded.folded == 2
    assert await compactor.compact(folded.messages, 0, model, force=True) is None  # the summary
    assert len([r for r in fake_llm.requests if is_summary_request(r)]) == 1


async def test_nothing_is_dropped_when_the_model_writes_no_summary(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    def no_summaries(request: RecordedRequest) -> Reply | Fail:
        if is_summary_request(request):
            return Fail(400, "invalid_request_error", "summaries are broken today")
        return answering(request)

    fake_llm.responder = no_summaries
    agent = make_agent(builtin_tools(), compact_keep_turns=1)
    state = await chat(agent, "number 0", "number 1", "number 2")
    messages = list(state.messages)
    result = await agent.deps.compactor.compact(state.messages, 0, agent.default_model, force=True)
    assert result is not None and not result.summarized and result.folded == 0
    assert result.messages == messages and result.tokens_after == result.tokens_before
    assert state.messages == messages
