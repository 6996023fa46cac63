"""The tools people schedule with: `schedule_task`, `list_tasks`, `cancel_task`, and
`set_timezone`, since "at 9" means the person's 9.

They are built with what they work on (`task_tools`: the task book, the people's zones and
the operator's rules for tasks) and run on the worker's loop, whose database connections
those are. They answer where they were called: a task's runs are posted in the chat, topic
or thread the task was made in.
"""

from __future__ import annotations

import logging
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import Field

from bot.config.zones import known_zone
from bot.store.people import People
from bot.tasks.book import NewTask, TaskBook, TaskRefused
from bot.tasks.model import MAX_PROMPT, IfMissed, Target
from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.vocabulary.schedule import MAX_WHEN, WhenError, check_frequency, parse_when

log = logging.getLogger(__name__)
WHEN = (
    "When to run, read in the person's time zone: an ISO 8601 date-time "
    "('2026-12-01T09:00'), a delay ('in 20 minutes', 'in 2 hours'), a five-field cron "
    "expression ('0 9 * * 1-5' = weekdays at 9:00; weekdays 0 or 7 = Sunday), or an "
    "interval ('every 30 minutes')."
)
IF_MISSED = (
    "If the run comes due while Parley is down: 'skip' runs it late only within a grace "
    "period, 'run_once' runs it once when Parley is back."
)

TOKENS_PER_DAY = (
    "The most tokens the task's runs may spend in a day (UTC), if the person wants a lower cap "
    "than the deployment's; a run due once it is spent does not run."
)


@dataclass(frozen=True)
class TaskRules:
    """The operator's limits on the tasks people make: how often one may run at most
    (PARLEY_TASK_MIN_INTERVAL, seconds), how many a person may have active at once
    (PARLEY_TASKS_PER_PERSON), and the tokens each may spend a day (PARLEY_TASK_TOKENS_PER_DAY,
    0: no cap), within which a task may have a lower cap of its own."""

    min_interval: float
    per_person: int
    tokens_per_day: int = 0


def task_tools(book: TaskBook, people: People, rules: TaskRules) -> list[Tool]:
    """`schedule_task`, `list_tasks` and `cancel_task` on `book`, and `set_timezone`, which
    keeps a person's zone in `people`, where `schedule_task` reads it."""
    return [
        _schedule_task(book, people, rules),
        _list_tasks(book),
        _cancel_task(book),
        _set_timezone(people),
    ]


async def _person_zone(ctx: ToolContext, people: People) -> zoneinfo.ZoneInfo:
    """The person's zone as it is stored now: one they set earlier in this same turn ("I'm
    in Lisbon, remind me at 9") counts, though the turn began in the old one."""
    try:
        zone = await people.timezone(ctx.user.id)
    except Exception:  # the database is away: the zone the turn began with
        log.warning("could not read the time zone of %s", ctx.user.id, exc_info=True)
        zone = None
    return zoneinfo.ZoneInfo(zone) if zone else ctx.timezone


def _schedule_task(book: TaskBook, people: People, rules: TaskRules) -> Tool:
    @tool(isolation="loop")
    async def schedule_task(
        ctx: ToolContext,
        prompt: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_PROMPT,
                description="What to do at each run, written as a request to you "
                "('Remind Ann to call the bank', 'Summarise the open issues').",
            ),
        ],
        when: Annotated[str, Field(min_length=1, max_length=MAX_WHEN, description=WHEN)],
        if_missed: Annotated[IfMissed, Field(description=IF_MISSED)] = "skip",
        tokens_per_day: Annotated[int | None, Field(ge=1, description=TOKENS_PER_DAY)] = None,
    ) -> str:
        """Schedule a prompt to run later in this chat, once (a reminder) or repeatedly (a daily
        summary). At each run you receive the prompt here and your answer is posted here. Tell
        the person the time zone and the next run times this returns."""
        if not prompt.strip():
            raise ToolError("The prompt is empty: say what to do at each run.")
        now = datetime.now(UTC)
        try:
            schedule = parse_when(when, await _person_zone(ctx, people), now)
            check_frequency(schedule, now, rules.min_interval)
        except WhenError as exc:
            raise ToolError(str(exc)) from None
        cap = rules.tokens_per_day
        if tokens_per_day is not None and cap and tokens_per_day > cap:
            raise ToolError(f"A task may spend at most {cap:,} tokens a day here.")
        new = NewTask(
            _target(ctx), ctx.user, prompt, when, schedule, if_missed, tokens_per_day=tokens_per_day
        )
        try:
            task = await book.add(new, max_active=rules.per_person, now=now)
        except TaskRefused as exc:
            raise ToolError(str(exc)) from None
        return task.confirmation(now)

    return schedule_task


def _target(ctx: ToolContext) -> Target:
    """Where the runs of a task made in this call are answered: here."""
    return Target(
        session=ctx.session_key,
        platform=ctx.platform,
        chat_kind=ctx.chat_kind,
        reply_to=dict(ctx.reply_to),
    )


def _list_tasks(book: TaskBook) -> Tool:
    @tool(read_only=True, isolation="loop")
    async def list_tasks(
        ctx: ToolContext,
        scope: Annotated[
            Literal["chat", "mine"],
            Field(description="'chat': the tasks of this chat; 'mine': the person's, everywhere"),
        ] = "chat",
    ) -> str:
        """The active scheduled tasks, with their ids, schedules and next run times."""
        if scope == "mine":
            tasks = await book.of_person(ctx.user.id)
        else:
            tasks = await book.in_chat(ctx.session_key)
        if not tasks:
            return "No active tasks."
        return "\n".join(task.summary() for task in tasks)

    return list_tasks


def _cancel_task(book: TaskBook) -> Tool:
    @tool(isolation="loop")
    async def cancel_task(
        ctx: ToolContext,
        task_id: Annotated[int, Field(ge=1, description="The task's number, from list_tasks")],
    ) -> str:
        """Cancel a scheduled task; only the person who made it, or an admin, may."""
        outcome, task = await book.end(task_id, ctx.user)
        if outcome == "cancelled":
            return f"Cancelled task {task_id}; it will not run again."
        if outcome == "not_found":
            raise ToolError(f"There is no task {task_id}.")
        if outcome == "forbidden":
            assert task is not None
            if task.from_config:
                raise ToolError(f"Task {task_id} comes from Parley's configuration (PARLEY_TASKS).")
            owner = task.creator.name or task.creator.id
            raise ToolError(f"Only {owner}, who made task {task_id}, or an admin may cancel it.")
        return f"Task {task_id} had already ended ({task.status if task else 'gone'})."

    return cancel_task


def _set_timezone(people: People) -> Tool:
    @tool(isolation="loop")
    async def set_timezone(
        ctx: ToolContext,
        timezone: Annotated[
            str,
            Field(
                max_length=64,
                description="IANA time zone of where the person is, e.g. Europe/Lisbon for "
                "'I'm in Lisbon'",
            ),
        ],
    ) -> str:
        """Remember the person's time zone: their times ('at 9', 'tomorrow') are read in it from
        now on, in every chat. Tasks already scheduled keep the zone they were made in. Call it
        before schedule_task, not alongside it: calls made together run at the same time."""
        try:
            zone = known_zone(timezone)
        except ValueError:
            raise ToolError(
                f"Unknown time zone {timezone!r}; use an IANA name such as Europe/Lisbon."
            ) from None
        await people.set_timezone(ctx.user.id, zone)
        now = datetime.now(zone)
        return f"Time zone set to {zone.key}; it is {now:%a %Y-%m-%d %H:%M %Z} there now."

    return set_timezone
