"""Slack events in: each becomes an envelope in the session's mailbox, or a quick answer.

Listeners run on a slack-bolt AsyncApp with `process_before_response`: Slack's request is
answered only after the listener submitted to the mailbox, which takes milliseconds, so a
crash or a Redis outage before that makes Slack deliver the event again. Anything slower
(a refusal, updating a prompt) runs after the answer, in the background. The envelope id is
the message's channel and ts, so Slack's retries, and the `message` and `app_mention` events
Slack sends for the same mention, are answered once.

Listeners are plain functions: what they need comes from bolt's context as `deps`
(`deps.IngressDeps`, put there by a middleware), so presses and commands live in modules of
their own that import the deps module, never this one.
"""

from __future__ import annotations

import html
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.chat.intake import Arrival
from adapters.slack.ask import ACTION as ANSWER_ACTION
from adapters.slack.assistant import context_of, on_context_changed, on_thread_started, title_once
from adapters.slack.commands import (
    on_chat_setting,
    on_mode,
    on_pair,
    on_preferences,
    on_reasoning,
    on_steer,
    on_usage,
    on_voice,
)
from adapters.slack.confirm import ACTIONS
from adapters.slack.deps import IngressDeps, provider
from adapters.slack.files import files_of
from adapters.slack.memory_list import ACTION as MEMORY_ACTION
from adapters.slack.memory_list import on_forget, on_memory
from adapters.slack.memory_list import on_press as on_memory_press
from adapters.slack.permission_list import ACTION as PERMISSION_ACTION
from adapters.slack.permission_list import on_permissions
from adapters.slack.permission_list import on_press as on_permission_press
from adapters.slack.place import PLATFORM, Place, account, chat_key, person, place_of, sender_of
from adapters.slack.presses import on_answer_press, on_press
from adapters.slack.stop_button import ACTION as STOP_ACTION
from adapters.slack.task_list import ACTION as TASK_ACTION
from adapters.slack.task_list import on_press as on_task_press
from adapters.slack.task_list import on_tasks
from adapters.slack.thread_commands import on_said, on_slash, on_stop_press, said_command
from bot.people.pairing import PrivateChat
from bot.redis import keys

EMPTY = "Ask me something after the mention, e.g. `@{name} what can you do?`"
THREAD_MEMORY = 30 * 86_400
PEOPLE_SUBTYPES = {None, "file_share", "thread_broadcast"}


def register(app: AsyncApp, deps: IngressDeps) -> None:
    """Wire the listeners into a bolt app; each receives `deps` from the middleware."""
    app.middleware(provider(deps))
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.event("assistant_thread_started")(on_thread_started)
    app.event("assistant_thread_context_changed")(on_context_changed)
    app.action(re.compile(f"^({'|'.join(ACTIONS)})$"))(on_press)
    app.action(ANSWER_ACTION)(on_answer_press)
    app.action(TASK_ACTION)(on_task_press)
    app.action(MEMORY_ACTION)(on_memory_press)
    app.action(PERMISSION_ACTION)(on_permission_press)
    app.action(STOP_ACTION)(on_stop_press)
    app.command("/usage")(on_usage)
    app.command("/tasks")(on_tasks)
    app.command("/memory")(on_memory)
    app.command("/forget")(on_forget)
    app.command("/permissions")(on_permissions)
    app.command("/preferences")(on_preferences)
    app.command("/mode")(on_mode)
    app.command("/steer")(on_steer)
    app.command("/voice")(on_voice)
    app.command("/reasoning")(on_reasoning)
    for setting in ("/tools", "/skills", "/instructions", "/activation"):
        app.command(setting)(on_chat_setting)
    for name in ("/new", "/compact", "/stop", "/model"):
        app.command(name)(on_slash)
    for name in ("/pair", "/unpair"):
        app.command(name)(on_pair)
    # Everything else is acknowledged, so Slack does not retry what Parley ignores.
    app.event(re.compile(".*"))(_ignore)
    app.action(re.compile(".*"))(_acknowledge)


async def on_mention(event: dict[str, Any], context: AsyncBoltContext, deps: IngressDeps) -> None:
    if not _from_person(event):
        return
    await handle(event, place_of(event, _team(context, event)), context, deps)


