"""A plan's steps through the real SDKs: how the planner's dependencies are read, and which
steps go to helpers together (the real `delegate` tool, its helpers' runs stood in for by
`Helpers`): those ready at once, where the turn may start helpers, through approvals and a
resumed turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.agent.plan import PLANNING
from bot.agent.plan_helpers import REQUEST_CHARS
from bot.assembly.agent import build_agent
from bot.assembly.delegate import HelperLink
from bot.tools.base import ToolContext, ToolError, ToolResult
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.agent.conftest import Sleeps, collect, completed, make_settings, of_type, shown_text
from tests.fakes.llm import FakeLLM, Reply

PLAN = RunConfig(mode="plan_execute")
HELPER_TOKENS = 100  # what each stand-in helper says it spent


def plan(*steps: dict[str, Any]) -> Reply:
    return Reply(text=json.dumps({"steps": list(steps)}))


def statuses(update: ev.PlanUpdated) -> list[tuple[int, str]]:
    return [(step.id, step.status) for step in update.steps]


class Helpers:
    """Stands in for the worker's helper runs behind the real `delegate` tool: records each
    call's id and task, counts how many run at once, and answers "found <title>" once
    `together` of them have started (or after `WAIT_S` alone). A task whose title begins
    with "Fail" fails the way a helper that ended without its answer does; one whose title
    begins with "Cannot" answers that its step failed."""

    WAIT_S = 5.0

    def __init__(self, together: int = 1) -> None:
        self.together = together
        self.calls: list[tuple[str, str]] = []
        self.running = 0
        self.most = 0
        self._all_in = asyncio.Event()

    async def delegate(
        self, ctx: ToolContext, task: str, tools: Any, model: str | None
    ) -> ToolResult:
        self.calls.append((ctx.call_id, task))
        self.running += 1
        self.most = max(self.most, self.running)
        if len(self.calls) >= self.together:
            self._all_in.set()
        try:
            await asyncio.wait_for(self._all_in.wait(), self.WAIT_S)
        except TimeoutError:
            pass
        finally:
            self.running -= 1
        title = task.split("\n", 1)[0]
        if title.startswith("Fail"):
            raise ToolError(f"The helper (run {'0' * 32}) did not finish in time and was stopped.")
        said = "FAILED: there is no way" if title.startswith("Cannot") else f"found {title}"
        usage = Usage(output_tokens=HELPER_TOKENS)
        return ToolResult(text=f"[helper run {'0' * 32}]\n{said}", usage=usage)

    @property
    def ids(self) -> list[str]:
        return [call_id for call_id, _ in self.calls]


MakePlanner = Callable[..., tuple[Agent, Helpers]]


@pytest.fixture
async def planner(fake_llm: FakeLLM, api: str, sleeps: Sleeps) -> AsyncIterator[MakePlanner]:
    """An agent that is offered `delegate`, with `Helpers` behind it."""
    built: list[Agent] = []

    def make(together: int = 1, **overrides: Any) -> tuple[Agent, Helpers]:
        helpers, link = Helpers(together), HelperLink()
        link.bind(helpers)
        settings = make_settings(fake_llm, api, **overrides)
        agent = build_agent(settings, helpers=link, sleep=sleeps)
        built.append(agent)
        return agent, helpers

    yield make
    for agent in built:
        await agent.aclose()


async def test_a_plans_dependencies_are_read_strictly(
    fake_llm: FakeLLM, planner: MakePlanner
) -> None:
    """Only a clear `depends_on` makes a step independent: one without it, or naming a step
    that is not before it (unknown, later, itself, or an id two steps share), waits for every step
    before it. Read so, nothing here is ready with another step: no helper is started."""
    agent, helpers = planner()
    fake_llm.enqueue(
        plan(
            {"id": 1, "title": "A", "depends_on": []},
            {"id": 2, "title": "B"},
            {"id": 3, "title": "C", "depends_on": [9]},
            {"id": 4, "title": "D", "depends_on": [7]},
            {"id": 5, "title": "E", "depends_on": [1, 4]},
            {"id": 5, "title": "F", "depends_on": [5]},
            {"id": 7, "title": "G", "depends_on": [1, 7]},
        ),
        *(Reply(text=f"did {name}") for name in "ABCDEFG"),
        Reply(text="All done."),
    )
    events = await collect(agent, SessionState(), "do it all", config=PLAN)
    first = of_type(events, ev.PlanUpdated)[0]
    assert [(s.id, s.depends_on) for s in first.steps] == [
        (1, []),  # none, as it says
        (2, [1]),  # it says nothing
        (3, [1, 2]),  # an unknown step
        (4, [1, 2, 3]),  # a later step
        (5, [1, 4]),
        (6, [1, 2, 3, 4, 5]),  # 5 names two steps
        (7, [1, 2, 3, 4, 5, 6]),  # itself
    ]
    assert helpers.calls == []
    assert "A step without `depends_on` waits for every step before it" in PLANNING
    assert completed(events).text == "All done."


async def test_steps_ready_at_once_run_as_helpers_together(
    fake_llm: FakeLLM, planner: MakePlanner
) -> None:
    """Three independent steps: one `delegate` call each, made by Parley in one batch, all
    three helpers running at once; the step that needs them runs after, in the
    conversation, and the answer is written from their results."""
    agent, helpers = planner(together=3)
    fake_llm.enqueue(
        plan(
            {"id": 1, "title": "Price in Oslo", "depends_on": []},
            {"id": 2, "title": "Price in Rome", "depends_on": []},
            {"id": 3, "title": "Price in Lima", "depends_on": []},
            {"id": 4, "title": "Compare them", "depends_on": [1, 2, 3]},
        ),
        Reply(text="Lima is cheapest."),
        Reply(text="Lima, then Rome, then Oslo."),
    )
    state = SessionState()
    events = await collect(agent, state, "where is bread cheapest?", config=PLAN)
    assert helpers.most == 3  # all three ran at once
    assert sorted(task.split("\n")[0] for _, task in helpers.calls) == [
        "Price in Lima",
        "Price in Oslo",
        "Price in Rome",
    ]
    assert all("where is bread cheapest?" in task for _, task in helpers.calls)
    assert len(set(helpers.ids)) == 3 and all(i.startswith("plan_") for i in helpers.ids)
    updates = of_type(events, ev.PlanUpdated)
    assert [statuses(u) for u in updates] == [
        [(1, "running"), (2, "running"), (3, "running"), (4, "pending")],
        [(1, "done"), (2, "done"), (3, "done"), (4, "running")],
        [(1, "done"), (2, "done"), (3, "done"), (4, "done")],
    ]
    assert {s.call_id for s in updates[0].steps[:3]} == set(helpers.ids)
    assert updates[-1].steps[0].result == "found Price in Oslo"
    started = of_type(events, ev.ToolCallStart)
    assert [e.name for e in started] == ["delegate"] * 3
    results = of_type(events, ev.ToolCallResult)
    assert [r.is_error for r in results] == [False] * 3
    requests = fake_llm.requests
    assert len(requests) == 3  # the plan, step 4, the answer: no model call per helper
    sent = json.dumps(requests[1].body["messages"])
    for city in ("Lima", "Oslo", "Rome"):
        assert json.dumps(f"[helper run {'0' * 32}]\nfound Price in {city}") in sent
    assert "step 4 of the plan now: Compare them" in requests[1].last_user_text()
    assert shown_text(events) == "Lima, then Rome, then Oslo."
    done = completed(events)
    assert done.finish_reason == "end_turn" and done.iterations == 3
    assert done.usage.output_tokens >= 3 * HELPER_TOKENS  # the helpers' tokens are the turn's
    assert state.turn is None


async def test_helpers_are_told_what_the_steps_before_found(
    fake_llm: FakeLLM, planner: MakePlanner
) -> None:
    """A step alone runs in the conversation; the two that need it then run as helpers,
    each told its result. A request too long is cut to its bound in their tasks."""
    agent, helpers = planner(together=2)
    fake_llm.enqueue(
        plan(
            {"id": 1, "title": "Find the city", "depends_on": []},
            {"id": 2, "title": "Its weather", "depends_on": [1]},
            {"id": 3, "title": "Its museums", "depends_on": [1]},
        ),
        Reply(text="The city is Oslo."),
        Reply(text="Oslo: rainy, with the Munch museum."),
    )
    long_request = "plan my trip " + "x" * (2 * REQUEST_CHARS)
    events = await collect(agent, SessionState(), long_request, config=PLAN)
    assert helpers.most == 2
    for _, task in helpers.calls:
        assert "- Step 1, Find the city: The city is Oslo." in task
        assert "plan my trip" in task and len(task) < 2 * REQUEST_CHARS
    assert statuses(of_type(events, ev.PlanUpdated)[1]) == [
        (1, "done"),
        (2, "running"),
        (3, "running"),
    ]
    assert completed(events).text == "Oslo: rainy, with the Munch museum."


async def test_failed_helpers_revise_the_plan(fake_llm: FakeLLM, planner: MakePlanner) -> None:
    """A helper that ended without an answer fails its step, as one that said FAILED does;
    the plan is revised for both at once, and a revised step may need one that ended."""
    agent, helpers = planner(together=3)
    fake_llm.enqueue(
        plan(
            {"id": 1, "title": "Fail to fetch", "depends_on": []},
            {"id": 2, "title": "Read the page", "depends_on": []},
            {"id": 3, "title": "Cannot read it", "depends_on": []},
        ),
        plan({"id": 4, "title": "Ask the archive", "depends_on": [2]}),  # one that ended
        Reply(text="The archive has it."),
        Reply(text="From the archive: it is there."),
    )
    events = await collect(agent, SessionState(), "find the page", config=PLAN)
    assert helpers.most == 3
    ended = of_type(events, ev.PlanUpdated)[1]
    assert statuses(ended) == [(1, "failed"), (2, "done"), (3, "failed")]
    assert "did not finish in time" in ended.steps[0].result
    asked = fake_llm.requests[1].last_user_text()
    assert "Step 1 failed: The helper" in asked and "Step 3 failed: there is no way" in asked
    final = of_type(events, ev.PlanUpdated)[-1]
    assert final.revision == 1
    assert statuses(final) == [(1, "failed"), (2, "done"), (3, "failed"), (4, "done")]
    assert final.steps[3].depends_on == [2]
    assert completed(events).text == "From the archive: it is there."


def independent_plan(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(
        plan({"id": 1, "title": "A", "depends_on": []}, {"id": 2, "title": "B", "depends_on": []}),
        Reply(text="did A"),
        Reply(text="did B"),
        Reply(text="A and B."),
    )


@pytest.mark.parametrize(
    ("config", "overrides", "session"),
    [
        (RunConfig(mode="plan_execute", tools=("calculator",)), {}, "test:session"),
        (PLAN, {"policy": '[{"action": "deny", "tool": "delegate"}]'}, "test:session"),
        (PLAN, {}, "test:session:helper-toolu_1"),  # a helper at PARLEY_DELEGATE_DEPTH
    ],
    ids=["not-among-the-runs-tools", "denied-by-the-policy", "too-deep"],
)
async def test_steps_run_one_by_one_where_no_helper_may_start(
    fake_llm: FakeLLM,
    planner: MakePlanner,
    config: RunConfig,
    overrides: dict[str, Any],
    session: str,
) -> None:
    agent, helpers = planner(**overrides)
    independent_plan(fake_llm)
    ctx = ToolContext(session, Sender(id="console:ann", name="Ann"))
    request = TurnRequest(ctx, text="do A and B", config=config)
    events = [event async for event in agent.run(SessionState(), request)]
    assert helpers.calls == []
    assert statuses(of_type(events, ev.PlanUpdated)[0]) == [
        (1, "running"),
        (2, "pending"),
    ]
    asked = [r.last_user_text() for r in fake_llm.requests]
    assert "step 1 of the plan now: A" in asked[1] and "step 2 of the plan now: B" in asked[2]
    assert completed(events).text == "A and B."


async def test_an_approval_of_the_helpers_resumes_the_plan(
    fake_llm: FakeLLM, planner: MakePlanner
) -> None:
    """Where `delegate` needs an approval, the plan's calls wait for it like the model's;
    approved, the same calls run and the plan goes on."""
    agent, helpers = planner(together=2, policy='[{"action": "ask", "tool": "delegate"}]')
    fake_llm.enqueue(
        plan({"id": 1, "title": "A", "depends_on": []}, {"id": 2, "title": "B", "depends_on": []})
    )
    state = SessionState()
    events = await collect(agent, state, "do A and B", config=PLAN)
    assert completed(events).finish_reason == ev.FinishReason.AWAITING_CONFIRMATION
    [ask] = of_type(events, ev.ConfirmationRequired)
    asked = [call.call_id for call in ask.calls]
    assert helpers.calls == [] and len(asked) == 2
    assert state.turn is not None
    assert [(s.status, s.call_id) for s in state.turn.plan or []] == [
        ("running", asked[0]),
        ("running", asked[1]),
    ]

    fake_llm.enqueue(Reply(text="A and B, both found."))
    decided = await collect(agent, state, decisions=dict.fromkeys(asked, True))
    assert helpers.ids == asked and helpers.most == 2
    assert statuses(of_type(decided, ev.PlanUpdated)[-1]) == [(1, "done"), (2, "done")]
    assert completed(decided).text == "A and B, both found."
    assert len(fake_llm.requests) == 2


async def test_a_turn_resumed_after_a_crash_finds_the_same_helpers(
    fake_llm: FakeLLM, planner: MakePlanner
) -> None:
    """The turn as it was saved once its helpers' calls were made, taken up by another run
    (a worker that resumes it): it makes the same calls, by the same ids, and goes on."""
    agent, helpers = planner(together=2)
    fake_llm.enqueue(
        plan({"id": 1, "title": "A", "depends_on": []}, {"id": 2, "title": "B", "depends_on": []}),
        Reply(text="First run's answer."),
    )
    saved: list[SessionState] = []

    async def checkpoint(state: SessionState) -> None:
        last = state.messages[-1] if state.messages else None
        if not saved and last is not None and last.role == "assistant" and last.tool_uses:
            saved.append(state.model_copy(deep=True))

    ctx = ToolContext("test:session", Sender(id="console:ann", name="Ann"))
    request = TurnRequest(ctx, text="do A and B", config=PLAN)
    first = [e async for e in agent.run(SessionState(), request, checkpoint=checkpoint)]
    assert completed(first).text == "First run's answer."
    made = list(helpers.ids)
    [crashed] = saved
    assert all(isinstance(b, ToolUseBlock) for b in crashed.messages[-1].content)

    fake_llm.enqueue(Reply(text="Resumed answer."))
    resumed = [e async for e in agent.run(crashed, TurnRequest(ctx))]
    assert helpers.ids[2:] == made  # the same helpers, found again by their calls' ids
    assert statuses(of_type(resumed, ev.PlanUpdated)[-1]) == [(1, "done"), (2, "done")]
    assert completed(resumed).text == "Resumed answer."
    assert crashed.turn is None


async def test_a_model_that_thinks_reads_the_helpers_results(
    fake_llm: FakeLLM, planner: MakePlanner
) -> None:
    """With thinking on, the API wants the assistant message before the latest tool results
    to begin with its thinking, which Parley's own calls have none of: the helpers' answers
    are closed by a line of their own before the model is asked again, and it answers."""
    agent, helpers = planner(together=2, reasoning="on")
    fake_llm.enqueue(
        plan({"id": 1, "title": "A", "depends_on": []}, {"id": 2, "title": "B", "depends_on": []}),
        Reply(text="A and B.", thinking="Both steps answered."),
    )
    events = await collect(agent, SessionState(), "do A and B", config=PLAN)
    assert helpers.most == 2
    assert fake_llm.rejected == []
    assert completed(events).text == "A and B."
    answering = fake_llm.requests[1]
    assert answering.tool_results() == []  # closed before the model is asked again
    assert "found B" in json.dumps(answering.body["messages"])
