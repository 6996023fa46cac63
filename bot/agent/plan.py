"""The `plan_execute` mode: plan the steps first, carry them out one by one, revise the plan
when a step fails, then write the answer.

Every model call is an ordinary step of the loop (`Run.iterate`), with its tools, retries,
approvals and trace; this module only says what each call is asked and reads what it
answered. What the plan is and where it stands is kept in the turn's saved progress, so a
turn that waits for an approval, or that another worker resumes after a crash, goes on at
the step it was in. Only the final answer is streamed as the reply: the plan's own calls
are shown as the plan (`PlanUpdated`), a checklist the platforms draw.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol

from bot.agent.output import check, instruction
from bot.agent.step import Step, StepEnd
from bot.vocabulary import events as ev
from bot.vocabulary.messages import TextBlock
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState, TurnProgress

MAX_STEPS = 8
MAX_REVISIONS = 2
RESULT_CHARS = 300
FAILED = "FAILED:"
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
    f"{MAX_STEPS} steps, each one thing to find out or do, `depends_on` naming the ids of the "
    "steps whose results it needs."
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


def revise(step: ev.PlanStep, last_id: int) -> str:
    reason = step.result or "no reason given"
    return (
        f"Step {step.id} failed: {reason}. Revise the plan for what is still to be done, "
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

    @property
    def turn(self) -> TurnProgress: ...

    def iterate(self) -> Step: ...

    async def save(self) -> None: ...


def _steps(value: Any, first_id: int) -> list[ev.PlanStep]:
    """The steps of a plan the model wrote, renumbered from `first_id` with their
    dependencies mapped along (a dependency on a step outside the plan is dropped)."""
    raw = value["steps"][:MAX_STEPS]
    ids = {item.get("id", n): first_id + n for n, item in enumerate(raw)}
    steps = []
    for n, item in enumerate(raw):
        own = first_id + n
        needs = [ids[d] for d in item.get("depends_on", []) if ids.get(d, own) < own]
        title = " ".join(item["title"].split())[:200]
        steps.append(ev.PlanStep(id=own, title=title, depends_on=needs))
    return steps


class PlanExecution:
    """The next model call of a `plan_execute` turn, each time the loop asks for one."""

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
            fresh = _steps(verdict.value, first)
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
        failed = text.lstrip().upper().startswith(FAILED)
        result = text.lstrip()[len(FAILED) :] if failed else text
        current.status = "failed" if failed else "done"
        current.result = " ".join(result.split())[:RESULT_CHARS]
        if failed and self.turn.plan_revision < MAX_REVISIONS:
            self.turn.plan_phase = "revising"
            self._ask(revise(current, max(s.id for s in self.turn.plan or [])))

    async def _next(self) -> AsyncIterator[ev.AgentEvent]:
        """Start the next runnable step, or ask for the answer once none is left."""
        turn = self.turn
        if turn.plan_phase == "executing":
            ready = self._ready()
            if ready is None:
                turn.plan_phase = "answering"
                schema = self.run.config.output_schema
                self._ask(ANSWER + ("\n\n" + instruction(schema) if schema else ""))
            else:
                ready.status = "running"
                self._ask(STEP.format(id=ready.id, title=ready.title))
        await self.run.save()
        yield self._show()

    def _ready(self) -> ev.PlanStep | None:
        """The first pending step whose dependencies are done; a step that depends on one
        that failed or was skipped is skipped."""
        steps = self.turn.plan or []
        status = {s.id: s.status for s in steps}
        for step in steps:
            if step.status != "pending":
                continue
            needs = [status.get(d, "done") for d in step.depends_on]
            if any(state in ("failed", "skipped") for state in needs):
                step.status, status[step.id] = "skipped", "skipped"
                continue
            if all(state == "done" for state in needs):
                return step
        for step in steps:  # what is left waits on itself: a cycle the model wrote
            if step.status == "pending":
                step.status = "skipped"
        return None
