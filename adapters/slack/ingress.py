"""Slack events in: each becomes an envelope in the session's mailbox, or a quick answer.

Listeners run on a slack-bolt AsyncApp with `process_before_response`: Slack's request is
answered only after the listener submitted to the mailbox, which takes milliseconds, so a
crash or a Redis outage before that makes Slack deliver the event again. Anything slower
(a refusal, updating a prompt) runs after the answer, in the background. The envelope id is
the message's channel and ts, so Slack's retries, and the `message` and `app_mention` events
Slack sends for the same mention, are answered once.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from adapters.slack.client import SlackCalls
from adapters.slack.confirm import ACTIONS
from adapters.slack.place import PLATFORM, Place, person, place_of, sender_of
from adapters.slack.presses import Presses
from adapters.usage import usage_text
from bot import keys
from bot.config import Settings
from bot.confirmations import Confirmations
from bot.envelope import MAX_TEXT, Envelope
from bot.mailbox import Mailbox
from bot.store.archive import Archive

log = logging.getLogger(__name__)
REFUSAL = "Sorry, this assistant is private. Ask its owner to add you: your id is {id}."
TOO_LONG = "That message is too long for me ({n} characters; the limit is {limit})."
EMPTY = "Ask me something after the mention, e.g. `@{name} what can you do?`"
REFUSAL_MEMORY = 3_600
THREAD_MEMORY = 30 * 86_400
PEOPLE_SUBTYPES = {None, "file_share", "thread_broadcast"}
SUGGESTED = [
    {"title": "What can you do?", "message": "What can you do?"},
    {"title": "Summarise a text", "message": "Summarise this for me:"},
    {"title": "Calculate something", "message": "What is 2^32 / 7?"},
]


@dataclass
class IngressDeps:
    settings: Settings
    calls: SlackCalls
    redis: Redis
    mailbox: Mailbox
    confirmations: Confirmations
    archive: Archive
    background: set[asyncio.Task[Any]] = field(default_factory=set)

    def later(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run cosmetic work after Slack got its answer; kept referenced until it ends."""
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)


class Ingress:
    """The listeners; `register` wires them into a bolt app."""

    def __init__(self, deps: IngressDeps) -> None:
        self.deps = deps
        self.presses = Presses(deps)

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_mention)
        app.event("message")(self.on_message)
        app.event("assistant_thread_started")(self.on_thread_started)
        app.action(re.compile(f"^({'|'.join(ACTIONS)})$"))(self.presses.on_press)
        app.command("/usage")(self.on_usage)
        # Everything else is acknowledged, so Slack does not retry what Parley ignores.
        app.event(re.compile(".*"))(_ignore)
        app.action(re.compile(".*"))(_acknowledge)

    # --- events -----------------------------------------------------------------------------

    async def on_mention(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        if not _from_person(event):
            return
        await self.handle(event, place_of(event, _team(context, event)), context)

    async def on_message(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        """DMs, and replies in the threads the bot is part of; mentions come as app_mention."""
        if not _from_person(event):
            return
        place = place_of(event, _team(context, event))
        if not place.is_im:
            if context.bot_user_id and f"<@{context.bot_user_id}>" in event.get("text", ""):
                return
            if "thread_ts" not in event or not await self.deps.redis.exists(
                self._thread_key(place)
            ):
                return
        await self.handle(event, place, context)

    async def on_thread_started(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        """A new thread in the assistant pane: offer a few prompts to start with."""
        thread = event.get("assistant_thread", {})
        if not thread.get("channel_id") or not thread.get("thread_ts"):
            return
        self.deps.later(
            self.deps.calls.quietly(
                "assistant.threads.setSuggestedPrompts",
                _team(context, event),
                channel_id=thread["channel_id"],
                thread_ts=thread["thread_ts"],
                title="Try asking",
                prompts=SUGGESTED,
            )
        )

    async def on_usage(self, ack: Any, command: dict[str, Any]) -> None:
        """/usage: tokens and cost of the bot's conversations here (every thread of a
        channel; a DM and its threads), answered privately in the acknowledgement."""
        who = person(str(command.get("user_id", "")))
        if not self.deps.settings.may_use(who):
            await ack(REFUSAL.format(id=who))
            return
        where = f"{PLATFORM}:{command.get('team_id', '')}:{command.get('channel_id', '')}"
        sessions, tokens = await self.deps.archive.totals(where)
        scope = "this conversation" if sessions < 2 else f"the {sessions} threads here"
        await ack(usage_text(tokens, self.deps.settings.model, scope))

    # --- one message ------------------------------------------------------------------------

    async def handle(self, event: dict[str, Any], place: Place, context: AsyncBoltContext) -> None:
        user = str(event["user"])
        who = person(user)
        if not self.deps.settings.may_use(who):
            await self.refuse(place, user)
            return
        text = clean(event.get("text", ""), context.bot_user_id)
        if not text:
            self.note(place, user, EMPTY.format(name=context.bot_user_id or "bot"))
            return
        if len(text) > MAX_TEXT:
            self.note(place, user, TOO_LONG.format(n=len(text), limit=MAX_TEXT))
            return
        envelope = Envelope(
            id=f"slack:{place.team}:{place.channel}:{event['ts']}",
            session=place.session,
            text=text,
            sender=sender_of(user, "", self.deps.settings),
            platform=PLATFORM,
            chat_kind=place.kind,
            reply_to=place.model_dump(),
        )
        await self.deps.mailbox.submit(envelope)
        if not place.is_im:  # the bot is part of this thread now: replies need no mention
            await self.deps.redis.set(self._thread_key(place), "1", ex=THREAD_MEMORY)

    async def refuse(self, place: Place, user: str) -> None:
        """A stranger is told why, privately and at most once an hour, at no model cost."""
        key = keys.slack_refused(place.team, user)
        if await self.deps.redis.set(key, "1", nx=True, ex=REFUSAL_MEMORY):
            self.note(place, user, REFUSAL.format(id=person(user)))
        log.info("refused %s in %s", person(user), place.channel)

    def note(self, place: Place, user: str, text: str) -> None:
        """An ephemeral answer only `user` sees, in the thread they wrote in."""
        self.deps.later(
            self.deps.calls.quietly(
                "chat.postEphemeral",
                place.team,
                channel=place.channel,
                user=user,
                text=text,
                thread_ts=place.thread_ts,
            )
        )

    def _thread_key(self, place: Place) -> str:
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


def _team(context: AsyncBoltContext, event: dict[str, Any]) -> str:
    return str(context.team_id or event.get("team") or "")


async def _ignore() -> None:
    return None


async def _acknowledge(ack: Any) -> None:
    await ack()
