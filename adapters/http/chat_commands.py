"""Commands typed in a conversation of the HTTP API, and so of the web chat, which posts its
messages there: what Telegram's and Slack's chats answer, said the same way.

`/new` and `/compact` are queued in order with the session's messages, as the chat platforms
queue them, and the worker answers them on the session's stream: the post that queued one
streams its answer as it streams a turn. `POST /api/sessions/{id}/compact` queues `/compact`
without a stream (202), for clients that follow the session's events already.

`/checkin …` (quiet check-ins, `adapters.chat.checkin_commands`), `/steer [steer | queue |
interrupt]` (`adapters.chat.steer_commands`) and `/voice [on | off | spoken]`
(`adapters.chat.voice_commands`) are answered at once as in the chats: an API conversation is
its caller's own, so they may change it.

`/memory`, `/memory search WORDS` and `/forget N` are answered at once, from the memories of
the caller's own scope: an API conversation is a private one of the API's caller
(`bot.memory.scope`), so its memories are theirs, as the agent's tools see them there. The
answer is streamed as a turn's would be (a `text_delta`, then `completed`), so a client reads
both kinds alike; it is no event of the session's stream, which carries what the conversation
did. The words are those of `adapters.chat.memory_list`, as Telegram and Slack say them.

A message with files or a recording, or a word after `/` that is none of these, goes to the
model as text, as an unknown command does in Telegram.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

from aiohttp import web

from adapters.chat import (
    checkin_commands,
    digest_commands,
    memory_list,
    steer_commands,
    voice_commands,
)
from adapters.chat.access import Gate
from adapters.http import place, sessions
from adapters.http.common import api_sender, message_id
from adapters.http.messages import Posted
from adapters.web.input import error
from adapters.web.services import Services
from bot.memory.scope import scope_of
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.usage import Usage

QUEUED = frozenset({"new", "compact"})  # the worker runs them, in order with the messages
# answered by the web process at once
AT_ONCE = frozenset({"memory", "forget", "steer", "voice", "checkin"})
_SAID = re.compile(r"/([A-Za-z]+)(?:\s+(.*))?", re.DOTALL)
SSE_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}  # as `sse.relay` sends them


@dataclass(frozen=True)
class Said:
    """A command a message says: its name, lower case, and what follows it."""

    name: str
    args: str = ""

    @property
    def queued(self) -> bool:
        return self.name in QUEUED


def said_command(message: Posted) -> Said | None:
    """The command `message` says, if it is one: text alone, starting with one of the names."""
    found = _SAID.fullmatch(message.text.strip())
    if found is None or message.files or message.said:
        return None
    name = found[1].lower()
    return Said(name, (found[2] or "").strip()) if name in QUEUED | AT_ONCE else None


def command(envelope: Envelope, said: Said) -> Envelope:
    """`envelope` as the queued command `said` (`bot.session.commands`)."""
    return envelope.model_copy(update={"kind": "command", "text": said.name})


async def answer_now(
    request: web.Request, services: Services, session: str, said: Said
) -> web.StreamResponse:
    """`/memory`, `/forget`, `/steer` or `/voice` answered for the request's caller, as a
    streamed turn."""
    text = await answer(services, api_sender(request), session, said)
    response = web.StreamResponse(headers=SSE_HEADERS)
    await response.prepare(request)
    done = ev.Completed(
        finish_reason=ev.FinishReason.END_TURN, iterations=0, usage=Usage(), text=text
    )
    for event in (ev.TextDelta(text=text), done):
        await response.write(f"event: {event.type}\ndata: {event.model_dump_json()}\n\n".encode())
    await response.write_eof()
    return response


async def answer(services: Services, sender: Sender, session: str, said: Said) -> str:
    """What `/memory [search WORDS | digest on|off]` or `/forget N` says to `sender` in
    `session`, in the memories of the scope its turns read and write; or `/steer [MODE]`
    and `/voice [MODE]`, which the caller may change in their own conversation."""
    settings = services.settings
    if said.name == "steer":
        default = settings.steer_mode
        return await steer_commands.answer(
            services.mailbox, session, said.args, default=default, may_change=True
        )
    if said.name == "voice":
        return await voice_commands.answer(
            services.mailbox, session, sender.id, said.args, default=settings.voice_replies,
            speaks=settings.speech_model is not None,
        )  # fmt: skip
    if said.name == "checkin":
        return await checked_in(services, sender, session, said.args)
    scope = scope_of("private", sender.id, session)
    recall = services.recall
    if said.name == "forget":
        gate = Gate(services.settings, services.redis, services.pairing)
        return await memory_list.forget_numbered(recall.memories, gate, scope, said.args, sender)
    if (switch := digest_commands.asked_digest(said.args)) is not None:  # their own, private
        return await digest_commands.switched(
            recall, services.settings, scope, switch, may_change=True, by=sender.id
        )
    try:
        words = memory_list.asked_for(said.args)
    except ValueError as usage:
        return str(usage)
    if words is None:
        shown = await memory_list.listing(recall.memories, scope) or memory_list.EMPTY
    else:
        shown = await memory_list.found(recall, scope, words)
    return shown if isinstance(shown, str) else shown.text


class CommandRoutes:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def compact(self, request: web.Request) -> web.Response:
        """202 once `/compact` is queued for the session; its answer, and what it saved, come
        on the session's events as a turn of the id returned. 409 for an `Idempotency-Key`
        already received, 404 for an unknown session."""
        session = await sessions.key_of(self.services, request)
        envelope = Envelope(
            id=message_id(request),
            session=session,
            kind="command",
            text="compact",
            sender=api_sender(request),
            platform=place.PLATFORM,
        )
        submitted = await self.services.mailbox.submit(envelope)
        if submitted.duplicate:
            return error(409, "this command was already received", id=envelope.id)
        return web.json_response({"command": "compact", "id": envelope.id}, status=202)


async def checked_in(services: Services, sender: Sender, session: str, said: str) -> str:
    """`/checkin …` in an API conversation, which is its caller's own: answered where the
    conversation is (`services.target_of`), in the caller's time zone or the deployment's."""
    settings = services.settings
    zone = await services.people.timezone(sender.id) or settings.timezone
    asked = checkin_commands.Asked(
        said, services.target_of(session), sender, True, zoneinfo.ZoneInfo(zone),
        settings.task_min_interval, settings.tasks_per_person,
    )  # fmt: skip
    return await checkin_commands.answer(services.tasks, asked)


def mount(app: web.Application, services: Services) -> None:
    routes = CommandRoutes(services)
    app.router.add_post("/api/sessions/{session_id}/compact", routes.compact)
