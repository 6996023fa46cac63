"""The HTTP API: sessions, streamed messages, stop, confirmations, tools, health, tasks,
memories.

Every bad request gets a JSON error with a 4xx status and nothing is enqueued for it. The
record of every platform's sessions (list, read, delete, stats) is in `records.py`, the
scheduled tasks (list, read, create, cancel) in `tasks.py`, what people asked to be
remembered (list, delete) in `people.py`, a chat's standing instruction in `chats.py`, the
commands a message may be (`/memory`, `/compact`…) and `POST …/compact` in `chat_commands.py`,
how a session's turns run (model, mode, reasoning, tools, output schema) and the models it
may name in `session_settings.py`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel, ConfigDict, Field, model_validator
from redis.exceptions import RedisError

from adapters.chat import decisions, steer_commands
from adapters.chat.access import too_long
from adapters.chat.decisions import Choice, Press
from adapters.http import (
    agent_run,
    answers,
    chat_commands,
    chats,
    evaluations,
    pages,
    people,
    place,
    readiness,
    session_settings,
    sessions,
    tasks,
    traces,
)
from adapters.http.answers import AnswerIn
from adapters.http.common import USER, api_sender, message_id
from adapters.http.files import Files
from adapters.http.messages import posted
from adapters.http.rate_limit import rate_middleware
from adapters.http.records import Records
from adapters.http.server import LIMITS
from adapters.http.session_settings import SessionChange, SessionIn
from adapters.http.sse import HUB, STREAMS, close_streams, relay, stream_position
from adapters.http.streams import Slot, StreamHub
from adapters.web import callers
from adapters.web.input import error, read_body, refusal
from adapters.web.services import Services
from adapters.web.shutdown import DEADLINE, Deadline
from bot.config.settings import Settings
from bot.files.voice import with_transcripts
from bot.redis import keys
from bot.redis.confirmations import Outcome, Status
from bot.skills.library import Skills
from bot.store.database import UNAVAILABLE as DATABASE_UNAVAILABLE
from bot.telemetry import metrics
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.questions import MAX_QUESTIONS

log = logging.getLogger(__name__)
MAX_BODY = 64 * 1024
RETRY_AFTER_S = 5  # how soon a client may try again after a 503
EVENT_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
# The status of the answer to a decision that decided nothing, by what it came to.
DECISION_CODES: dict[Outcome, int] = {
    "expired": 410,
    "decided": 409,
    "forbidden": 403,
    "unknown": 404,
}
StaticFiles = web.StaticResource  # the pages' own files are public, like the pages
PUBLIC = web.AppKey("public_paths", set[str])  # routes that check their own credentials
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class DecisionIn(BaseModel):
    """An approval's decision, or (`answers`) the answers to an `ask_user` question."""

    model_config = ConfigDict(extra="forbid")

    decision: str | None = Field(default=None, pattern="^(approve|deny)$")
    answers: list[AnswerIn] | None = Field(default=None, min_length=1, max_length=MAX_QUESTIONS)

    @model_validator(mode="after")
    def _one(self) -> DecisionIn:
        if (self.decision is None) == (self.answers is None):
            raise ValueError("give decision or answers")
        return self


