"""How many helpers one turn starts (PARLEY_HELPERS_PER_TURN): counted over the turn's model
calls and its plan's steps, kept in its saved progress through a crash, with the real
`delegate` tool and its helpers' runs stood in for (`tests.agent.test_plan_helpers.Helpers`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.assembly.agent import build_agent
from bot.assembly.delegate import HelperLink
from bot.tools.base import ToolContext
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Sender
from bot.vocabulary.state import SessionState
from tests.agent.conftest import Sleeps, collect, completed, make_settings, of_type
from tests.agent.test_plan_helpers import PLAN, Helpers, plan, statuses
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec

Make = Callable[..., tuple[Agent, Helpers]]


def refusal(most: int) -> str:
    return (
        f"Not run: a turn starts at most {most} helpers and this one has started them all, "
        "so this helper did not run; do this part yourself."
    )


def delegating(*jobs: int) -> Reply:
    calls = [ToolCallSpec("delegate", {"task": f"job {n}"}, id=f"toolu_job{n}") for n in jobs]
    return Reply(tool_calls=calls)


@pytest.fixture
async def agent_with_helpers(fake_llm: FakeLLM, api: str, sleeps: Sleeps) -> AsyncIterator[Make]:
    built: list[Agent] = []

    def make(**overrides: Any) -> tuple[Agent, Helpers]:
        helpers, link = Helpers(), HelperLink()
        link.bind(helpers)
        settings = make_settings(fake_llm, api, **overrides)
        built.append(agent := build_agent(settings, helpers=link, sleep=sleeps))
        return agent, helpers

    yield make
    for agent in built:
        await agent.aclose()


async def test_the_bound_holds_across_the_model_calls_of_a_turn(
    fake_llm: FakeLLM, agent_with_helpers: Make
) -> None:
    """With the default settings: 5 helpers asked, then 5 more; the first 8 run."""
    agent, helpers = agent_with_helpers()
    fake_llm.enqueue(delegating(*range(5)), delegating(*range(5, 10)), Reply(text="done"))
    events = await collect(agent, SessionState(), "split it")
    assert helpers.ids == [f"toolu_job{n}" for n in range(8)]
    results = of_type(events, ev.ToolCallResult)
    assert [r.is_error for r in results] == [False] * 8 + [True] * 2
    assert [r.content for r in results[8:]] == [refusal(8)] * 2
    assert completed(events).text == "done"
    said = json.dumps(fake_llm.requests[-1].body["messages"])
    assert json.dumps(refusal(8))[1:-1] in said  # what the model read


async def test_a_turn_resumed_after_a_crash_keeps_its_count(
    fake_llm: FakeLLM, agent_with_helpers: Make
) -> None:
    """The turn as saved just before its second batch ran, taken up by another run: the
    batch's calls are screened again against the count saved, so the call let through
    before is let through again (the same helper), and the other is not."""
    agent, helpers = agent_with_helpers(helpers_per_turn=3)
    fake_llm.enqueue(delegating(0, 1), delegating(2, 3), Reply(text="first run"))
    saved: list[str] = []

    async def checkpoint(state: SessionState) -> None:
        if state.turn is not None and "toolu_job2" in state.turn.started and not saved:
            saved.append(state.model_dump_json())  # what another worker would load

    ctx = ToolContext("test:session", Sender(id="console:ann", name="Ann"))
    request = TurnRequest(ctx, text="split it")
    first = [e async for e in agent.run(SessionState(), request, checkpoint=checkpoint)]
    assert [r.is_error for r in of_type(first, ev.ToolCallResult)] == [False] * 3 + [True]
    crashed = SessionState.model_validate_json(saved[0])

    fake_llm.enqueue(delegating(4), Reply(text="resumed"))
    resumed = [e async for e in agent.run(crashed, TurnRequest(ctx))]
    assert helpers.ids[3:] == ["toolu_job2"]  # run again, and nothing else
    results = of_type(resumed, ev.ToolCallResult)
    assert [(r.call_id, r.is_error) for r in results] == [
        ("toolu_job2", False),
        ("toolu_job3", True),
        ("toolu_job4", True),
    ]
    assert results[-1].content == refusal(3)
    assert completed(resumed).text == "resumed"


async def test_a_plan_hands_no_more_steps_to_helpers_than_the_turn_may_start(
    fake_llm: FakeLLM, agent_with_helpers: Make
) -> None:
    """Three steps ready at once and room for two helpers: two go to helpers together, the
    third runs in the conversation."""
    agent, helpers = agent_with_helpers(helpers_per_turn=2)
    fake_llm.enqueue(
        plan(
            {"id": 1, "title": "A", "depends_on": []},
            {"id": 2, "title": "B", "depends_on": []},
            {"id": 3, "title": "C", "depends_on": []},
        ),
        Reply(text="did C"),
        Reply(text="A, B and C."),
    )
    events = await collect(agent, SessionState(), "do A, B and C", config=PLAN)
    assert sorted(task.split("\n")[0] for _, task in helpers.calls) == ["A", "B"]
    assert [statuses(u) for u in of_type(events, ev.PlanUpdated)] == [
        [(1, "running"), (2, "running"), (3, "pending")],
        [(1, "done"), (2, "done"), (3, "running")],
        [(1, "done"), (2, "done"), (3, "done")],
    ]
    assert all(not r.is_error for r in of_type(events, ev.ToolCallResult))
    assert "step 3 of the plan now: C" in fake_llm.requests[1].last_user_text()
    assert completed(events).text == "A, B and C."
