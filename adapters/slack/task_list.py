"""`/tasks` in Slack: the channel's scheduled tasks in one message, a Cancel button each.

The list covers the channel or DM (`slack:TEAM:CHANNEL`), its threads included. It is posted
in the channel rather than acknowledged privately, so an admin or the task's maker can press
its buttons and everyone sees what was cancelled; with no tasks, the short answer is private,
and so is the list, without buttons, where the bot may not post (a channel it is not in).
A press is acknowledged at once; the presser gets a private note, and the list is updated: the
task's section says it ended and loses its button. What is said is shared with Telegram
(`adapters.chat.task_list`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from adapters.chat import item_list, task_list
from adapters.slack.confirm import literal
from adapters.slack.deps import IngressDeps
from adapters.slack.item_list import ListPress, let_in, section
from adapters.slack.place import chat_key, sender_of, user_of
from bot.vocabulary.envelope import Sender

ACTION = "parley_task_cancel"
HEADER_BLOCK = "parley_tasks"
POSTING_WAIT = 2.0  # Slack wants its acknowledgement within 3 s
NOT_POSTED = (
    "\n\n(I could not post this list here, so it has no Cancel buttons: invite me to this "
    "channel, or ask me to cancel a task.)"
)


async def on_tasks(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/tasks: the list, posted in the channel; a stranger is told why not, every time."""
    asker = await let_in(ack, command, deps)
    if asker is None:
        return
    team, channel = asker.team, asker.channel
    cap = deps.settings.task_tokens_per_day
    shown = await task_list.chat_listing(deps.tasks, chat_key(team, channel), cap)
    if shown is None:
        await ack(task_list.EMPTY)
        return
    text = literal(shown.text)
    posting = deps.later(
        deps.calls.quietly(
            "chat.postMessage", team, channel=channel, text=text, blocks=blocks(shown)
        )
    )
    done, _ = await asyncio.wait({posting}, timeout=POSTING_WAIT)
    if posting in done and posting.result() is None:  # not in the channel, say
        await ack(text + NOT_POSTED)
        return
    await ack()  # posted, or still on its way


def blocks(shown: item_list.Listing) -> list[dict[str, Any]]:
    """A section per line; a task that may be cancelled here has its button beside it."""
    header, *lines = shown.lines
    made = [{**section(f"*{literal(header)}*"), "block_id": HEADER_BLOCK}]
    for line in lines:
        block = section(literal(line))
        task_id = _task_of(line)
        if task_id is not None and task_id in shown.buttons:
            block["block_id"] = f"task_{task_id}"
            block["accessory"] = {
                "type": "button",
                "text": {"type": "plain_text", "text": task_list.button_label(task_id)},
                "action_id": ACTION,
                "value": str(task_id),
                "style": "danger",
            }
        made.append(block)
    return made


async def on_press(ack: Any, body: dict[str, Any], deps: IngressDeps) -> None:
    await ack()
    press = ListPress.of(body)
    answer = await task_list.cancel(
        deps.tasks,
        item_list.parse_id(press.value),
        chat_key(press.team, press.channel),
        sender_of(press.user, "", deps.settings),
        name=mention,
        literal=literal,
    )
    deps.note(press.team, press.channel, press.user, answer.text, press.thread_ts)
    if answer.task_id is not None and answer.line is not None:
        message = body.get("message") or {}
        shown = _with_ended(message.get("blocks") or [], answer.task_id, answer.line)
        deps.later(
            deps.calls.quietly(
                "chat.update",
                press.team,
                channel=press.channel,
                ts=(body.get("container") or {}).get("message_ts"),
                text=_text_of(shown),
                blocks=shown,
            )
        )


def mention(sender: Sender) -> str:
    """A Slack person as Slack shows them; another platform's as its name or id."""
    user = user_of(sender.id)
    return f"<@{user}>" if user is not None else sender.name or sender.id


def _with_ended(blocks: list[dict[str, Any]], task_id: int, line: str) -> list[dict[str, Any]]:
    """The list's blocks with the task's section replaced by `line` (mrkdwn already: its
    prompt escaped, its mention meant to show as one), its button gone."""
    ended = {**section(line), "block_id": f"task_{task_id}"}
    return [ended if _is_line_of(block, task_id) else block for block in blocks]


def _is_line_of(block: dict[str, Any], task_id: int) -> bool:
    text = str((block.get("text") or {}).get("text") or "")
    return block.get("type") == "section" and text.startswith(f"#{task_id} ")


def _text_of(blocks: list[dict[str, Any]]) -> str:
    """The notification text of the updated list, for clients that cannot show blocks."""
    return "\n".join(str((b.get("text") or {}).get("text", "")) for b in blocks)


def _task_of(line: str) -> int | None:
    """The task id a line of the list starts with (`#7 …`)."""
    number = line[1:].split(" ", 1)[0] if line.startswith("#") else ""
    return item_list.parse_id(number)