class Api:
    def __init__(self, services: Services, hub: StreamHub) -> None:
        self.services = services
        self.hub = hub
        self.skill_library = Skills.of(services.settings)  # read as the workers read it

    def _reserve(self) -> Slot:
        """A place for one more event stream, or 503 before anything is done for the request."""
        slot = self.hub.reserve()
        if slot is None:
            raise refusal(
                web.HTTPServiceUnavailable,
                "too many open event streams; try again later",
                headers={"Retry-After": str(RETRY_AFTER_S)},
                retry=True,
            )
        return slot

    async def create_session(self, request: web.Request) -> web.Response:
        """A new session, running its turns as its body chooses (`session_settings`: the
        model, else PARLEY_MODEL; the mode, reasoning, tools and output schema); nothing is
        made for a choice that is refused."""
        body = await read_body(request, SessionIn) if request.body_exists else SessionIn()
        config = await session_settings.checked(self.services, body)
        session_id = place.new_session_id()
        session = place.session_key(session_id)
        kept = await session_settings.keep(self.services.mailbox, session, body, config)
        record = {"owner": request[USER], "created_at": time.time()}
        await self.services.redis.set(keys.http_session(session_id), json.dumps(record))
        answer = session_settings.made(self.services.settings, kept)
        return web.json_response({"id": session_id, **answer}, status=201)

    async def change_session(self, request: web.Request) -> web.Response:
        """`{"mode": "plan_execute"}`, `{"reasoning": "on"}`, `{"model": …}`, `{"tools":
        […]}`, `{"output_schema": {…}}`, or several (null: back to the deployment's): how its
        next turns run. Answered with the fields changed, as kept."""
        session = await self._known(request)
        body: SessionChange = await read_body(request, SessionChange)
        config = await session_settings.checked(self.services, body)
        changed = await session_settings.keep(self.services.mailbox, session, body, config)
        return web.json_response({"id": place.session_id(session), **changed})

    async def _known(self, request: web.Request) -> str:
        """The session's key, or 404 for an id this API never made."""
        return await sessions.key_of(self.services, request)

    async def post_message(self, request: web.Request) -> web.StreamResponse:
        """A message, streamed back as its turn's events; or a command typed as one
        (`adapters.http.chat_commands`): a queued one's answer streamed the same way."""
        session = await self._known(request)
        envelope_id = message_id(request)  # refused before any file is stored
        message = await posted(request, self.services.files, session)
        said = chat_commands.said_command(message)
        if said is not None and not said.queued:
            return await chat_commands.answer_now(request, self.services, session, said)
        text = with_transcripts(message.text, message.said)
        if (unread := too_long(text)) is not None:  # a long recording's transcript
            raise refusal(web.HTTPUnprocessableEntity, "invalid request", problems=[unread])
        envelope = Envelope(
            id=envelope_id,
            session=session,
            text=text,
            attachments=message.files,
            heard="\n\n".join(message.said),
            sender=api_sender(request),
            platform=place.PLATFORM,
        )
        if said is not None:
            envelope = chat_commands.command(envelope, said)
        with self._reserve() as slot:
            since = await stream_position(self.services.redis, session)
            submitted = await self.services.mailbox.submit(envelope)
            if submitted.duplicate:
                return error(409, "this message was already received", id=envelope.id)
            if said is None:  # a message, as a chat's intake takes it (`/steer interrupt`)
                default = self.services.settings.steer_mode
                await steer_commands.interrupt(self.services.mailbox, envelope, default)
            return await relay(request, slot, session, envelope.id, since, heard=envelope.heard)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Every event of the session as it happens, from `Last-Event-ID` when resuming."""
        session = await self._known(request)
        with self._reserve() as slot:
            since = request.headers.get("Last-Event-ID", "")
            if not EVENT_ID.match(since):
                since = await stream_position(self.services.redis, session)
            return await relay(request, slot, session, None, since)

    async def stop(self, request: web.Request) -> web.Response:
        session = await self._known(request)
        reached = await self.services.redis.publish(keys.CANCEL_CHANNEL, session)
        return web.json_response({"stop": "sent", "workers": reached}, status=202)

    async def decide(self, request: web.Request) -> web.StreamResponse:
        confirmation_id = request.match_info["confirmation_id"]
        body: DecisionIn = await read_body(request, DecisionIn)
        streaming = "text/event-stream" in request.headers.get("Accept", "")
        with self._reserve() if streaming else contextlib.nullcontext() as slot:
            return await self._decide(request, confirmation_id, body, slot)

    async def _decide(
        self, request: web.Request, confirmation_id: str, body: DecisionIn, slot: Slot | None
    ) -> web.StreamResponse:
        """The shared decision (`adapters.chat.decisions`), answered with a status code:
        the caller decides only what it asked for itself."""
        choice: Choice = "approve" if body.decision == "approve" else "deny"
        press = Press(confirmation_id, choice, api_sender(request), place.PLATFORM, own_only=True)
        confirmations = self.services.confirmations
        asked = await confirmations.get(confirmation_id)
        if asked is None:
            return error(404, "unknown confirmation")
        if asked.is_question != (body.answers is not None):
            wanted = "answers" if asked.is_question else "a decision"
            return error(400, f"this confirmation takes {wanted}")
        if body.answers is not None:
            given = answers.chosen(asked, body.answers)
            if isinstance(given, str):
                return error(400, given)
            outcome = await answers.answer(confirmations, asked, given, press.person)
            status: Status = "answered"
        else:
            outcome = (await decisions.claim(press, confirmations)).outcome
            status = press.status
        if outcome != "ok":
            current = await confirmations.get(confirmation_id)
            return error(
                DECISION_CODES.get(outcome, 409),
                f"confirmation {outcome}",
                status=current.status if current else None,
            )
        since = await stream_position(self.services.redis, asked.session)
        envelope = await decisions.queue(press, asked, self.services.mailbox, status)
        if slot is not None:
            return await relay(request, slot, asked.session, envelope.id, since)
        return web.json_response({"status": status}, status=202)

    async def waiting(self, request: web.Request) -> web.Response:
        """What the session waits for now: its approval or question, if one waits."""
        session = await self._known(request)
        found = await self.services.confirmations.asking(session)
        listed = [answers.listed(found)] if found is not None else []
        return web.json_response({"confirmations": listed})

    async def tools(self, request: web.Request) -> web.Response:
        return web.json_response(await self.services.tools.as_json())

    async def skills(self, request: web.Request) -> web.Response:
        """The operator's skills as the next turns see them, and a line for each refused."""
        library = await self.skill_library.current()
        listed = [
            {"name": s.name, "description": s.description, "files": list(s.files),
             "allowed_tools": list(s.allowed_tools)}
            for s in library.skills.values()
        ]  # fmt: skip
        return web.json_response({"skills": listed, "refused": list(library.refused)})

    async def metrics(self, request: web.Request) -> web.Response:
        """The deployment's Prometheus metrics: every live process's, added up (see
        `bot.telemetry.metrics`), and the mailboxes' backlog read now; behind the API token
        like the API."""
        body = await metrics.exposition(self.services.redis)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def health(self, request: web.Request) -> web.Response:
        """Alive: the process serves requests. Cheap and checking nothing else, so a
        liveness probe never restarts a web process for Redis or a database being away;
        whether it can serve them is `/readyz` (`adapters.http.readiness`)."""
        return web.json_response({"status": "ok"})


