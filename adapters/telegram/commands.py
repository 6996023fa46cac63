"""The bot's commands: shown in Telegram's menu, answered at once or queued in order.

/new and /compact go through the mailbox (neither may overtake a message sent before it, nor
race a turn: the worker runs them in order, under the session's lease); /stop reaches
the worker running the turn at once; /usage reads the record in SQL and the person's limits in
Redis; /help and /tools list the tools and the MCP servers' state, which the workers keep in
Redis; /model sets the session's option in Redis, /mode, /steer and /reasoning the chat's,
/voice the person's own in the chat;
/preferences reads and sets the person's own in SQL; /instructions, /activation, /tools and
/skills read and set what the chat's admins chose for everyone in it, in SQL (a forum topic
may have an instruction of its own); /pair and /unpair (admins) let a person in by their
pairing code, or out (`adapters.chat.pair_commands`); /tasks, with its buttons, has a router
of its own (`task_list`). No command counts against the limits. Commands the bot does not
know go to the agent as ordinary text (and so count as messages).
"""

from __future__ import annotations

import zoneinfo

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import BotCommand, Update
from aiogram.types import Message as TgMessage

from adapters.chat import (
    checkin_commands,
    mode_commands,
    model_commands,
    pair_commands,
    preference_commands,
    reasoning_commands,
    setting_commands,
    steer_commands,
    voice_commands,
)
from adapters.chat.setting_commands import Asked
from adapters.chat.usage import limits_text, usage_text
from adapters.places.telegram import Place, chat_key, person
from adapters.telegram.deps import IngressDeps
from adapters.telegram.place import place_of, sender_of
from bot.tasks.model import Target

MENU = {
    "start": "Say hello",
    "help": "What I can do",
    "new": "Start a new conversation",
    "compact": "Summarise the conversation so far, to save room",
    "stop": "Stop the reply in progress",
    "usage": "Tokens and cost of this chat",
    "model": "Show the model (admins may switch it)",
    "mode": "Answer directly, or plan first",
    "steer": "What a message sent while I work does",
    "voice": "Answer you with a voice note too: on, off, spoken",
    "reasoning": "Think first, and show the thinking (admins)",
    "tasks": "Scheduled tasks in this chat",
    "checkin": "Check on something now and then, quietly",
    "memory": "What I remember here; /memory search WORDS finds by meaning",
    "forget": "Forget a memory by its number",
    "permissions": "Tools you let me use without asking",
    "preferences": "Your language, instruction, model, time zone",
    "tools": "The tools I can use here (admins switch them)",
    "skills": "The skills I can use here (admins switch them)",
    "instructions": "This chat's standing instruction (admins)",
    "activation": "Answer mentions only, or every message (admins)",
    "pair": "Let a person in by their code (admins)",
    "unpair": "Let a paired person out (admins)",
}
QUEUED = {"new", "compact"}  # run by the worker, in order with the chat's messages
ELSEWHERE = {"tasks", "memory", "forget", "permissions", "pair", "unpair"}  # not by `on_command`
HELLO = (
    "Hi! I am an AI assistant. Ask me anything; I can also use tools, and I will ask before "
    "running anything sensitive."
)


def command_names() -> list[str]:
    """The commands answered here."""
    return [name for name in MENU if name not in ELSEWHERE]


def menu() -> list[BotCommand]:
    return [BotCommand(command=name, description=text) for name, text in MENU.items()]


