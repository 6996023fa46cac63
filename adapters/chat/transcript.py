"""The text a reply shows, built from a turn's events the same way on every platform.

Text of model calls that ended stays; the call in progress can be taken back (a retried
model call resets it); a running tool is remembered until it ends, for platforms that show
it; Parley's own closing line (an error, a stop) comes last. A `plan_execute` turn's plan
comes first, as a checklist redrawn whenever a step starts or ends. Once a reply posted a
file below its text, the text so far is `seal`ed where it is, and the body is what follows.
"""

from __future__ import annotations

from bot.vocabulary import events as ev

MARKS = {"pending": "⬜", "running": "⏳", "done": "✅", "failed": "❌", "skipped": "⏭"}


def checklist(plan: ev.PlanUpdated) -> str:
    """The plan as markdown lines, a failed step with why."""
    lines = ["**Plan**" if plan.revision == 0 else f"**Plan** (revised {plan.revision}×)"]
    for step in plan.steps:
        why = f": {step.result}" if step.status == "failed" and step.result else ""
        lines.append(f"{MARKS[step.status]} {step.title}{why}")
    return "\n".join(lines)


class Transcript:
    def __init__(self) -> None:
        self.plan = ""  # the plan's checklist, in a `plan_execute` turn
        self.plan_inline = True  # False where the platform shows the plan its own way
        self.done = ""  # text of the model calls that ended
        self.current = ""  # text of the model call in progress
        self.tool = ""  # the tool running now, if any
        self.ending = ""  # Parley's own closing line (stopped, an error)

    def apply(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.TextDelta):
            self.current += event.text
        elif isinstance(event, ev.TextReset):
            self.current = ""
        elif isinstance(event, ev.Iteration):
            self._end_model_call()
        elif isinstance(event, ev.ToolCallStart):
            self._end_model_call()
            self.tool = event.name
        elif isinstance(event, ev.ToolCallResult):
            self.tool = ""
        elif isinstance(event, ev.PlanUpdated):
            self.plan = checklist(event)
        elif isinstance(event, ev.Error):
            self.ending = f"⚠️ {event.message}"
        elif isinstance(event, ev.Completed) and event.finish_reason == "cancelled":
            self.ending = "⏹ Stopped."
        elif isinstance(event, ev.ConfirmationRequired):
            self._end_model_call()
            self.tool = ""

    def body(self, *extra: str) -> str:
        """The reply's text, with `extra` lines (a tool's status) after it."""
        plan = self.plan if self.plan_inline else ""
        parts = [plan, self.done, self.current, self.ending, *extra]
        return "\n\n".join(part.strip() for part in parts if part.strip())

    def seal(self) -> None:
        """The text so far is shown above something posted below it (a file): the body
        starts anew after it, the plan included until it is redrawn."""
        self._end_model_call()
        self.plan = self.done = ""

    def _end_model_call(self) -> None:
        if self.current.strip():
            self.done = f"{self.done}\n\n{self.current}" if self.done else self.current
        self.current = ""
