"""`/checkin`: quiet check-ins, the same on every platform.

`/checkin every 2h look at the build and tell me only if it failed` makes a recurring task
marked `quiet`: its runs are told to answer `NOTHING_TO_REPORT` when there is nothing worth
saying, and such a run posts nothing (`bot.session.quiet`), so a check-in speaks only when it
has news. Its runs use PARLEY_CHECKIN_MODEL, a cheaper model, where one is set, and count
against the task's daily token cap like any task's. `/checkin` alone lists the chat's
check-ins; `/checkin off N` cancels one, by the rule of approvals. In a group only an admin
may make one, since its runs post for everyone and cost the deployment.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime

from adapters.chat.task_list import in_chat
from bot.tasks.book import NewTask, TaskBook, TaskRefused
from bot.tasks.model import MAX_PROMPT, Target
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import WhenError, check_frequency, parse_when

HOW = (
    "Say /checkin every 2h look at the build and tell me only if it failed; "
    "/checkin lists this chat's check-ins, /checkin off N cancels one."
)
NONE = "No check-ins in this chat. " + HOW
ADMINS_ONLY = "In a group only an admin may make a check-in."
# `every 2h …`, `every 30 minutes …`, `every day …`: the interval, then what to check.
_EVERY = re.compile(
    r"(every\s+(?:[0-9]{1,6}(?:\.[0-9]{1,3})?\s*[a-z]+|(?:an?\s+)?[a-z]+))\s+(.+)",
    re.IGNORECASE | re.DOTALL,
)
_OFF = re.compile(r"(?:off|cancel|stop)\s+#?([0-9]{1,18})", re.IGNORECASE)


@dataclass(frozen=True)
class Asked:
    """Who asked what, where: `here` is where the check-in's runs answer, `zone` the person's
    time zone, the rest the operator's rules for tasks (`bot.tasks.tools.TaskRules`)."""

    said: str
    here: Target
    person: Sender
    may_make: bool
    zone: zoneinfo.ZoneInfo
    min_interval: float
    per_person: int


async def answer(book: TaskBook, asked: Asked) -> str:
    said = asked.said.strip()
    if not said:
        return await listed(book, chat_of(asked.here.session))
    if off := _OFF.fullmatch(said):
        return await cancelled(book, int(off[1]), asked)
    every = _EVERY.fullmatch(said)
    if every is None:
        return HOW
    if not asked.may_make:
        return ADMINS_ONLY
    return await made(book, asked, every[1], every[2].strip())


async def listed(book: TaskBook, chat: str) -> str:
    quiet = [task for task in await book.in_chat(chat) if task.quiet]
    if not quiet:
        return NONE
    return "Check-ins in this chat:\n" + "\n".join(task.summary() for task in quiet)


async def made(book: TaskBook, asked: Asked, when: str, prompt: str) -> str:
    """A recurring quiet task answered here, or why not."""
    if len(prompt) > MAX_PROMPT:
        return f"That is too long for a check-in: at most {MAX_PROMPT} characters."
    now = datetime.now(UTC)
    try:
        schedule = parse_when(when, asked.zone, now)
        check_frequency(schedule, now, asked.min_interval)
    except WhenError as exc:
        return str(exc)
    if schedule.kind == "once":
        return HOW
    new = NewTask(asked.here, asked.person, prompt, when, schedule, quiet=True)
    try:
        task = await book.add(new, max_active=asked.per_person, now=now)
    except TaskRefused as exc:
        return str(exc)
    return (
        f"Check-in #{task.id} set: {schedule.describe()}, I look and say something only when "
        f"there is something worth saying. /checkin off {task.id} cancels it."
    )


async def cancelled(book: TaskBook, task_id: int, asked: Asked) -> str:
    task = await book.get(task_id)
    if task is None or not task.quiet or not in_chat(task, chat_of(asked.here.session)):
        return f"There is no check-in {task_id} in this chat."
    outcome, _ = await book.end(task_id, asked.person)
    if outcome == "cancelled":
        return f"Cancelled check-in #{task_id}."
    if outcome == "forbidden":
        return f"Only the person who made check-in {task_id}, or an admin, may cancel it."
    return f"Check-in {task_id} has already ended."
