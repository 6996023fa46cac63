"""The text a reply shows, built from a turn's events the same way on every platform.

Text of model calls that ended stays; the call in progress can be taken back (a retried
model call resets it); a running tool is remembered until it ends, for platforms that show
it; Parley's own closing line (an error, a stop) comes last. Each helper a turn started
(`delegate`) has a status line, its task with a mark for how it is doing, above the text,
unless the platform shows helpers its own way (`helpers_inline`).
A `plan_execute` turn's plan comes first, as a checklist redrawn whenever a step starts
or ends. Above everything, when the person spoke rather than typed, a quoted line with
what Parley heard (`HEARD_MOST` characters of it at most, its markdown escaped so a
person's words never format the reply).
The model's thinking, where the turn shows it, comes next as a quote: its latest part, as
much as the platform shows (`thought_limit`), since a chat has no room for pages of it. A
turn a fallback model took over says so once, after its text. Once a reply posted a file
below its text, the text so far is `seal`ed where it is, and the body is what follows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.helpers import SHOWN, task_line
from bot.vocabulary.helpers import TOOL as HELPER_TOOL

HEARD_MOST = 1000  # characters of a voice note's transcript shown above a reply
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation mark

MARKS = {"pending": "⬜", "running": "⏳", "done": "✅", "failed": "❌", "skipped": "⏭"}


def checklist(plan: ev.PlanUpdated) -> str:
    """The plan as markdown lines, a failed step with why."""
    lines = ["**Plan**" if plan.revision == 0 else f"**Plan** (revised {plan.revision}×)"]
    for step in plan.steps:
        why = f": {step.result}" if step.status == "failed" and step.result else ""
        lines.append(f"{MARKS[step.status]} {step.title}{why}")
    return "\n".join(lines)


def helper_task(arguments: object, most: int = SHOWN) -> str:
    """A helper's task as its status line shows it: one line, `most` characters."""
    task = arguments.get("task", "") if isinstance(arguments, dict) else ""
    return task_line(str(task), most)


def heard_in(envelopes: Sequence[Envelope]) -> str:
    """What was said in the voice notes of a turn's messages, shortened to `HEARD_MOST`."""
    heard = " … ".join(e.heard.strip() for e in envelopes if e.heard.strip())
    heard = " ".join(heard.split())  # one line, however it was said
    return heard if len(heard) <= HEARD_MOST else heard[: HEARD_MOST - 1].rstrip() + "…"


def quoted(heard: str) -> str:
    """`heard` as a markdown quote whose every mark is literal."""
    return "> 🎤 " + _PUNCTUATION.sub(r"\\\1", heard)


class Transcript:
    def __init__(self, heard: str = "") -> None:
        self.heard = heard  # what the person said in a voice note (`heard_in`)
        self.heard_inline = True  # False where the platform quotes it its own way
        self.plan = ""  # the plan's checklist, in a `plan_execute` turn
        self.plan_inline = True  # False where the platform shows the plan its own way
        self.done = ""  # text of the model calls that ended
        self.current = ""  # text of the model call in progress
        self.tool = ""  # the tool running now, if any
        self.ending = ""  # Parley's own closing line (stopped, an error)
        self.answered_by = ""  # the fallback model that took the turn over, if one did
        self.thought_limit = 0  # characters of thinking shown; 0: none
        self.thinking = ""  # the thinking of the model calls that ended
        self.thinking_now = ""  # of the call in progress
        self.helpers: dict[str, tuple[str, str]] = {}  # call id -> (task, status)
        self.helpers_inline = True  # False where the platform shows helpers its own way

    def apply(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.TextDelta):
            self.current += event.text
        elif isinstance(event, ev.ThinkingDelta):
            self.thinking_now += event.text
        elif isinstance(event, ev.FailedOver):
            self.answered_by = event.model
        elif isinstance(event, ev.TextReset):
            self.current = self.thinking_now = ""
        elif isinstance(event, ev.Iteration):
            self._end_model_call()
        elif isinstance(event, ev.ToolCallStart):
            self._end_model_call()
            self.tool = event.name
            self._helper(event)
        elif isinstance(event, ev.ToolCallResult):
            self.tool = ""
            self._helper(event)
        elif isinstance(event, ev.PlanUpdated):
            self.plan = checklist(event)
        elif isinstance(event, ev.Error):
            self.ending = f"⚠️ {event.message}"
        elif isinstance(event, ev.Completed) and event.finish_reason == "cancelled":
            self.ending = "⏹ Stopped."
        elif isinstance(event, ev.ConfirmationRequired):
            self._end_model_call()
            self.tool = ""

    def _helper(self, event: ev.ToolCallStart | ev.ToolCallResult) -> None:
        """A helper's status line: running from its call's start, then done or failed."""
        if isinstance(event, ev.ToolCallStart) and event.name == HELPER_TOOL:
            self.helpers[event.call_id] = (helper_task(event.arguments), "running")
        elif isinstance(event, ev.ToolCallResult) and event.call_id in self.helpers:
            status = "failed" if event.is_error else "done"
            self.helpers[event.call_id] = (self.helpers[event.call_id][0], status)

    def body(self, *extra: str) -> str:
        """The reply's text, with `extra` lines (a tool's status) after it."""
        plan = self.plan if self.plan_inline else ""
        heard = quoted(self.heard) if self.heard and self.heard_inline else ""
        switched = f"_↪ answered by {self.answered_by}_" if self.answered_by else ""
        thought = self.thought()
        helpers = "\n".join(
            f"{MARKS[status]} Helper: {task}"
            for task, status in (self.helpers.values() if self.helpers_inline else ())
        )
        parts = [
            heard,
            thought,
            plan,
            helpers,
            self.done,
            self.current,
            switched,
            self.ending,
            *extra,
        ]
        return "\n\n".join(part.strip() for part in parts if part.strip())

    def thought(self) -> str:
        """The thinking shown, as a markdown quote ("" when none is)."""
        thinking = "\n\n".join(t for t in (self.thinking, self.thinking_now) if t.strip())
        if not self.thought_limit or not thinking.strip():
            return ""
        if len(thinking) > self.thought_limit:
            thinking = "…" + thinking[-self.thought_limit :].lstrip()
        lines = f"💭 {thinking.strip()}".splitlines()
        return "\n".join(f"> {line}".rstrip() for line in lines)

    def seal(self) -> None:
        """The text so far is shown above something posted below it (a file): the body
        starts anew after it, the plan included until it is redrawn; what was heard and
        thought stays above, where it was shown."""
        self._end_model_call()
        self.plan = self.done = ""
        self.heard = self.thinking = ""

    def _end_model_call(self) -> None:
        if self.current.strip():
            self.done = f"{self.done}\n\n{self.current}" if self.done else self.current
        if self.thinking_now.strip():
            joined = f"{self.thinking}\n\n{self.thinking_now}"
            self.thinking = joined if self.thinking else self.thinking_now
        self.current = self.thinking_now = ""
