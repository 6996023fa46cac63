"""The `plan_execute` mode through the real SDKs: a plan, its steps with tools, a revision
when a step fails, an approval inside a step, and only the answer shown as the reply."""

from __future__ import annotations

import json

from bot.agent.plan import ANSWER, PLANNING
from bot.vocabulary import events as ev
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec

PLAN = RunConfig(mode="plan_execute")


def plan(*steps: tuple[int, str, list[int]]) -> Reply:
    written = [{"id": i, "title": title, "depends_on": needs} for i, title, needs in steps]
    return Reply(text=json.dumps({"steps": written}))


def statuses(update: ev.PlanUpdated) -> list[tuple[int, str]]:
    return [(step.id, step.status) for step in update.steps]


async def test_a_plan_is_made_carried_out_and_answered(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.enqueue(
        plan((1, "Compute 6*7", []), (2, "Double it", [1])),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="6*7 is 42."),
        Reply(text="Doubled, 84."),
        Reply(text="The answer is **84**.", chunk_size=4),
    )
    state = SessionState()
    events = await collect(make_agent(), state, "twice 6*7?", config=PLAN)
    updates = of_type(events, ev.PlanUpdated)
    assert [statuses(u) for u in updates] == [
        [(1, "running"), (2, "pending")],
        [(1, "done"), (2, "running")],
        [(1, "done"), (2, "done")],
    ]
    assert updates[-1].steps[0].result == "6*7 is 42."
    assert updates[-1].steps[1].depends_on == [1]
    assert shown_text(events) == "The answer is **84**."  # the plan's own calls are not shown
    done = completed(events)
    assert done.finish_reason == "end_turn" and done.text == "The answer is **84**."
    assert done.iterations == 5 and state.turn is None
    requests = fake_llm.requests
    assert PLANNING in requests[0].last_user_text()
    assert "Carry out step 1 of the plan now: Compute 6*7" in requests[1].last_user_text()
    assert requests[2].tool_results()[0][1] == "42"
    assert "step 2 of the plan now: Double it" in requests[3].last_user_text()
    assert ANSWER in requests[4].last_user_text()


async def test_a_failed_step_revises_the_plan(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    fake_llm.enqueue(
        plan((1, "Read the file", []), (2, "Summarise it", [1])),
        Reply(text="FAILED: the file does not exist."),
        plan((3, "Ask what the file held", [])),
        Reply(text="It held a shopping list."),
        Reply(text="Your file was a shopping list."),
    )
    events = await collect(make_agent(), SessionState(), "summarise my file", config=PLAN)
    updates = of_type(events, ev.PlanUpdated)
    failed = updates[1]
    assert statuses(failed) == [(1, "failed"), (2, "pending")]
    assert failed.steps[0].result == "the file does not exist."
    assert "Step 1 failed: the file does not exist." in fake_llm.requests[2].last_user_text()
    revised = updates[2]
    assert revised.revision == 1
    assert [(s.id, s.title, s.status) for s in revised.steps] == [
        (1, "Read the file", "failed"),
        (2, "Ask what the file held", "running"),
    ]
    assert statuses(updates[-1]) == [(1, "failed"), (2, "done")]
    assert completed(events).text == "Your file was a shopping list."


async def test_a_plan_that_is_not_json_is_one_step(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.enqueue(
        Reply(text="I would look it up and then answer."),
        Reply(text="Looked it up."),
        Reply(text="Here it is."),
    )
    events = await collect(make_agent(), SessionState(), "what is it?", config=PLAN)
    first = of_type(events, ev.PlanUpdated)[0]
    assert [(s.title, s.status) for s in first.steps] == [("Answer the request", "running")]
    assert completed(events).text == "Here it is."


async def test_steps_after_a_failure_with_no_revisions_left_are_skipped(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    fake_llm.enqueue(
        plan((1, "A", []), (2, "B", [1]), (3, "C", [])),
        Reply(text="FAILED: no A."),
        Reply(text="not a plan"),  # revision 1 did not parse: what was pending stays
        Reply(text="FAILED: no C either."),
        Reply(text="not a plan"),  # revision 2
        Reply(text="Nothing could be done."),
    )
    events = await collect(make_agent(), SessionState(), "do it", config=PLAN)
    final = of_type(events, ev.PlanUpdated)[-1]
    assert statuses(final) == [(1, "failed"), (2, "skipped"), (3, "failed")]
    assert final.revision == 2
    assert completed(events).text == "Nothing could be done."


async def test_an_approval_inside_a_step_resumes_the_plan(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(policy='[{"action": "ask", "tool": "calculator"}]')
    fake_llm.enqueue(
        plan((1, "Compute", []), (2, "Report", [1])),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+3"})]),
    )
    state = SessionState()
    events = await collect(agent, state, "2+3 and report", config=PLAN)
    assert completed(events).finish_reason == ev.FinishReason.AWAITING_CONFIRMATION
    [ask] = of_type(events, ev.ConfirmationRequired)
    assert state.turn is not None and state.turn.plan_phase == "executing"

    fake_llm.enqueue(Reply(text="It is 5."), Reply(text="Reported."), Reply(text="5."))
    decided = await collect(agent, state, decisions={ask.calls[0].call_id: True})
    assert statuses(of_type(decided, ev.PlanUpdated)[-1]) == [(1, "done"), (2, "done")]
    assert shown_text(decided) == "5."
    assert completed(decided).finish_reason == "end_turn"


async def test_a_plan_with_an_output_schema_asks_for_json_only_in_its_answer(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    schema = {"type": "object", "required": ["total"], "properties": {"total": {"type": "integer"}}}
    fake_llm.enqueue(
        plan((1, "Add them up", [])),
        Reply(text="They add up to 12."),
        Reply(text='{"total": 12}'),
    )
    config = RunConfig(mode="plan_execute", output_schema=schema)
    events = await collect(make_agent(), SessionState(), "3+4+5?", config=config)
    assert completed(events).output == {"total": 12}
    asked = [request.last_user_text() for request in fake_llm.requests]
    assert [json.dumps(schema) in text for text in asked] == [False, False, True]


async def test_a_turn_waiting_for_approval_keeps_its_mode_whatever_comes_with_the_decision(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(policy='[{"action": "ask", "tool": "calculator"}]')
    fake_llm.enqueue(Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+3"})]))
    state = SessionState()
    events = await collect(agent, state, "2+3?")  # a direct turn
    [ask] = of_type(events, ev.ConfirmationRequired)
    fake_llm.enqueue(Reply(text="5."))
    decided = await collect(agent, state, decisions={ask.calls[0].call_id: True}, config=PLAN)
    assert of_type(decided, ev.PlanUpdated) == [] and shown_text(decided) == "5."
