"""Commands for one conversation in Slack: `/new`, `/stop` and `/model` in a DM, and `!new`,
`!stop`, `!model …`, `!mode …`, `!reasoning …` said in a thread, since Slack's slash commands
do not work inside threads. Each is answered as its Telegram counterpart is, with the same
rules: anyone let in starts over or stops their conversation, only an admin switches models
or reasoning, and `!mode` in a channel is an admin's too.

A thread's command is for that thread's session alone, so `!stop` never stops another
thread's turn; `!new` is queued in order with the messages sent before it. A slash command
in a channel, where every thread is a conversation of its own, says how to say it there.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from adapters.chat import mode_commands, model_commands, reasoning_commands
from adapters.chat.access import refusal
from adapters.chat.intake import Arrival
from adapters.slack.deps import IngressDeps
from adapters.slack.place import PLATFORM, Place, in_dm, person, sender_of

SAID = re.compile(r"!(new|stop|model|mode|reasoning)(?:\s+(.*))?", re.DOTALL | re.IGNORECASE)
IN_A_THREAD = (
    "In a channel every thread is a conversation of its own: say !{name} in the thread it is for."
)
NOTHING_RUNNING = "Nothing is running right now."
STARTED_OVER = "Starting over: I forget this conversation from here on."

Tell = Callable[[str], Awaitable[None]]


def said_command(text: str) -> tuple[str, str] | None:
    """The command and its argument a message says (`!stop`, `!model gpt-4o`), if it is one."""
    found = SAID.fullmatch(text.strip())
    return (found.group(1).lower(), (found.group(2) or "").strip()) if found else None


async def on_said(
    name: str, args: str, event: dict[str, Any], place: Place, deps: IngressDeps, tell: Tell
) -> None:
    """A command said in `place` (a thread, or a DM) by the person of `event`."""
    user = str(event["user"])
    who = person(user)
    if not await deps.gate.lets_in(who, place.is_im):
        await tell(refusal(who))
        return
    admin = deps.gate.is_admin(who)
    if name == "new":
        await deps.mailbox.submit(_arrival(event, place, deps).envelope("command"))
        await tell(STARTED_OVER)
    elif name == "stop":
        if not await deps.mailbox.stop(place.session):
            await tell(NOTHING_RUNNING)
    elif name == "model":
        await tell(await model_commands.answer(
            deps.mailbox, deps.settings, place.session, args, may_change=admin
        ))  # fmt: skip
    elif name == "mode":
        session, may_change = place.session, place.is_im or admin
        await tell(await mode_commands.answer(deps.mailbox, session, args, may_change=may_change))
    else:
        await tell(await reasoning_commands.answer(
            deps.mailbox, place.session, args, deployment=deps.settings.reasoning,
            chat_kind=place.kind, may_change=admin,
        ))  # fmt: skip


async def on_slash(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """`/new`, `/stop` or `/model [NAME | default]` in a DM (its own conversation, outside
    threads); in a channel, how to say it in a thread."""
    name = str(command.get("command", "")).lstrip("/").lower()
    user, channel = str(command.get("user_id", "")), str(command.get("channel_id", ""))
    if not await deps.gate.lets_in(person(user), in_dm(command)):
        await ack(refusal(person(user)))
        return
    if not channel.startswith("D"):
        await ack(IN_A_THREAD.format(name=name))
        return
    said: list[str] = []

    async def tell(text: str) -> None:
        said.append(text)

    place = Place(team=str(command.get("team_id", "")), channel=channel, user=user, is_im=True)
    event = {"user": user, "ts": str(command.get("trigger_id") or command.get("command_ts", ""))}
    await on_said(name, str(command.get("text") or ""), event, place, deps, tell)
    await ack("\n".join(said) or "Stopping.")


def _arrival(event: dict[str, Any], place: Place, deps: IngressDeps) -> Arrival:
    """The command as an arrival of the conversation, for the mailbox to queue in order."""
    user = str(event["user"])
    return Arrival(
        id=place.envelope_id(str(event["ts"])),
        sender=sender_of(user, "", deps.settings),
        text="new",
        session=place.session,
        platform=PLATFORM,
        chat_kind=place.kind,
        reply_to=place.model_dump(),
        where=place.channel,
        scope=place.team,
    )
