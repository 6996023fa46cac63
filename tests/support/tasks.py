"""Scheduled tasks in end-to-end tests: a scripted model that makes, runs and cancels them,
and what the database says about them (the tasks and runs tables, read as a dashboard would).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store.schema import RunRow, TaskRow
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec

TASKS: Table = TaskRow.__table__  # type: ignore[assignment]
RUNS: Table = RunRow.__table__  # type: ignore[assignment]
# What the header of a scheduled run's message begins with (bot.tasks.model.Task.envelope).
RUN_HEADER = "(Scheduled task "


def is_run(request: RecordedRequest) -> bool:
    """Whether the turn the model is asked about is a task's run: its last user message with
    text (tool results come after it while the turn goes on) has the run's header."""
    for message in reversed(request.body.get("messages", [])):
        content = message.get("content") or []
        texts = (
            [content]
            if isinstance(content, str)
            else [
                str(block.get("text", ""))
                for block in content
                if isinstance(block, dict) and block.get("type") == "text"
            ]
        )
        if message.get("role") == "user" and texts:
            return RUN_HEADER in "\n".join(texts)
    return False


def said(request: RecordedRequest) -> str:
    """What the person wrote last (a time stamp line may come before it)."""
    return request.last_user_text().splitlines()[-1]


@dataclass
class Brain:
    """The fake model's script for tests of tasks: a person's message containing a key of
    `calls` gets its tool calls (or its whole reply), and the turn ends with `done` once
    their results are in.
    A task's run is answered `{reply} #{n}`, its n-th run, where the reply is `replies`'
    for the task's prompt or `run_reply`; or it makes `run_calls` first.

    Every request is kept by the fake, so a test can read the tool results the model saw."""

    calls: dict[str, list[ToolCallSpec] | Reply] = field(default_factory=dict)
    done: str = "Done."
    run_reply: str = "Reminder: call Ann."
    replies: dict[str, str] = field(default_factory=dict)
    run_calls: list[ToolCallSpec] = field(default_factory=list)
    after_run_calls: str = "The run is over."
    runs: dict[str, int] = field(default_factory=dict)

    def __call__(self, request: RecordedRequest) -> Reply:
        if request.tool_results():
            return Reply(text=self.after_run_calls if is_run(request) else self.done)
        if is_run(request):
            prompt = said(request)
            self.runs[prompt] = n = self.runs.get(prompt, 0) + 1
            if self.run_calls:
                return Reply(text="Working on it.", tool_calls=list(self.run_calls))
            return Reply(text=f"{self.replies.get(prompt, self.run_reply)} #{n}")
        asked = said(request)
        wanted = next((calls for key, calls in self.calls.items() if key in asked), [])
        if isinstance(wanted, Reply):
            return wanted
        return Reply(text="On it.", tool_calls=list(wanted))


def results(requests: Sequence[RecordedRequest], tool: str) -> list[str]:
    """The results of every call of `tool` the model made, as it read them."""
    named: dict[str, str] = {}
    for request in requests:
        for message in request.body.get("messages", []):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    named[block["id"]] = block["name"]
    seen: dict[str, str] = {}
    for request in requests:
        for call_id, content in request.tool_results():
            if named.get(call_id) == tool:
                seen[call_id] = content
    return list(seen.values())


def database_of(env: dict[str, str]) -> str:
    """The database Parley's processes started with `env` share."""
    return env["DATABASE_URL"]


async def rows(database_url: str, table: Table, **where: Any) -> list[Any]:
    """The rows of `table` whose columns equal `where`, oldest first."""
    engine = create_async_engine(database_url)
    try:
        query = select(table).where(*(table.c[name] == value for name, value in where.items()))
        order = table.c.id if table is TASKS else table.c.started_at
        async with engine.connect() as db:
            return list((await db.execute(query.order_by(order))).all())
    finally:
        await engine.dispose()
