"""A local stand-in for Slack that the real slack_sdk clients talk to over HTTP.

The Web API answers in the real wire format and refuses what Slack refuses (`methods`,
`streaming`, `blocks`), with Slack's rate limits (`limits`). The other direction, Slack
calling the app, is in `people` (what people do) and `delivery` (signing and retries). The
fake records every call and delivery so a test can assert on how the app behaved.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from aiohttp import web

from tests.fakes.slack import events
from tests.fakes.slack.delivery import Courier
from tests.fakes.slack.files import SlackFiles
from tests.fakes.slack.limits import RateLimits
from tests.fakes.slack.methods import Content, Methods
from tests.fakes.slack.model import (
    ApiError,
    Call,
    Delivery,
    Posted,
    SlackChannel,
    SlackUser,
    TsClock,
)
from tests.fakes.slack.people import People
from tests.fakes.slack.socket import SocketMode
from tests.fakes.slack.streaming import Streams
from tests.fakes.slack.uploads import BODY_LIMIT, Uploads
from tests.fakes.slack.wire import authorize, bearer, params_of
from tests.support.redis_server import free_port
from tests.support.waiting import WITHIN, until

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class FakeSlack(People):
    def __init__(
        self,
        *,
        stream_ttl: float = 300.0,
        retry_delays: tuple[float, ...] = (0.3, 0.6, 1.0),
        ack_timeout: float = 3.0,
    ) -> None:
        self.stream_ttl = stream_ttl
        self.retry_delays = retry_delays
        self.ack_timeout = ack_timeout
        self.events_url: str | None = None
        self.mode: Literal["http", "socket"] = "http"
        self.streaming_enabled = True
        self.users: dict[str, SlackUser] = {}
        self.channels: dict[str, SlackChannel] = {}
        self.clock = TsClock()
        self.calls: list[Call] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.ephemeral_messages: list[Posted] = []
        self.statuses: list[dict[str, Any]] = []
        self.suggested: list[dict[str, Any]] = []
        self.titles: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self.deliveries: list[Delivery] = []
        self.limits = RateLimits()
        self.methods = Methods(self)
        self.shared = SlackFiles()
        self.uploads = Uploads(self)
        self.courier = Courier(self)
        self.socket = SocketMode(self)
        self.handlers: dict[str, Handler] = {
            **self.methods.handlers,
            **Streams(self, self.methods).handlers,
            **self.socket.handlers,
            **self.uploads.handlers,
        }
        self.base_url = ""
        self.port = 0
        self._posts: dict[str, list[Posted]] = {}
        self._failures: list[tuple[str, ApiError]] = []
        self._held: dict[str, asyncio.Event] = {}
        self._last: dict[str, Any] | None = None
        self._response_urls: dict[str, tuple[SlackUser, Posted]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._runner: web.AppRunner | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(client_max_size=BODY_LIMIT)
        app.router.add_route("*", "/api/{method}", self._serve)
        app.router.add_post("/upload/v1/{file_id}", self.uploads.receive)
        app.router.add_post("/response/{key}", self._respond)
        app.router.add_get("/socket", self.socket.serve)
        app.router.add_get("/files-pri/{team_file}/{rest:.+}", self.shared.serve)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self.base_url = f"http://127.0.0.1:{self.port}/api/"

    async def stop(self) -> None:
        for gate in self._held.values():
            gate.set()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.courier.close()
        await self.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeSlack:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # --- test controls and inspection --------------------------------------------------------

    @property
    def tiers(self) -> dict[str, int]:
        """Calls per minute for each method (per workspace); a test may lower them."""
        return self.limits.tiers

    @property
    def rate_limited(self) -> int:
        return self.limits.rate_limited

    @property
    def violations(self) -> int:
        return self.limits.violations

    def fail_next(
        self,
        method: str,
        error: str = "internal_error",
        status: int = 200,
        retry_after: int | None = None,
        count: int = 1,
    ) -> None:
        """The next `count` calls of `method` fail; status 429 answers `ratelimited` with a
        Retry-After (default 1 s) that the app must then respect."""
        if status == 429:
            error = "ratelimited" if error == "internal_error" else error
            retry_after = retry_after or 1
        failure = ApiError(error, status=status, retry_after=retry_after)
        self._failures += [(method, failure)] * count

    def hold(self, method: str) -> asyncio.Event:
        """Calls of `method` are answered only once the returned event is set: Slack slow to
        answer them (each call is handled, and counted, when it is answered)."""
        gate = self._held[method] = asyncio.Event()
        return gate

    def messages(self, channel_id: str, thread_ts: str | None = None) -> list[Posted]:
        """Visible messages, oldest first: the channel's top level, or one thread's replies."""
        found = [
            m
            for m in self._posts.get(channel_id, [])
            if not m.deleted and m.subtype != "assistant_app_thread" and m.thread_ts == thread_ts
        ]
        for message in found:
            self.expire(message)
        return found

    def bot_messages(self, channel_id: str, thread_ts: str | None = None) -> list[Posted]:
        return [m for m in self.messages(channel_id, thread_ts) if m.is_bot]

    def count(self, method: str) -> int:
        return sum(1 for call in self.calls if call.method == method)

    async def wait_for(
        self, predicate: Callable[[], bool], within: float = WITHIN, what: str = ""
    ) -> float:
        """Seconds until `predicate` holds of what the fake Slack has seen
        (`tests.support.waiting.until`)."""
        return await until(predicate, f"the fake Slack: {what or 'the awaited calls'}", within)

    # --- messages ----------------------------------------------------------------------------

    def find(self, channel_id: str, ts: str) -> Posted | None:
        for message in self._posts.get(channel_id, []):
            if message.ts == ts and not message.deleted:
                return message
        return None

    def store(self, message: Posted) -> None:
        self._posts.setdefault(message.channel, []).append(message)

    def expire(self, message: Posted) -> None:
        """A stream nobody appended to for `stream_ttl` seconds ends, keeping its text."""
        if (
            message.streaming == "streaming"
            and time.monotonic() - message.touched > self.stream_ttl
        ):
            message.streaming = "expired"

    def echo(self, message: Posted) -> None:
        """Slack sends an app subscribed to message events its own bot's posts as well."""
        if not (self.socket.connected if self.mode == "socket" else self.events_url):
            return
        channel = self.channels[message.channel]
        parent = self.find(channel.id, message.thread_ts) if message.thread_ts else None
        event = events.message_event(message, channel, parent.user if parent else None)
        task = asyncio.get_running_loop().create_task(self.send(events.event_callback(event)))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- delivery ----------------------------------------------------------------------------

    async def deliver(
        self,
        payload: dict[str, Any],
        retry_num: int = 0,
        *,
        secret: str | None = None,
        timestamp: int | None = None,
        retry: bool = True,
    ) -> tuple[int, str]:
        """Sign and POST an event_callback or interaction body (retried like Slack unless
        `retry=False`); the status and answer of the last attempt."""
        self._last = payload
        return await self.send(
            payload, retry_num=retry_num, secret=secret, timestamp=timestamp, retry=retry
        )

    async def send(
        self,
        payload: dict[str, Any],
        *,
        retry_num: int = 0,
        secret: str | None = None,
        timestamp: int | None = None,
        retry: bool = True,
        reason: str = "http_timeout",
    ) -> tuple[int, str]:
        """Over the websocket in Socket Mode (`secret` and `timestamp` do not apply there),
        else signed over HTTP."""
        if self.mode == "socket":
            timeout = "timeout" if reason == "http_timeout" else reason
            return await self.socket.send(payload, retry_num=retry_num, retry=retry, reason=timeout)
        return await self.courier.post(
            payload,
            retry_num=retry_num,
            retry=retry,
            reason=reason,
            secret=secret,
            timestamp=timestamp,
        )

    async def redeliver_last(self) -> tuple[int, str]:
        """Slack's retry of the last body a test delivered (say, press, deliver...; not the
        echoes of the bot's own posts): X-Slack-Retry-Num 1, reason http_timeout."""
        if self._last is None:
            raise AssertionError("nothing was delivered yet")
        return await self.send(self._last, retry_num=1, retry=False)

    def response_url(self, user: SlackUser, message: Posted) -> str:
        key = secrets.token_urlsafe(12)
        self._response_urls[key] = (user, message)
        return f"http://127.0.0.1:{self.port}/response/{key}"

    # --- HTTP --------------------------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.Response:
        name = request.match_info["method"]
        params = await params_of(request)
        if name in self._held:
            await self._held[name].wait()
        token = bearer(request) or str(params.pop("token", "") or "")
        try:
            handler = self.handlers.get(name)
            if handler is None:
                raise ApiError("unknown_method")
            authorize(name, token)
            channel = params.get("channel") or params.get("channel_id")
            self.limits.check(name, str(channel) if channel else None)
            self._injected(name, params)
            result = handler(params)
        except ApiError as exc:
            self.calls.append(Call(name, params, time.monotonic(), exc.status, exc.error))
            return web.json_response(exc.wire(), status=exc.status, headers=exc.headers())
        self.calls.append(Call(name, params, time.monotonic(), 200, None))
        return web.json_response({"ok": True, **result})

    def _injected(self, name: str, params: dict[str, Any]) -> None:
        for index, (method, error) in enumerate(self._failures):
            if method == name:
                del self._failures[index]
                if error.status == 429:
                    channel = params.get("channel") or params.get("channel_id")
                    keys = self.limits.keys(name, str(channel) if channel else None)
                    raise self.limits.refuse(keys, error.retry_after or 1)
                raise error

    async def _respond(self, request: web.Request) -> web.Response:
        """An app answering an interaction through its response_url."""
        found = self._response_urls.get(request.match_info["key"])
        if found is None:
            return web.json_response({"ok": False, "error": "expired_url"}, status=404)
        user, message = found
        body = await request.json()
        self.responses.append(body)
        try:
            if body.get("delete_original"):
                message.deleted = True
            elif body.get("replace_original"):
                Content(body).apply(message)
                message.edits += 1
            elif body.get("response_type") == "in_channel":
                self.methods.post_message({**body, "channel": message.channel})
            else:
                content = Content(body)
                self.ephemerals.append(
                    {
                        "channel": message.channel,
                        "user": user.id,
                        "text": content.text or content.markdown or "",
                        "thread_ts": body.get("thread_ts") or message.thread_ts,
                        "blocks": content.blocks,
                    }
                )
        except ApiError as exc:
            return web.json_response(exc.wire(), status=400)
        return web.json_response({"ok": True})
