"""`/tasks` on every platform: what the list of a chat's tasks says, what its Cancel buttons
carry, and the answer to a press of one.

A chat's tasks are those of its session and of the sessions inside it (a forum topic, a
Slack thread), so one list shows everything that will post there. Cancelling follows the
rule of approvals (`Task.may_be_ended_by`): the person who made the task or an admin; a task
from the configuration has no button, it ends when it is taken out of the configuration.

Each task's line says the tokens its runs spent today and its daily cap (`bot.tasks.spend`),
so a background task's spend is never a surprise.

How a list is posted and a press answered is each platform's business; here is only what to
say, so Telegram and Slack say the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from adapters.chat.item_list import ItemButtons, Listing
from bot.tasks.book import TaskBook
from bot.tasks.model import Task
from bot.tasks.spend import TaskSpend, cap_of
from bot.vocabulary.envelope import Sender

HEADER = "Scheduled tasks in this chat:"
EMPTY = (
    "No scheduled tasks in this chat. Ask me, e.g. 'remind me in 20 minutes to call Ann' or "
    "'every weekday at 9 give me a summary of the news'."
)
# What one message holds comfortably: Telegram's 4,096 characters and 100 buttons, Slack's
# 50 blocks (a section per task).
SHOWN = 30
TEXT_LIMIT = 3_500
CONFIGURED = " (set in the configuration)"
MALFORMED = "This button is not one I know; send /tasks for a fresh list."
BUTTONS = ItemButtons("task:cancel:")

Name = Callable[[Sender], str]


@dataclass(frozen=True)
class CancelAnswer:
    """The answer to a press; `line` replaces the task's line in the list (and its button
    goes) when the press found the task ended, by this press or before it."""

    text: str
    task_id: int | None = None
    line: str | None = None
    alert: bool = True


async def chat_listing(book: TaskBook, chat: str, deployment: int) -> Listing | None:
    """The list of the chat's active tasks with what each spent today, against the
    deployment's cap `deployment` (PARLEY_TASK_TOKENS_PER_DAY) or its own."""
    tasks = await book.in_chat(chat)
    spent = await TaskSpend(book.redis).today(task.id for task in tasks)
    return listing(tasks, spent, deployment)


def spend_line(task: Task, spent: int, deployment: int) -> str:
    """`1,200 of 100,000 tokens today`, or without a cap `1,200 tokens today`."""
    cap = cap_of(task, deployment)
    return f"{spent:,} of {cap:,} tokens today" if cap else f"{spent:,} tokens today"


def listing(
    tasks: list[Task], spent: Mapping[int, int] | None = None, deployment: int = 0
) -> Listing | None:
    """The list of `tasks` (active ones, oldest first), None when there are none; with
    `spent`, each task's tokens today and its cap. It stops at `SHOWN` tasks or `TEXT_LIMIT`
    characters, whichever comes first, and says how many more there are."""
    if not tasks:
        return None
    lines = [HEADER]
    size = len(HEADER)
    for task in tasks[:SHOWN]:
        line = task.summary() + (CONFIGURED if task.from_config else "")
        if spent is not None:
            line += f" · {spend_line(task, spent.get(task.id, 0), deployment)}"
        if size + 1 + len(line) > TEXT_LIMIT:
            break
        lines.append(line)
        size += 1 + len(line)
    listed = tasks[: len(lines) - 1]
    if len(tasks) > len(listed):
        lines.append(f"… and {len(tasks) - len(listed)} more (ask me to list them all).")
    return Listing(lines, [task.id for task in listed if not task.from_config])


def button_label(task_id: int) -> str:
    return f"Cancel #{task_id}"


def in_chat(task: Task, chat: str) -> bool:
    """Whether `task` posts in `chat` (its session, or a topic or thread inside it)."""
    session = task.target.session
    return session == chat or session.startswith(f"{chat}:")


def named(person: Sender) -> str:
    return person.name or person.id


async def cancel(
    book: TaskBook,
    task_id: int | None,
    chat: str,
    presser: Sender,
    name: Name = named,
    literal: Callable[[str], str] = str,
) -> CancelAnswer:
    """Cancel task `task_id` for `presser`, pressed in `chat`; `name` shows a person as the
    platform does (a Slack mention, a Telegram name), `literal` shows the task's prompt as
    written where the platform's text is markup."""
    if task_id is None:
        return CancelAnswer(MALFORMED)
    task = await book.get(task_id)
    if task is None or not in_chat(task, chat):
        return CancelAnswer(f"There is no task {task_id} in this chat.")
    if not task.active:
        return CancelAnswer(
            f"Task {task_id} has already ended.", task_id, ended_line(task, literal=literal)
        )
    if task.from_config:
        return CancelAnswer(
            f"Task {task_id} is set in the configuration; only an operator can remove it there."
        )
    outcome, now = await book.end(task_id, presser)
    if outcome == "forbidden":
        return CancelAnswer(
            f"Only {name(task.creator)}, who made task {task_id}, or an admin may cancel it."
        )
    if outcome != "cancelled" or now is None:  # ended meanwhile, or gone
        shown = ended_line(now, literal=literal) if now is not None else None
        return CancelAnswer(f"Task {task_id} has already ended.", task_id, shown)
    return CancelAnswer(
        f"Cancelled task {task_id}.",
        task_id,
        ended_line(now, name(presser), literal),
        alert=False,
    )


def ended_line(task: Task, by: str = "", literal: Callable[[str], str] = str) -> str:
    """The task's line once it ended: `#7 cancelled by Ann: call Ann`."""
    how = {"done": "done", "missed": "missed", "cancelled": "cancelled"}.get(task.status, "ended")
    if by:
        how += f" by {by}"
    prompt = task.prompt if len(task.prompt) <= 80 else task.prompt[:79] + "…"
    return f"#{task.id} {how}: {literal(prompt)}"
