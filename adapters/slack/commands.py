"""Slack's slash commands, answered privately in the acknowledgement itself.

`/instructions`, `/tools`, `/skills` and `/activation` are about the channel or DM they are
said in (every thread of it): anyone sees them; in a channel only an admin changes them, in a
DM its person does (there is nothing to activate in a DM)."""

from __future__ import annotations

from typing import Any

from adapters.chat import (
    mode_commands,
    pair_commands,
    reasoning_commands,
    setting_commands,
    steer_commands,
    voice_commands,
)
from adapters.chat.access import refusal
from adapters.chat.preference_commands import answer
from adapters.chat.setting_commands import Asked
from adapters.chat.usage import limits_text, usage_text
from adapters.slack.confirm import literal
from adapters.slack.deps import IngressDeps
from adapters.slack.place import chat_key, in_dm, person, sender_of


async def on_usage(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/usage: tokens and cost of the bot's conversations here (every thread of a
    channel; a DM and its threads), and the person's own room under their limits; a
    stranger is told why not, every time they ask."""
    who = person(str(command.get("user_id", "")))
    if not await deps.gate.lets_in(who, in_dm(command)):
        await ack(refusal(who))
        return
    where = chat_key(str(command.get("team_id", "")), str(command.get("channel_id", "")))
    sessions, tokens = await deps.archive.totals(where)
    scope = "this conversation" if sessions < 2 else f"the {sessions} threads here"
    standing = limits_text(await deps.gate.limits.standing(who))
    await ack(usage_text(tokens, deps.settings.model, scope) + "\n" + standing)


async def on_chat_setting(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/instructions [TEXT | clear], /tools [off NAME | on NAME] and /activation [mention |
    always]: what this channel's or DM's admins choose for everyone in it (`/tools` lists
    the MCP servers' state too)."""
    asked = await _chat_command(ack, command, deps)
    if asked is None:
        return
    who, chat, private = asked
    name = str(command.get("command", "")).removeprefix("/")
    setting = Asked(
        name=name, said=str(command.get("text") or ""), who=who, here=chat, chat=chat,
        private=private, may_change=private or deps.gate.is_admin(who), command=f"/{name}",
        default="mention",
    )  # fmt: skip
    await ack(literal(await setting_commands.answer(deps, setting)))


async def on_pair(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/pair CODE and /unpair PERSON: an admin lets a person in by their code, or out."""
    who = person(str(command.get("user_id", "")))
    name = str(command.get("command", "")).removeprefix("/")
    said = str(command.get("text") or "")
    await ack(await pair_commands.answer(deps.gate, who, name, said))


async def on_preferences(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/preferences [what value]: the person's own, shown and set privately."""
    user = str(command.get("user_id", ""))
    if not await deps.gate.lets_in(person(user), in_dm(command)):
        await ack(refusal(person(user)))
        return
    said = str(command.get("text") or "")
    sender = sender_of(user, "", deps.settings)
    await ack(literal(await answer(deps.people, deps.settings, sender, said)))


async def on_reasoning(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/reasoning [on | stream | hidden | off | default]: whether the model thinks first in
    this channel or DM, and shows it; only an admin may change it."""
    asked = await _chat_command(ack, command, deps)
    if asked is None:
        return
    who, chat, private = asked
    text = await reasoning_commands.answer(
        deps.mailbox, chat, str(command.get("text") or ""),
        deployment=deps.settings.reasoning, chat_kind="private" if private else "thread",
        may_change=deps.gate.is_admin(who),
    )  # fmt: skip
    await ack(text)


async def on_mode(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/mode [plan | direct]: how the agent answers in this channel or DM, every thread."""
    asked = await _chat_command(ack, command, deps)
    if asked is None:
        return
    who, chat, private = asked
    said = str(command.get("text") or "")
    may_change = private or deps.gate.is_admin(who)
    await ack(await mode_commands.answer(deps.mailbox, chat, said, may_change=may_change))


async def on_steer(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/steer [steer | queue | interrupt]: what a message sent while the bot works does in
    this channel or DM, every thread; in a channel only an admin may change it."""
    asked = await _chat_command(ack, command, deps)
    if asked is None:
        return
    who, chat, private = asked
    said = str(command.get("text") or "")
    await ack(await steer_commands.answer(
        deps.mailbox, chat, said, default=deps.settings.steer_mode,
        may_change=private or deps.gate.is_admin(who),
    ))  # fmt: skip


async def on_voice(ack: Any, command: dict[str, Any], deps: IngressDeps) -> None:
    """/voice [on | off | spoken]: whether the replies to the asker in this channel or DM,
    every thread, come with a voice note too; each person's own choice."""
    asked = await _chat_command(ack, command, deps)
    if asked is None:
        return
    who, chat, _ = asked
    await ack(await voice_commands.answer(
        deps.mailbox, chat, who, str(command.get("text") or ""),
        default=deps.settings.voice_replies, speaks=deps.settings.speech_model is not None,
    ))  # fmt: skip


async def _chat_command(
    ack: Any, command: dict[str, Any], deps: IngressDeps
) -> tuple[str, str, bool] | None:
    """Who asked, the chat a command about the channel or DM is for, and whether it is a DM;
    None once a stranger was told they are not let in."""
    who = person(str(command.get("user_id", "")))
    if not await deps.gate.lets_in(who, in_dm(command)):
        await ack(refusal(who))
        return None
    channel = str(command.get("channel_id", ""))
    return who, chat_key(str(command.get("team_id", "")), channel), channel.startswith("D")