async def on_message(event: dict[str, Any], context: AsyncBoltContext, deps: IngressDeps) -> None:
    """DMs, replies in the threads the bot is part of, and every message of a channel whose
    admins chose `/activation always` (`adapters.chat.activation`: within its burst); mentions
    come as app_mention."""
    if not _from_person(event):
        return
    place = place_of(event, _team(context, event))
    if not place.is_im:
        if context.bot_user_id and f"<@{context.bot_user_id}>" in event.get("text", ""):
            return
        joined = "thread_ts" in event and await deps.redis.exists(thread_key(place))
        if not joined and not await _answers_all(place, deps):
            await _heard(event, place, context, deps)
            return
    await handle(event, place, context, deps)


async def _heard(
    event: dict[str, Any], place: Place, context: AsyncBoltContext, deps: IngressDeps
) -> None:
    """Keep a channel message not for the bot, from someone who may use it, for the
    channel's next turn to see (PARLEY_GROUP_CONTEXT)."""
    who = person(str(event["user"]))
    if deps.gate.may_use(who):
        text = clean(event.get("text", ""), context.bot_user_id)
        await deps.group_context.keep(chat_key(place.team, place.channel), who, text)


async def _answers_all(place: Place, deps: IngressDeps) -> bool:
    """Whether a channel message not addressed to the bot is one for it: the channel answers
    every message, and this one is within the channel's burst."""
    chat = chat_key(place.team, place.channel)
    if not await deps.activations.always(chat, default="mention"):
        return False
    return await deps.activations.within_burst(chat)


async def handle(
    event: dict[str, Any], place: Place, context: AsyncBoltContext, deps: IngressDeps
) -> None:
    """One message for the bot, through the intake (`adapters.chat.intake`): refused with a
    note only its sender sees, or queued for the session; in a channel, after what was said
    there before it (PARLEY_GROUP_CONTEXT)."""
    user = str(event["user"])

    async def tell(text: str) -> None:
        deps.note(place.team, place.channel, user, text, place.thread_ts)

    said = said_command(clean(event.get("text", ""), context.bot_user_id))
    if said is not None and not event.get("files"):  # `!stop`: slash commands fail in threads
        await on_said(*said, event, place, deps, tell)
        return
    where = await context_of(deps, place)  # None: not an assistant thread
    text = clean(event.get("text", ""), context.bot_user_id)
    if text and not place.is_im and deps.gate.may_use(person(user)):
        text = await deps.group_context.with_recent(chat_key(place.team, place.channel), text)
    arrival = Arrival(
        id=place.envelope_id(str(event["ts"])),
        sender=sender_of(user, "", deps.settings),
        text=text,
        session=place.session,
        platform=PLATFORM,
        chat_kind=place.kind,
        reply_to=place.model_dump(),
        where=place.channel,
        scope=place.team,  # a Slack user id is unique only in its workspace
        if_empty=EMPTY.format(name=context.bot_user_id or "bot"),
        files=files_of(
            event, deps.calls.client, deps.settings.slack_api_url, deps.files.limits.file_bytes
        ),
        context=where or "",
        private=_private(place),
    )
    submitted = await deps.intake.take(arrival, tell)
    if submitted is not None and where is not None:
        await title_once(deps, place, arrival.text)
    if submitted is not None and not place.is_im:  # part of this thread now: no mention needed
        await deps.redis.set(thread_key(place), "1", ex=THREAD_MEMORY)


def thread_key(place: Place) -> str:
    """Marks a channel thread the bot is part of, so replies in it need no mention."""
    return keys.slack_thread(place.session)


def clean(text: str, bot_user_id: str | None) -> str:
    """The text meant for the model: without the bot's mention, with Slack's escapes undone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", "", text)
    return html.unescape(text).strip(" \n,:").strip()  # whitespace only is nothing


def _from_person(event: dict[str, Any]) -> bool:
    """Messages by people: not the bot's own, not other bots' (answering them could loop),
    not edits, deletions or joins."""
    return (
        event.get("subtype") in PEOPLE_SUBTYPES
        and not event.get("bot_id")
        and bool(event.get("user"))
    )


def _private(place: Place) -> PrivateChat | None:
    """The DM `place` is in, where PARLEY_DM_POLICY decides; None in channels."""
    if not place.is_im:
        return None
    return PrivateChat(account(place.team), PLATFORM, place.session, place.model_dump())


def _team(context: AsyncBoltContext, event: dict[str, Any]) -> str:
    return str(context.team_id or event.get("team") or "")


async def _ignore() -> None:
    return None


async def _acknowledge(ack: Any) -> None:
    await ack()
