"""Slack in `parley web`: Socket Mode when an app-level token is set, else HTTP events.

HTTP events arrive at `/slack/events` (events and interactivity alike); Slack's signature and
timestamp are checked on every request (`requests.py`) and a forged or stale one gets a 401
before anything is parsed; a signed one bolt cannot read gets a 400. In Socket Mode nothing
is public: Parley connects out, and an envelope is acknowledged only after its listener
returned, so an unsubmitted event is delivered again; on SIGTERM the connection stops taking
envelopes, finishes those it took and closes (`socket.py`). HTTP events in flight on SIGTERM
are answered before the process ends (`adapters/http/server.py`), and Slack's retries of an
event already queued (`X-Slack-Retry-Num`) are recognised by its envelope id.
Either way the bot token is checked with `auth.test` on start: Slack out of reach is waited
for, a token it refuses stops `parley web` (adapters/web/startup.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from adapters.chat.access import Gate
from adapters.slack.client import SlackCalls, error_of, make_client
from adapters.slack.deps import IngressDeps
from adapters.slack.ingress import register
from adapters.slack.requests import check_shape, listener_failed, signed_text
from adapters.slack.socket import Socket
from adapters.web.input import error
from adapters.web.services import Services
from adapters.web.shutdown import DEADLINE
from adapters.web.startup import connected, expect, refuse
from bot.config.settings import ConfigError
from bot.redis.ratelimit import RateBudget

log = logging.getLogger(__name__)
# bolt reads SLACK_BOT_TOKEN itself and warns that the client's token wins: it is the same one.
log.addFilter(lambda record: "`token` will be unused" not in record.getMessage())
EVENTS_PATH = "/slack/events"
# Slack's answers that say "not now" rather than "never": retried like a network error.
PASSING = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)


def refusal(exc: SlackApiError, variable: str) -> ConfigError | None:
    """The configuration error behind an answer that retrying will not change, if it is one."""
    status = getattr(exc.response, "status_code", 200)
    code = error_of(exc)
    if code in PASSING or status == 429 or status >= 500:
        return None
    if not code:
        return ConfigError(f"SLACK_API_URL: not Slack's Web API (it answers HTTP {status})")
    return ConfigError(f"{variable}: Slack refused the token ({code})")


class SlackService:
    """Owns the bolt app and its Web API client for the lifetime of the web app."""

    def __init__(self, services: Services) -> None:
        settings, redis = services.settings, services.redis
        socket = settings.slack_app_token is not None  # else Settings ensured a secret
        self.settings = settings
        self.client = make_client(settings)
        secret = settings.slack_signing_secret
        self.app = AsyncApp(
            name="parley",  # else bolt reads its caller's name from `inspect.stack()`: the
            # source of every frame on the stack, 20 ms or more
            client=self.client,
            signing_secret=secret.get_secret_value() if secret is not None else "",
            process_before_response=True,
            request_verification_enabled=not socket,
            logger=log,
        )
        calls = SlackCalls(self.client, RateBudget(redis), settings)
        self.deps = IngressDeps(
            settings=settings,
            calls=calls,
            gate=Gate(settings, redis, services.pairing),
            redis=redis,
            mailbox=services.mailbox,
            confirmations=services.confirmations,
            archive=services.archive,
            tasks=services.tasks,
            recall=services.recall,
            people=services.people,
            grants=services.grants,
            chats=services.chats,
            tools=services.tools,
            files=services.files,
        )
        register(self.app, self.deps)
        self.app.error(listener_failed)
        self.socket: Socket | None = None
        self._connecting: asyncio.Task[None] | None = None

    def mount(self, app: web.Application, public: set[str]) -> None:
        secret = self.settings.slack_signing_secret
        if self.settings.slack_app_token is None and secret is not None:  # HTTP events
            verifier = SignatureVerifier(secret.get_secret_value())
            app.router.add_post(EVENTS_PATH, functools.partial(self.events, verifier))
            public.add(EVENTS_PATH)
        expect(app, "slack")
        app.on_startup.append(self._start)
        app.on_shutdown.append(self._drain)
        app.on_cleanup.append(self._stop)

    async def events(self, verifier: SignatureVerifier, request: web.Request) -> web.Response:
        text = signed_text(await request.read(), request.headers, verifier)
        check_shape(text, request.content_type)
        try:
            answer = await self.app.async_dispatch(await to_bolt_request(request))
        except Exception as exc:  # bolt could not read a signed request: Slack's to fix
            log.warning("a signed Slack request was not understood (%r)", exc)
            return error(400, "the request is not one Parley understands")
        if answer.status == 404:  # nothing of Parley's: acknowledged, so it is not retried
            return web.Response(status=200)
        return await to_aiohttp_response(answer)

    async def _start(self, app: web.Application) -> None:
        self._connecting = asyncio.create_task(self._connect(app))

    async def _connect(self, app: web.Application) -> None:
        try:
            await _until_answered("auth.test", self._check_bot_token)
            if self.settings.slack_app_token is None:
                log.info("Slack events served at %s", EVENTS_PATH)
                connected(app, "slack")
                return
            token = self.settings.slack_app_token.get_secret_value()
            self.socket = socket = Socket(self.app, token, logger=log)
            await _until_answered("Socket Mode", lambda: self._open_socket(socket, token))
            log.info("Slack connected in Socket Mode")
            connected(app, "slack")
        except ConfigError as exc:
            refuse(app, exc)

    async def _check_bot_token(self) -> None:
        try:
            await self.client.auth_test()
        except SlackApiError as exc:
            raise refusal(exc, "SLACK_BOT_TOKEN") or exc from None

    async def _open_socket(self, socket: Socket, token: str) -> None:
        """Ask for the websocket's URL first: a refused app token is a ConfigError here,
        where the SDK's own connect would log it and try again forever."""
        try:
            opened = await self.client.apps_connections_open(app_token=token)
        except SlackApiError as exc:
            raise refusal(exc, "SLACK_APP_TOKEN") or exc from None
        socket.client.wss_uri = str(opened["url"])
        await socket.connect_async()  # type: ignore[no-untyped-call]

    async def _drain(self, app: web.Application) -> None:
        """Stop connecting; in Socket Mode, finish the events taken and close (`socket.py`)."""
        if self._connecting is not None:
            self._connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._connecting
        if self.socket is not None and self.socket.taking:
            await self.socket.drain(app[DEADLINE])

    async def _stop(self, _: web.Application) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
        if self.socket is not None and self.socket.taking:  # stopped before it drained
            with contextlib.suppress(Exception):
                await self.socket.close_async()  # type: ignore[no-untyped-call]
        await self.deps.stop()
        if self.client.session is not None:
            await self.client.session.close()


async def _until_answered(what: str, attempt: Callable[[], Awaitable[None]]) -> None:
    """Run `attempt` until Slack answers it; a ConfigError (a refusal) is not retried."""
    delay = 1.0
    while True:
        try:
            await attempt()
            return
        except ConfigError:
            raise
        except Exception as exc:
            problem = " ".join(str(exc).split()) or type(exc).__name__
            log.warning("Slack %s is not reachable yet (%s); trying again", what, problem)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30)