def auth_middleware(settings: Settings) -> Any:
    """Who may call: the rule of `adapters.web.callers` (the token when one is configured,
    else only this machine, never through a proxy), for every route but the public ones."""
    token = settings.api_token.get_secret_value() if settings.api_token else None

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        path, resource = request.path, request.match_info.route.resource
        if path == "/healthz" or path in request.app[PUBLIC] or isinstance(resource, StaticFiles):
            request[USER] = place.PUBLIC
            return await handler(request)
        refused = callers.check(request.remote, request.headers, token)
        if refused is not None:
            answer = error(refused.status, refused.reason)
            answer.headers.update(refused.headers)
            return answer
        request[USER] = place.TOKEN_HOLDER if token is not None else place.LOCAL
        return await handler(request)

    return check


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Whatever goes wrong, the client gets JSON: a 4xx saying what to fix, a 503 with a
    retry hint while Redis is unreachable, or a 500 that shows nothing of the internals."""
    try:
        return await handler(request)
    except web.HTTPRequestEntityTooLarge:
        return error(413, f"the body is larger than {MAX_BODY} bytes")
    except web.HTTPException as exc:
        if exc.content_type == "application/json":
            raise
        return error(exc.status, exc.reason)
    except RedisError as exc:
        if request.writer.output_size > 0:  # a stream had begun: only closing is left
            raise
        log.warning("%s %s: Redis is unreachable (%s)", request.method, request.path, exc)
        return unavailable("the message queue is unreachable; try again shortly")
    except DATABASE_UNAVAILABLE as exc:
        if request.writer.output_size > 0:
            raise
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        log.warning(
            "%s %s: the database is unavailable (%s)", request.method, request.path, problem
        )
        return unavailable("the database is unavailable; try again shortly")
    except ConnectionResetError:  # the client left while its request was read: nothing taken
        log.info("%s %s: the client left before its request was read", request.method, request.path)
        return error(400, "the connection was closed")  # no one reads it; aiohttp logs access
    except Exception:
        if request.writer.output_size > 0:
            raise
        log.exception("%s %s failed", request.method, request.path)
        return error(500, "internal error")


def unavailable(reason: str) -> web.Response:
    """A 503 that says when to come back: the request can be sent again as it is."""
    answer = error(503, reason)
    answer.headers["Retry-After"] = str(RETRY_AFTER_S)
    return answer


def build_app(services: Services) -> web.Application:
    app = web.Application(
        client_max_size=MAX_BODY,
        middlewares=[
            json_errors,
            auth_middleware(services.settings),
            rate_middleware(services.settings),
        ],
        handler_args=LIMITS,
    )
    app[STREAMS] = weakref.WeakSet()
    app[DEADLINE] = Deadline()  # started by `Runner.stop`
    app[PUBLIC] = set()  # the pages hold no data; they ask for the token their calls carry
    settings = services.settings
    app[HUB] = StreamHub(services.redis, services.stream_reader, settings.max_streams)
    app.on_shutdown.append(close_streams)
    api = Api(services, app[HUB])
    records = Records(services)
    pages.mount(app, app[PUBLIC])
    app.router.add_get("/healthz", api.health)
    readiness.mount(app, services, app[PUBLIC])
    app.router.add_get("/metrics", api.metrics)
    app.router.add_get("/api/tools", api.tools)
    app.router.add_get("/api/skills", api.skills)
    app.router.add_post("/api/sessions", api.create_session)
    app.router.add_get("/api/sessions", records.page)
    app.router.add_get("/api/sessions/{session_id}", records.detail)
    app.router.add_delete("/api/sessions/{session_id}", records.delete)
    app.router.add_patch("/api/sessions/{session_id}", api.change_session)
    app.router.add_get("/api/stats", records.stats)
    app.router.add_post("/api/sessions/{session_id}/messages", api.post_message)
    app.router.add_get("/api/files/{sha256}", Files(services.files.store).get)
    app.router.add_get("/api/sessions/{session_id}/events", api.events)
    app.router.add_post("/api/sessions/{session_id}/stop", api.stop)
    app.router.add_post("/api/confirmations/{confirmation_id}", api.decide)
    app.router.add_get("/api/sessions/{session_id}/confirmations", api.waiting)
    tasks.mount(app, services)
    people.mount(app, services)
    chats.mount(app, services)
    session_settings.mount(app, services)
    chat_commands.mount(app, services)
    traces.mount(app, services)
    evaluations.mount(app, services)
    agent_run.mount(app, services, app[HUB])
    return app
