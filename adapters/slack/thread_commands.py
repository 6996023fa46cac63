"""Commands for one conversation in Slack: `/new`, `/compact`, `/stop` and `/model` in a DM,
and `!new`, `!compact`, `!stop`, `!model …`, `!mode …`, `!steer …`, `!voice …`, `!checkin …`,
`!reasoning …` said in a thread, since Slack's slash commands do not work inside threads (a
check-in made there answers in that thread); and `!instructions …`, `!tools …` and
`!activation …`, which are about the thread's channel, as their slash commands are. Each is
answered as its Telegram counterpart is, with the same rules: anyone let in starts over,
compacts or stops their conversation, only an admin switches models or reasoning, and
`!mode`, `!steer`, `!instructions`, `!tools` and `!activation` in a channel are an admin's
too; `!voice` is each person's own.

A thread's command is for that thread's session alone, so `!stop` never stops another
thread's turn; `!new` and `!compact` are queued in order with the messages sent before them,
and the worker answers `!compact` in the conversation once it is done. A slash command in a
channel, where every thread is a conversation of its own, says how to say it there.

The Stop button under a long reply (`stop_button`) stops its turn as `!stop` does, but only
the reply it was posted for, only in the thread it was pressed in, and in a channel only when
pressed by the person answered or an admin; a press once that reply is over changes nothing.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Awaitable, Callable
from typing import Any

from adapters.chat import (
    checkin_commands,
    mode_commands,
    model_commands,
    reasoning_commands,
    setting_commands,
    steer_commands,
    voice_commands,
)
from adapters.chat.access import refusal
from adapters.chat.intake import Arrival
from adapters.chat.setting_commands import Asked
from adapters.slack.deps import IngressDeps
from adapters.slack.place import PLATFORM, Place, chat_key, in_dm, person, sender_of
from adapters.slack.stop_button import Pressed, showing
from bot.tasks.model import Target

SAID = re.compile(
    r"!(new|compact|stop|model|mode|steer|voice|checkin|reasoning|instructions|tools|skills"
    r"|activation)"
    r"(?:\s+(.*))?",
    re.DOTALL | re.IGNORECASE,
)
IN_A_THREAD = (
    "In a channel every thread is a conversation of its own: say !{name} in the thread it is for."
)
NOTHING_RUNNING = "Nothing is running right now."
ALREADY_FINISHED = "That reply has already finished."
NOT_HERE = "That Stop button is not for this conversation."
NOT_YOURS = "Only the person it answers, or an admin, can stop this reply."
STARTED_OVER = "Starting over: I forget this conversation from here on."
COMPACTING = "Compacting this conversation; I will say here how much it saved."

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
    if name in setting_commands.NAMES:
        await tell(await _about_channel(name, args, who, place, deps))
    elif name in ("new", "compact"):
        await deps.mailbox.submit(_arrival(name, event, place, deps).envelope("command"))
        await tell(STARTED_OVER if name == "new" else COMPACTING)
    elif name == "stop":
        if not await deps.mailbox.stop(place.session):
            await tell(NOTHING_RUNNING)
    elif name == "model":
        await tell(await model_commands.answer(
            deps.mailbox, deps.settings, place.session, args, may_change=admin
        ))  # fmt: skip
    elif name in ("mode", "steer", "voice"):
        await tell(
            await _chat_choice(name, args, who, place, deps, may_change=place.is_im or admin)
        )
    elif name == "checkin":
        await tell(await _checkin(args, user, place, deps, may_make=place.is_im or admin))
    else:
        await tell(await reasoning_commands.answer(
            deps.mailbox, place.session, args, deployment=deps.settings.reasoning,
            chat_kind=place.kind, may_change=admin,
        ))  # fmt: skip


async def _chat_choice(
    name: str, args: str, who: str, place: Place, deps: IngressDeps, *, may_change: bool
) -> str:
    """`!mode` and `!steer`: how the turns of the thread's channel or DM run, as `/mode`
    and `/steer` there (`adapters.slack.commands`); `!voice`: how the replies to `who` come
    there, theirs to choose."""
    if name == "voice":
        return await voice_commands.answer(
            deps.mailbox, place.session, who, args, default=deps.settings.voice_replies,
            speaks=deps.settings.speech_model is not None,
        )  # fmt: skip
    if name == "mode":
        return await mode_commands.answer(deps.mailbox, place.session, args, may_change=may_change)
    return await steer_commands.answer(
        deps.mailbox, place.session, args, default=deps.settings.steer_mode,
        may_change=may_change,
    )  # fmt: skip


async def _checkin(args: str, user: str, place: Place, deps: IngressDeps, *, may_make: bool) -> str:
    """`!checkin …`: a quiet check-in whose runs answer in this thread (or DM), in the
    person's time zone (`adapters.chat.checkin_commands`); in a channel an admin's."""
    sender = sender_of(user, "", deps.settings)
    zone = await deps.people.timezone(sender.id) or deps.settings.timezone
    here = Target(
        session=place.session, platform=PLATFORM, chat_kind=place.kind,
        reply_to=place.model_dump(),
    )  # fmt: skip
    asked = checkin_commands.Asked(
        args, here, sender, may_make, zoneinfo.ZoneInfo(zone),
        deps.settings.task_min_interval, deps.settings.tasks_per_person,
    )  # fmt: skip
    return await checkin_commands.answer(deps.tasks, asked)


async def _about_channel(name: str, args: str, who: str, place: Place, deps: IngressDeps) -> str:
    """`!instructions`, `!tools` and `!activation` in a thread: about its channel or DM, as
    the slash commands there are (`adapters.slack.commands`)."""
    chat = chat_key(place.team, place.channel)
    may_change = place.is_im or deps.gate.is_admin(who)
    asked = Asked(
        name=name, said=args, who=who, here=chat, chat=chat, private=place.is_im,
        may_change=may_change, command=f"!{name}", default="mention",
    )  # fmt: skip
    return await setting_commands.answer(deps, asked)


async def on_slash(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """`/new`, `/compact`, `/stop` or `/model [NAME | default]` in a DM (its own
    conversation, outside threads); in a channel, how to say it in a thread."""
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


async def on_stop_press(ack: Any, body: dict[str, Any], deps: IngressDeps) -> None:
    """A press of a reply's Stop button: its turn stops, as with `!stop` (module docstring)."""
    await ack()
    user = str(body["user"]["id"])
    container = body.get("container") or {}
    channel = str(container.get("channel_id") or "")
    here = Place(
        team=str((body.get("team") or {}).get("id") or body["user"].get("team_id", "")),
        channel=channel,
        thread_ts=container.get("thread_ts"),
        is_im=channel.startswith("D"),
    )
    answer = await _stop_answer(user, body["actions"][0].get("value"), here, deps)
    if answer:
        deps.note(here.team, channel, user, answer, here.thread_ts)


async def _stop_answer(user: str, value: Any, here: Place, deps: IngressDeps) -> str:
    """What the presser is told ("" when the turn stops and its reply says so)."""
    who = person(user)
    if not deps.gate.may_use(who):
        return refusal(who)
    pressed = Pressed.parse(value) if isinstance(value, str) else None
    if pressed is None or pressed.session != here.session:
        return NOT_HERE
    shown = await showing(deps.redis, here.session)
    if shown is None or shown.reply != pressed.reply:
        return ALREADY_FINISHED
    if not here.is_im and user != shown.user and not deps.gate.is_admin(who):
        return NOT_YOURS
    return "" if await deps.mailbox.stop(here.session) else ALREADY_FINISHED


def _arrival(name: str, event: dict[str, Any], place: Place, deps: IngressDeps) -> Arrival:
    """The command `name` as an arrival of the conversation, for the mailbox to queue in
    order."""
    user = str(event["user"])
    return Arrival(
        id=place.envelope_id(str(event["ts"])),
        sender=sender_of(user, "", deps.settings),
        text=name,
        session=place.session,
        platform=PLATFORM,
        chat_kind=place.kind,
        reply_to=place.model_dump(),
        where=place.channel,
        scope=place.team,
    )