def help_text(private: bool) -> str:
    lines = [f"/{name} - {text}" for name, text in MENU.items()]
    where = "" if private else "\nIn groups I answer when you mention me or reply to me."
    return "Commands:\n" + "\n".join(lines) + where


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher."""
    commands = Router(name="commands")
    commands.message.register(on_command, Command(*command_names()))
    commands.message.register(on_pair, Command("pair", "unpair"))
    return commands


async def on_command(
    message: TgMessage, command: CommandObject, event_update: Update, deps: IngressDeps
) -> None:
    user = message.from_user
    if user is None or user.is_bot or not await deps.admit(message, user):
        return  # another bot's command is not answered either: that could start a loop
    place = place_of(message)
    name = command.command.lower()
    if name in setting_commands.NAMES:
        await deps.answer(message, await chat_setting(name, message, command.args or "", deps))
        return
    if name in QUEUED:
        await deps.submit_command(message, event_update, name)
        return
    if name == "stop":
        running = await deps.mailbox.stop(place.session)
        if not running:
            await deps.answer(message, "Nothing is running right now.")
        return
    if name == "start":
        text = HELLO
    elif name == "help":
        text = help_text(place.private) + "\n\n" + await deps.tools.as_text()
    elif name == "preferences":
        sender = sender_of(user, deps.settings)
        text = await preference_commands.answer(
            deps.people, deps.settings, sender, command.args or ""
        )
    elif name in ("mode", "steer", "checkin", "voice"):
        text = await chat_choice(name, message, command.args or "", deps)
    elif name == "reasoning":
        text = await reasoning_commands.answer(
            deps.mailbox, place.session, command.args or "",
            deployment=deps.settings.reasoning, chat_kind=place.kind,
            may_change=deps.gate.is_admin(person(user.id)),
        )  # fmt: skip
    elif name == "usage":
        text = await usage(place, deps)
        standing = await deps.gate.limits.standing(person(user.id))
        text += "\n" + limits_text(standing)
    else:
        text = await model_commands.answer(
            deps.mailbox, deps.settings, place.session, command.args or "",
            may_change=deps.gate.is_admin(person(user.id)),
        )  # fmt: skip
    await deps.answer(message, text)


async def checkin(message: TgMessage, said: str, deps: IngressDeps) -> str:
    """/checkin: a quiet check-in answered here (`adapters.chat.checkin_commands`); in a
    group only an admin may make one."""
    assert message.from_user is not None
    place = place_of(message)
    sender = sender_of(message.from_user, deps.settings)
    zone = await deps.people.timezone(sender.id) or deps.settings.timezone
    here = Target(
        session=place.session, platform="telegram", chat_kind=place.kind,
        reply_to=place.model_dump(),
    )  # fmt: skip
    asked = checkin_commands.Asked(
        said, here, sender, place.private or deps.gate.is_admin(sender.id), zoneinfo.ZoneInfo(zone),
        deps.settings.task_min_interval, deps.settings.tasks_per_person,
    )  # fmt: skip
    return await checkin_commands.answer(deps.tasks, asked)


async def chat_choice(name: str, message: TgMessage, said: str, deps: IngressDeps) -> str:
    """/mode and /steer: how the chat's turns run, changed by its person in a private chat
    and only by an admin in a group, since there it changes everyone's turns; /checkin
    likewise. /voice: how the chat's replies to the asker come, theirs to choose anywhere."""
    assert message.from_user is not None
    if name == "checkin":
        return await checkin(message, said, deps)
    place = place_of(message)
    if name == "voice":
        return await voice_commands.answer(
            deps.mailbox, place.session, person(message.from_user.id), said,
            default=deps.settings.voice_replies, speaks=deps.settings.speech_model is not None,
        )  # fmt: skip
    may_change = place.private or deps.gate.is_admin(person(message.from_user.id))
    if name == "mode":
        return await mode_commands.answer(deps.mailbox, place.session, said, may_change=may_change)
    return await steer_commands.answer(
        deps.mailbox, place.session, said, default=deps.settings.steer_mode, may_change=may_change
    )


async def chat_setting(name: str, message: TgMessage, said: str, deps: IngressDeps) -> str:
    """/instructions, /tools, /skills and /activation: what the chat's admins choose for
    everyone in it; a forum topic may have an instruction of its own."""
    assert message.from_user is not None
    place, who = place_of(message), person(message.from_user.id)
    asked = Asked(
        name=name, said=said, who=who, here=place.session, chat=chat_key(place.chat_id),
        private=place.private, may_change=place.private or deps.gate.is_admin(who),
        command=f"/{name}", default=deps.group_activation,
    )  # fmt: skip
    return await setting_commands.answer(deps, asked)


async def on_pair(message: TgMessage, command: CommandObject, deps: IngressDeps) -> None:
    """/pair CODE and /unpair PERSON: an admin lets a person in by their code, or out."""
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    who, name = person(message.from_user.id), command.command.lower()
    await deps.answer(message, await pair_commands.answer(deps.gate, who, name, command.args or ""))


async def usage(place: Place, deps: IngressDeps) -> str:
    info = await deps.archive.session(place.session, recent=0)
    current = await deps.mailbox.option(place.session, "model") or deps.settings.model
    return usage_text(info.usage if info else None, current)
