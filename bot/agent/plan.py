"""The `plan_execute` mode: plan the steps first, carry them out, revise the plan when a
step fails, then write the answer.

A step runs once the steps it depends on are done. The planner says which those are
(`depends_on`), and only a clear word makes a step independent: a step without `depends_on`
waits for every step before it, and one whose `depends_on` names a step that is not before it
in the plan (or an id two steps share) is read the same way. Steps run one by one in the
conversation, each an ordinary step of the loop; where the turn may start helpers, two or
more steps ready at the same time run at once instead, each as a helper
(`bot.agent.plan_helpers`), through the turn's ordinary tool step: as many as the turn may
still start (`bot.agent.helper_count`), the others after them.

Every model call is an ordinary step of the loop (`Run.iterate`), with its tools, retries,
approvals and trace, and so is every call that starts a helper (`Run.tools`); this module
only says what each is asked and reads what it answered. What the plan is and where it
stands is kept in the turn's saved progress, so a turn that waits for an approval, or that
another worker resumes after a crash, goes on at the step it was in (its helpers found
again by their calls' ids). Only the final answer is streamed as the reply: the plan's own calls
are shown as the plan (`PlanUpdated`), a checklist the platforms draw.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any, Protocol

from bot.agent import helper_count
from bot.agent import plan_helpers as helpers
from bot.agent.deps import AgentDeps
from bot.agent.output import check, instruction
from bot.agent.plan_helpers import FAILED
from bot.agent.step import Step, StepEnd
from bot.agent.tool_step import ToolStep
from bot.vocabulary import events as ev
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState, TurnProgress

MAX_STEPS = 8
MAX_REVISIONS = 2
RESULT_CHARS = 300
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["steps"],
    "properties": {
        "steps": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["title"],
                "properties": {
                    "id": {"type": "integer"},
                    "title": {"type": "string", "minLength": 1},
                    "depends_on": {"type": "array", "items": {"type": "integer"}},
                },
            },
        }
    },
}
PLAN_FORMAT = (
    'Reply with JSON only: {"steps": [{"id": 1, "title": "…", "depends_on": []}, …]}, at most '
    f"{MAX_STEPS} steps, each one thing to find out or do, with a title that says all it must "
    "find or do. `depends_on` lists the ids of the earlier steps whose results a step needs; "
    "`[]` says it needs none. A step without `depends_on` waits for every step before it. "
    "Steps that need nothing from each other may be carried out at the same time, each "
    "knowing only its title, the request and what the steps before found."
)
PLANNING = (
    "Before answering, plan how. Do not carry out any step yet and do not answer yet. "
    + PLAN_FORMAT
)
STEP = (
    "Carry out step {id} of the plan now: {title}. Use tools where they help, and do only "
    "this step. End with a short account of what you found or did. If the step cannot be "
    f"done, begin your reply with {FAILED} and say why."
)


GROUP = "Carry out steps {ids} of the plan now, at the same time, each by a helper."
# Closes the helpers' results: the next call is not within their tool calls, so a model that
# thinks is not asked for the thinking that led to them (Parley's calls have none).
HELPED = "The helpers of steps {ids} answered, above."


def revise(failed: Sequence[ev.PlanStep], last_id: int) -> str:
    said = " ".join(f"Step {s.id} failed: {s.result or 'no reason given'}." for s in failed)
    return (
        f"{said} Revise the plan for what is still to be done, "
        f"given what the steps so far found. {PLAN_FORMAT} Use ids above {last_id}."
    )


ANSWER = (
    "The plan is carried out. Now write the final answer to my request above, from what the "
    "steps found; say plainly what could not be done."
)


class Run(Protocol):
    """What the plan needs of the run it drives (`bot.agent.loop`)."""

    state: SessionState
    config: RunConfig
    deps: AgentDeps
    tools: ToolStep

    @property
    def turn(self) -> TurnProgress: ...

    def iterate(self) -> Step: ...

    async def save(self) -> None: ...


def _steps(value: Any, first_id: int, ended: Collection[int]) -> list[ev.PlanStep]:
    """The steps of a plan the model wrote, renumbered from `first_id`, their dependencies
    read strictly (see the module doc). `ended` are the ids of the steps that ended before
    a revision, which a revised step may name as they are."""
    raw = value["steps"][:MAX_STEPS]
    given = [item.get("id") for item in raw]
    named = {i: first_id + n for n, i in enumerate(given) if i is not None and given.count(i) == 1}
    steps = []
    for n, item in enumerate(raw):
        own = first_id + n
        needs = _needs(item.get("depends_on"), named, ended, range(first_id, own))
        title = " ".join(item["title"].split())[:200]
        steps.append(ev.PlanStep(id=own, title=title, depends_on=needs))
    return steps


def _needs(
    declared: list[int] | None, named: dict[int, int], ended: Collection[int], before: range
) -> list[int]:
    """The steps a step waits for: those it names, when each is a step before it (of this
    plan, or one that ended before a revision); else every step before it."""
    if declared is None:
        return list(before)
    needs: set[int] = set()
    for name in declared:
        if name in named and named[name] in before:
            needs.add(named[name])
        elif name in ended and name not in named:
            needs.add(name)
        else:
            return list(before)
    return sorted(needs)


def _settle(step: ev.PlanStep, text: str, *, error: bool = False) -> bool:
    """Record how `step` ended from its account `text`; whether it failed."""
    said = text.lstrip()
    marked = said.upper().startswith(FAILED)
    step.status = "failed" if marked or error else "done"
    step.result = " ".join((said[len(FAILED) :] if marked else said).split())[:RESULT_CHARS]
    return step.status == "failed"


class PlanExecution:
    """The next step of a `plan_execute` turn, each time the loop asks for one."""

    def __init__(self, run: Run) -> None:
        self.run = run

    @property
    def turn(self) -> TurnProgress:
        return self.run.turn

    def _show(self) -> ev.PlanUpdated:
        steps = [step.model_copy() for step in self.turn.plan or []]  # a snapshot, as sent
        return ev.PlanUpdated(steps=steps, revision=self.turn.plan_revision)

    def _ask(self, text: str) -> None:
        self.run.state.add_user(TextBlock(text=text))

    async def step(self) -> Step:
        turn = self.turn
        if turn.plan_phase is None:
            turn.plan_phase = "planning"
            self._ask(PLANNING)
        if turn.plan_phase == "answering":
            async for item in self.run.iterate():
                yield item
            return
        group = [s for s in turn.plan or [] if s.status == "running" and s.call_id]
        if group:
            async for item in self._delegated(group):
                yield item
            return
        async for item in self._quiet(self.run.iterate()):
            if isinstance(item, StepEnd) and item.finish == ev.FinishReason.END_TURN:
                async for event in self._answered():
                    yield event
            else:
                yield item

    async def _quiet(self, step: Step) -> Step:
        """The plan's own calls show as the plan, not as the reply's text."""
        async for item in step:
            if not isinstance(item, ev.TextDelta | ev.TextReset):
                yield item

    async def _answered(self) -> AsyncIterator[ev.AgentEvent]:
        """A plan call ended with text: take the plan, or the step's result, then ask for
        what comes next."""
        text = self.last_text()
        turn = self.turn
        if turn.plan_phase in ("planning", "revising"):
            await self._take_plan(text)
        else:
            self._step_ended(text)
        async for event in self._next():
            yield event

    def last_text(self) -> str:
        last = self.run.state.messages[-1] if self.run.state.messages else None
        if last is None or last.role != "assistant":
            return ""
        return "".join(b.text for b in last.content if isinstance(b, TextBlock))

    async def _take_plan(self, text: str) -> None:
        turn = self.turn
        done = [s for s in turn.plan or [] if s.status != "pending"]
        verdict = await asyncio.to_thread(check, PLAN_SCHEMA, text)
        first = max((s.id for s in done), default=0) + 1
        if verdict.valid:
            fresh = _steps(verdict.value, first, {s.id for s in done})
        elif turn.plan_phase == "planning":  # no usable plan: the request is the one step
            fresh = [ev.PlanStep(id=first, title="Answer the request")]
        else:  # a revision that did not parse: what was pending stays
            fresh = [s for s in turn.plan or [] if s.status == "pending"]
        if turn.plan_phase == "revising":
            turn.plan_revision += 1
        turn.plan = done + fresh
        turn.plan_phase = "executing"

    def _step_ended(self, text: str) -> None:
        current = next((s for s in self.turn.plan or [] if s.status == "running"), None)
        if current is None:  # a plan saved without its running step: go on with the next
            return
        if _settle(current, text):
            self._failed([current])

    def _failed(self, failed: Sequence[ev.PlanStep]) -> None:
        """Steps failed: the plan is revised for what is left, while revisions are left."""
        if failed and self.turn.plan_revision < MAX_REVISIONS:
            self.turn.plan_phase = "revising"
            self._ask(revise(failed, max(s.id for s in self.turn.plan or [])))

    async def _delegated(self, group: list[ev.PlanStep]) -> Step:
        """The steps of `group` run by their helpers: the calls made (unless a decision on
        them, or a resumed turn, made them already), then their answers taken as the steps'
        results."""
        state, ids = self.run.state, [step.call_id for step in group]
        unanswered = [call for call in state.unanswered_tool_uses() if call.id in ids]
        if unanswered:
            async for item in self.run.tools.run(unanswered):
                if not isinstance(item, StepEnd):
                    yield item
                elif item.finish is not None:  # stopped, or waiting for a person
                    yield item
                    return
        answers = helpers.results(state.messages, ids)
        failed = []
        for step in group:
            text, error = helpers.answer_of(answers.get(step.call_id))
            if _settle(step, text, error=error):
                failed.append(step)
        if state.messages and state.messages[-1].role == "user":
            said = HELPED.format(ids=", ".join(str(step.id) for step in group))
            state.messages.append(Message(role="assistant", content=[TextBlock(text=said)]))
        self._failed(failed)
        async for event in self._next():
            yield event

    async def _next(self) -> AsyncIterator[ev.AgentEvent]:
        """Start what is ready (one step in the conversation, or two or more as helpers), or
        ask for the answer once nothing is left."""
        turn = self.turn
        if turn.plan_phase == "executing":
            ready = self._ready()
            if not ready:
                turn.plan_phase = "answering"
                schema = self.run.config.output_schema
                self._ask(ANSWER + ("\n\n" + instruction(schema) if schema else ""))
            elif len(group := ready[: self._helpers_left()]) > 1:
                self._delegate(group)
            else:
                ready[0].status = "running"
                self._ask(STEP.format(id=ready[0].id, title=ready[0].title))
        await self.run.save()
        yield self._show()

    def _helpers_left(self) -> int:
        """How many steps may go to helpers now: none where the turn may not start them,
        else as many as it may still start (PARLEY_HELPERS_PER_TURN, `helper_count`)."""
        settings = self.run.deps.settings
        if not helpers.offered(self.run.tools, settings.delegate_depth):
            return 0
        return helper_count.room(self.turn, settings.helpers_per_turn)

    def _delegate(self, group: list[ev.PlanStep]) -> None:
        """Hand each step of `group` to a helper: the calls go into the context now, and
        run at the plan's next step (`_delegated`)."""
        turn, state = self.turn, self.run.state
        request = helpers.request_of(state.messages, turn.start, PLANNING)
        for step in group:
            step.status, step.call_id = "running", helpers.call_id(turn, step)
        self._ask(GROUP.format(ids=", ".join(str(step.id) for step in group)))
        state.messages.append(helpers.calls(group, turn.plan or [], request))

    def _ready(self) -> list[ev.PlanStep]:
        """The pending steps whose dependencies are done, which need nothing from each
        other; a step that depends on one that failed or was skipped is skipped."""
        steps = self.turn.plan or []
        status = {s.id: s.status for s in steps}
        ready = []
        for step in steps:
            if step.status != "pending":
                continue
            needs = [status.get(d, "done") for d in step.depends_on]
            if any(state in ("failed", "skipped") for state in needs):
                step.status, status[step.id] = "skipped", "skipped"
            elif all(state == "done" for state in needs):
                ready.append(step)
        if ready:
            return ready
        for step in steps:  # what is left waits on itself: a cycle the model wrote
            if step.status == "pending":
                step.status = "skipped"
        return []
