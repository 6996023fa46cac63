"""The task updates of a streamed Slack reply: a `plan_execute` turn's steps, and each helper.

Where a reply streams (in a thread), Slack shows tasks in the stream's message
(`TaskUpdateChunk`): a plan's steps, each sent when it starts or ends, and each helper a
turn starts with `delegate`, in progress from its call's start, then complete or failed
with a short output when its call's result comes. A task is created by its first update
and changed by the next ones with its id, so the ids keep them apart: a plan step's is its
number, a helper's is `helper-` and its call's id, so a plan and helpers in one turn never
share one. `TaskBoard` remembers what it last sent for each id and gives only the updates
that change something: an event that comes twice, or a plan that changed one step, sends
nothing more than what is new. A helper is known by its call's id, so a start that comes
again never takes a finished helper back to "in progress".
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.messages.chunk import TaskUpdateChunk

from adapters.chat.transcript import helper_task
from bot.vocabulary import events as ev
from bot.vocabulary.helpers import call_part

TASK_TEXT = 256  # Slack's limit on a task's details and output; its title is kept to it too
TASK_STATUS = {
    "pending": "pending",
    "running": "in_progress",
    "done": "complete",
    "failed": "error",
    "skipped": "complete",
}
HELPER_RUN = "[helper run "  # the line above a helper's answer in its call's result


def task_chunk(step: ev.PlanStep) -> TaskUpdateChunk:
    """A plan step as a task: its number is its id."""
    details = "Skipped: a step it needs did not succeed." if step.status == "skipped" else None
    return TaskUpdateChunk(
        id=str(step.id),
        title=step.title[:TASK_TEXT],
        status=TASK_STATUS[step.status],
        details=details,
        output=step.result[:TASK_TEXT] or None,
    )


def helper_id(call_id: str) -> str:
    """A helper's task id: never a plan step's, which is a number."""
    return f"helper-{call_part(call_id)}"


def short(text: str) -> str:
    """`text` on one line, cut to what a task shows."""
    line = " ".join(text.split())
    return line if len(line) <= TASK_TEXT else line[: TASK_TEXT - 1].rstrip() + "…"


def helper_output(result: ev.ToolCallResult) -> str:
    """What a finished helper's task says: its answer without the line naming its run, or
    why it failed."""
    content = result.content
    if not result.is_error and content.startswith(HELPER_RUN):
        content = content.partition("\n")[2]
    return short(content)


class TaskBoard:
    """The tasks one streamed reply has sent, by id, and the updates that change them."""

    def __init__(self) -> None:
        self.sent: dict[str, dict[str, Any]] = {}  # each task as last sent
        self.helpers: dict[str, str] = {}  # a helper's call id -> its title

    def plan(self, event: ev.PlanUpdated) -> list[TaskUpdateChunk]:
        """The updates for the steps that changed since they were last sent."""
        return self._changed([task_chunk(step) for step in event.steps])

    def helper(self, event: ev.ToolCallStart | ev.ToolCallResult) -> list[TaskUpdateChunk]:
        """The update for a helper that started or ended, if it changes its task."""
        if isinstance(event, ev.ToolCallStart):
            if event.call_id in self.helpers:
                return []  # a start seen before: the task stays as it is, running or done
            title = helper_task(event.arguments, TASK_TEXT) or "Helper"
            self.helpers[event.call_id] = title
            status, output = "in_progress", None
        else:
            title = self.helpers.get(event.call_id, "")
            if not title:
                return []  # the result of a helper this reply never showed starting
            status = "error" if event.is_error else "complete"
            output = helper_output(event) or None
        chunk = TaskUpdateChunk(
            id=helper_id(event.call_id), title=title, status=status, output=output
        )
        return self._changed([chunk])

    def mark(self, chunks: list[TaskUpdateChunk]) -> None:
        """`chunks` are in the stream now."""
        self.sent.update({str(chunk.id): chunk.to_dict() for chunk in chunks})

    def _changed(self, chunks: list[TaskUpdateChunk]) -> list[TaskUpdateChunk]:
        return [chunk for chunk in chunks if self.sent.get(str(chunk.id)) != chunk.to_dict()]
