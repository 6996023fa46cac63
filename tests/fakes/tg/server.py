"""A local stand-in for the Telegram Bot API that the real aiogram Bot talks to over HTTP.

It answers in the real wire format, refuses what Telegram refuses (see `methods` and
`formatting`), applies flood control with `retry_after` and its penalty, serves updates by
long polling (an update is confirmed by a later getUpdates whose offset is past it, and a
getUpdates still waiting when another one comes is answered 409, as Telegram does when two
processes poll one bot) or delivers them to a webhook, and records everything for the tests. The
people's side (sending messages, pressing buttons) is in `users.UserSide`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.web_request import FileField

from tests.fakes.tg.ephemeral import Ephemerals
from tests.fakes.tg.files import Shelf
from tests.fakes.tg.methods import FLOODED, Methods
from tests.fakes.tg.model import (
    TOKEN,
    ApiError,
    BotMessage,
    Bucket,
    Call,
    Draft,
    FloodLimits,
    Reaction,
    TgChat,
)
from tests.fakes.tg.uploads import BODY_LIMIT
from tests.fakes.tg.users import UserSide
from tests.support.redis_server import free_port
from tests.support.waiting import WITHIN, until


class FakeTelegram(UserSide):
    def __init__(
        self,
        *,
        limits: FloodLimits | None = None,
        callback_ttl: float = 15.0,
        redeliver_after: float = 0.2,
    ) -> None:
        super().__init__()
        self.limits = limits or FloodLimits()
        self.callback_ttl = callback_ttl
        self.redeliver_after = redeliver_after
        self.chats: dict[int, TgChat] = {}
        self.sent: dict[int, list[BotMessage]] = {}
        self.user_message_ids: dict[int, set[int]] = {}
        self.calls: list[Call] = []
        self.drafts: list[Draft] = []
        self.actions: list[tuple[int, str, float]] = []
        self.callback_answers: list[dict[str, Any]] = []
        self.queries: dict[str, float] = {}
        self.commands: list[dict[str, Any]] = []
        # Bot API 9.3: the bot has topics enabled in private chats (getMe's has_topics_enabled).
        self.private_topics = False
        self.reactions: list[Reaction] = []  # setMessageReaction's calls, in order
        self.webhook: dict[str, Any] = {}
        self.pending: list[dict[str, Any]] = []
        self.deliveries: list[tuple[int, int]] = []
        self.floods = 0
        self.polls = 0  # getUpdates calls so far: only the latest one may wait
        self.flood_violations = 0
        self._closing = False
        self._arrived = asyncio.Event()
        self._buckets: dict[str, Bucket] = {}
        self._penalty: dict[int, float] = {}
        self._failures: list[tuple[str, ApiError]] = []
        self._held: dict[str, asyncio.Event] = {}
        self.waiting: list[str] = []  # the held calls that arrived and wait now, by method
        self._next_message_id: dict[int, int] = {}
        self._delivery: asyncio.Task[None] | None = None
        self._runner: web.AppRunner | None = None
        self.methods = Methods(self)
        self.ephemerals = Ephemerals(self)
        self.shelf = Shelf()
        self.base_url = ""

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(client_max_size=BODY_LIMIT)
        app.router.add_route("*", "/bot{token}/{method}", self._serve)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self.base_url = f"http://127.0.0.1:{port}"

    async def _download(self, request: web.Request) -> web.StreamResponse:
        return await self.shelf.serve(request, TOKEN)

    async def stop(self) -> None:
        self._closing = True
        self._arrived.set()  # a long poll in progress answers now
        for gate in self._held.values():
            gate.set()
        if self._delivery is not None:
            self._delivery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._delivery
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # --- test controls -----------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        error_code: int,
        description: str,
        retry_after: int | None = None,
        count: int = 1,
    ) -> None:
        """The next `count` calls of `method` fail with this error (a 429 also penalises)."""
        self._failures += [(method, ApiError(error_code, description, retry_after))] * count

    def messages(self, chat: TgChat, thread_id: int | None = None) -> list[BotMessage]:
        """The bot's visible text messages in `chat` (and topic), oldest first."""
        return [m for m in self.everything(chat, thread_id) if m.upload is None]

    def uploads(self, chat: TgChat, thread_id: int | None = None) -> list[BotMessage]:
        """The photos, documents and voice notes the bot sent in `chat` (and topic), oldest
        first."""
        return [m for m in self.everything(chat, thread_id) if m.upload is not None]

    def everything(self, chat: TgChat, thread_id: int | None = None) -> list[BotMessage]:
        """The bot's visible messages in `chat` (and topic), files too, oldest first."""
        return [
            m
            for m in self.sent.get(chat.id, [])
            if not m.deleted and (thread_id is None or m.thread_id == thread_id)
        ]

    def hold(self, method: str) -> asyncio.Event:
        """Calls of `method` are answered only once the returned event is set: Telegram slow
        to answer them (each is handled, and recorded, when it is answered; `waiting` lists
        those that arrived meanwhile)."""
        gate = self._held[method] = asyncio.Event()
        return gate

    async def wait_for(
        self,
        predicate: Callable[[], bool],
        within: float = WITHIN,
        what: str | Callable[[], str] = "",
    ) -> float:
        """Seconds until `predicate` holds of what the fake Telegram has seen
        (`tests.support.waiting.until`); `what` may be a function, for details read only
        when the wait runs out."""

        def said() -> str:
            return (
                f"the fake Telegram: {(what() if callable(what) else what) or 'the awaited calls'}"
            )

        return await until(predicate, said, within)

    def json_param(self, params: dict[str, Any], name: str) -> Any:
        value = params.get(name)
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise ApiError(400, f"Bad Request: can't parse {name} JSON object") from None
        return value

    # --- the bot's messages ------------------------------------------------------------------

    def post(
        self,
        chat: TgChat,
        text: str,
        entities: list[dict[str, Any]],
        markup: dict[str, Any] | None,
        thread: int | None,
        reply_to: int | None,
    ) -> BotMessage:
        message = BotMessage(
            message_id=self.next_message_id(chat.id),
            chat_id=chat.id,
            text=text,
            entities=entities,
            reply_markup=markup,
            thread_id=thread,
            reply_to=reply_to,
        )
        self.sent.setdefault(chat.id, []).append(message)
        return message

    def next_message_id(self, chat_id: int) -> int:
        self._next_message_id[chat_id] = self._next_message_id.get(chat_id, 0) + 1
        return self._next_message_id[chat_id]

    def wire(self, chat: TgChat, message: BotMessage) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message_id": message.message_id,
            "date": int(time.time()),
            "chat": chat.wire(),
            "from": {"id": 7000001, "is_bot": True, "first_name": "Parley"},
            "text": message.text,
        }
        if message.entities:
            data["entities"] = message.entities
        if message.reply_markup:
            data["reply_markup"] = message.reply_markup
        if message.thread_id is not None:
            data["message_thread_id"] = message.thread_id
            data["is_topic_message"] = True
        return data

    # --- HTTP --------------------------------------------------------------------------------

    async def _serve(self, request: web.Request) -> web.Response:
        name = request.match_info["method"]
        if request.match_info["token"] != TOKEN:
            return _answer(ApiError(401, "Unauthorized").wire())
        params = await _params(request)
        if name in self._held:
            self.waiting.append(name)
            try:
                await self._held[name].wait()
            finally:
                self.waiting.remove(name)
        try:
            if name == "getUpdates":
                result = await self._get_updates(params)
            else:
                taken = self._flood_check(name, params)
                try:
                    self._injected(name)
                    result = self.methods.handle(name, params)
                except ApiError:
                    for bucket in taken:  # refused calls do not count against the limits
                        bucket.refund()
                    raise
        except ApiError as exc:
            self.calls.append(Call(name, params, False, exc.description, time.time()))
            return _answer(exc.wire())
        self.calls.append(Call(name, params, True, None, time.time()))
        return _answer({"ok": True, "result": result})

    def _injected(self, name: str) -> None:
        for index, (method, error) in enumerate(self._failures):
            if method == name:
                del self._failures[index]
                if error.retry_after is not None:
                    self.floods += 1
                raise error

    def _flood_check(self, name: str, params: dict[str, Any]) -> list[Bucket]:
        if name not in FLOODED:
            return []
        try:
            chat_id = int(params.get("chat_id", 0))
        except (TypeError, ValueError):
            return []
        now = time.monotonic()
        until = self._penalty.get(chat_id, 0.0)
        if now < until:
            self.floods += 1
            self.flood_violations += 1
            raise _too_many(until - now)
        buckets = self._buckets_for(name, chat_id)
        waits = [bucket.take() for bucket in buckets]
        if max(waits) > 0:
            for bucket, wait in zip(buckets, waits, strict=True):
                if wait == 0:
                    bucket.refund()
            self.floods += 1
            self._penalty[chat_id] = now + math.ceil(max(waits))
            raise _too_many(max(waits))
        return buckets

    def _buckets_for(self, name: str, chat_id: int) -> list[Bucket]:
        limits = self.limits
        if name == "sendMessageDraft":
            specs = {f"draft:{chat_id}": (limits.draft_rate, limits.draft_burst)}
        else:
            specs = {f"chat:{chat_id}": (limits.chat_rate, limits.chat_burst)}
            if chat_id < 0:
                specs[f"group:{chat_id}"] = (limits.group_per_minute / 60, limits.group_burst)
        specs["bot"] = (limits.bot_rate, limits.bot_rate)
        return [
            self._buckets.setdefault(k, Bucket(rate, burst)) for k, (rate, burst) in specs.items()
        ]

    # --- updates -----------------------------------------------------------------------------

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = int(params.get("offset") or 0)
        if offset:
            self.pending = [u for u in self.pending if u["update_id"] >= offset]
        self.polls += 1
        mine = self.polls
        self._arrived.set()  # a getUpdates still waiting ends, with a 409
        timeout = float(params.get("timeout") or 0)
        deadline = time.monotonic() + min(timeout, 50)
        while not self.pending and not self._closing and time.monotonic() < deadline:
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), deadline - time.monotonic())
            if self.polls != mine:
                raise ApiError(409, CONFLICT)
        limit = int(params.get("limit") or 100)
        return self.pending[:limit]

    def queue(self, update: dict[str, Any]) -> None:
        self.pending.append(update)
        self._arrived.set()
        if self.webhook:
            self.start_delivery()

    def start_delivery(self) -> None:
        if self._delivery is None or self._delivery.done():
            self._delivery = asyncio.get_running_loop().create_task(self._deliver())

    async def _deliver(self) -> None:
        """POST each pending update in order; one that is not answered 2xx is sent again."""
        async with aiohttp.ClientSession() as session:
            while self.webhook and self.pending:
                update = self.pending[0]
                status = await self._post_update(session, update)
                self.deliveries.append((update["update_id"], status))
                if 200 <= status < 300:
                    self.pending.pop(0)
                else:
                    await asyncio.sleep(self.redeliver_after)

    async def _post_update(self, session: aiohttp.ClientSession, update: dict[str, Any]) -> int:
        headers = {}
        if self.webhook.get("secret_token"):
            headers["X-Telegram-Bot-Api-Secret-Token"] = str(self.webhook["secret_token"])
        try:
            async with session.post(self.webhook["url"], json=update, headers=headers) as answer:
                return answer.status
        except aiohttp.ClientError:
            return 0

    def deliver_again(self, update: dict[str, Any]) -> None:
        """Telegram sends an update again when it thinks the first delivery failed."""
        self.pending.append(update)
        self.start_delivery()


CONFLICT = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)


def _too_many(wait: float) -> ApiError:
    seconds = max(1, math.ceil(wait))
    return ApiError(429, f"Too Many Requests: retry after {seconds}", retry_after=seconds)


def _answer(body: dict[str, Any]) -> web.Response:
    status = 200 if body.get("ok") else int(body["error_code"])
    return web.json_response(body, status=status)


async def _params(request: web.Request) -> dict[str, Any]:
    params: dict[str, Any] = dict(request.query)
    if request.method != "POST" or not request.can_read_body:
        return params
    if request.content_type == "application/json":
        params.update(await request.json())
    else:  # form fields, and the parts of a multipart upload (aiohttp's FileField)
        fields = await request.post()
        params.update({k: v for k, v in fields.items() if isinstance(v, str | FileField)})
    return params
