"""Telegram in `parley web`: long polling by default, a webhook when a public URL is set.

Either way an update is handled in its chat's lane (`lanes`: chats side by side, each in
order, an album as one) and confirmed only after its handler submitted it: polling advances
its offset past an update once it was handled, and the webhook answers 200 only then (a
500 makes Telegram deliver it again). The webhook checks Telegram's secret header on every
request before reading anything else. Telegram out of reach is waited for; a token or webhook
URL it refuses stops `parley web` (adapters/web/startup.py).

On SIGTERM (`_drain`, before the requests in flight are waited for) polling stops at once: a
getUpdates still waiting is abandoned, which confirms nothing it would have returned. The
updates already taken are handled within the shutdown's deadline, and a last getUpdates
confirms those that were, so the next process is not handed them again; one not handled in
time is not confirmed and comes again. An update handed over twice anyway (a process killed
between queueing and confirming) is queued once: its envelope id is its update_id, which the
mailbox keeps for a day.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Sequence
from urllib.parse import urlparse

from aiogram import Bot, Dispatcher
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramConflictError,
    TelegramNotFound,
    TelegramRetryAfter,
    TelegramUnauthorizedError,
)
from aiogram.types import Update, User
from aiohttp import web
from pydantic import ValidationError
from redis.exceptions import RedisError

from adapters.chat.access import Gate
from adapters.telegram.client import TelegramCalls, make_bot
from adapters.telegram.commands import menu
from adapters.telegram.deps import IngressDeps
from adapters.telegram.ingress import dispatcher
from adapters.telegram.lanes import Lanes
from adapters.telegram.reactions import StatusReactions
from adapters.web.input import read_json
from adapters.web.services import Services
from adapters.web.shutdown import DEADLINE, Deadline
from adapters.web.startup import connected, expect, refuse
from bot.config.settings import ConfigError, Settings
from bot.redis.ratelimit import RateBudget

log = logging.getLogger(__name__)
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
UPDATES = ["message", "edited_message", "callback_query", "stopped_message_generation"]
POLL_TIMEOUT = 25
CONFIRM_TIMEOUT = 5  # seconds for the last getUpdates, which only confirms
BUSY_POLL = 0.2  # seconds between getUpdates while a lane is busy
HANDLER_TRIES = 5


def refusal(exc: TelegramAPIError) -> ConfigError | None:
    """The configuration error behind an answer that retrying will not change, if it is one."""
    if isinstance(exc, TelegramUnauthorizedError):
        return ConfigError("TELEGRAM_BOT_TOKEN: Telegram refused the token (401 Unauthorized)")
    if isinstance(exc, TelegramNotFound):
        return ConfigError(
            "TELEGRAM_BOT_TOKEN: Telegram knows no bot with this token (404 Not Found; "
            "or TELEGRAM_API_URL is not a Bot API server)"
        )
    return None


def webhook_secret(settings: Settings) -> str:
    """TELEGRAM_WEBHOOK_SECRET, or one derived from the bot token so a webhook is never open."""
    if settings.telegram_webhook_secret is not None:
        return settings.telegram_webhook_secret.get_secret_value()
    assert settings.telegram_bot_token is not None
    token = settings.telegram_bot_token.get_secret_value()
    return hashlib.sha256(f"parley-webhook:{token}".encode()).hexdigest()


class TelegramService:
    """Owns the Bot and the dispatcher for the lifetime of the web app."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.settings = settings = services.settings
        self.redis = services.redis
        self.bot: Bot = make_bot(settings)
        self.dispatcher: Dispatcher | None = None
        self.secret = webhook_secret(settings)
        self._task: asyncio.Task[None] | None = None
        self._lanes: Lanes | None = None
        self._asked: int | None = None  # the offset of the latest getUpdates answered
        self._stopping = False  # polling ends at its next round even if a cancel were lost
        self.reactions: StatusReactions | None = None

    @property
    def webhook_path(self) -> str | None:
        url = self.settings.telegram_webhook_url
        return (urlparse(url).path or "/") if url else None

    def mount(self, app: web.Application, public: set[str]) -> None:
        if self.webhook_path is not None:
            app.router.add_post(self.webhook_path, self.webhook)
            public.add(self.webhook_path)
        expect(app, "telegram")
        app.on_startup.append(self._start)
        app.on_shutdown.append(self._drain)
        app.on_cleanup.append(self._stop)

    async def _start(self, app: web.Application) -> None:
        self._task = asyncio.create_task(self._run(app))

    async def _drain(self, app: web.Application) -> None:
        """Take no more updates; handle and confirm those taken (the module docstring)."""
        polling, deadline = self.webhook_path is None, app[DEADLINE]
        self._stopping = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            if polling:
                log.info("Telegram: long polling stopped")
        lanes = self._lanes
        if lanes is None:
            return
        if lanes.busy and not await deadline.within(lanes.finish()):
            log.warning(
                "Telegram: not queued in time, so handed over again: %d updates",
                lanes.unfinished,
            )
        else:
            log.info("Telegram: every update taken is queued")
        if polling and deadline.started:  # else a bare cleanup: nothing is waited for
            await self._confirm(lanes, deadline)

    async def _confirm(self, lanes: Lanes, deadline: Deadline) -> None:
        """One getUpdates that only confirms the updates handled since the latest one."""
        offset = lanes.offset
        if offset is None or offset == self._asked:
            return
        asked = self.bot.get_updates(
            offset=offset, limit=1, timeout=0, request_timeout=CONFIRM_TIMEOUT
        )
        try:
            confirmed = await deadline.within(asked)
        except (TelegramAPIError, OSError) as exc:
            log.warning("Telegram: could not confirm the updates handled (%s)", exc)
            return
        if confirmed:
            log.info("Telegram: updates before %d confirmed", offset)
        else:
            log.warning("Telegram: no time left to confirm the updates handled")

    async def _stop(self, _: web.Application) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._lanes is not None:
            await self._lanes.aclose()
        if self.reactions is not None:
            await self.reactions.stop()
        await self.bot.session.close()

    async def _run(self, app: web.Application) -> None:
        try:
            await self._connect()
            connected(app, "telegram")
            if self.webhook_path is None:
                await self._poll()
        except ConfigError as exc:
            refuse(app, exc)

    async def _introduce(self) -> User:
        """Learn who the bot is and register its menu and webhook."""
        me = await self.bot.get_me()
        await self.bot.set_my_commands(menu())
        if not self.settings.telegram_webhook_url:
            await self.bot.delete_webhook()
            return me
        try:
            await self.bot.set_webhook(
                self.settings.telegram_webhook_url,
                secret_token=self.secret,
                allowed_updates=UPDATES,
            )
        except TelegramBadRequest as exc:
            raise ConfigError(
                f"TELEGRAM_WEBHOOK_URL: Telegram refused it ({exc.message})"
            ) from None
        return me

    async def _connect(self) -> None:
        """Introduce the bot; retried until Telegram answers, a ConfigError if it refuses."""
        delay = 1.0
        while True:
            try:
                me = await self._introduce()
                break
            except TelegramAPIError as exc:
                refused = refusal(exc)
                if refused is not None:
                    raise refused from None
                wait = exc.retry_after if isinstance(exc, TelegramRetryAfter) else delay
                log.warning(
                    "Telegram is not reachable yet (%s); trying again in %.0f s",
                    " ".join(str(exc).split()),
                    wait,
                )
                await asyncio.sleep(wait)
                delay = min(delay * 2, 30)
        budget = RateBudget(self.redis)
        calls = TelegramCalls(self.bot, budget, self.settings)
        reactions = StatusReactions(calls, self.redis) if self.settings.telegram_reactions else None
        deps = IngressDeps(
            settings=self.settings,
            me=me,
            calls=calls,
            gate=Gate(self.settings, self.redis, self.services.pairing),
            mailbox=self.services.mailbox,
            confirmations=self.services.confirmations,
            archive=self.services.archive,
            tasks=self.services.tasks,
            recall=self.services.recall,
            people=self.services.people,
            grants=self.services.grants,
            chats=self.services.chats,
            tools=self.services.tools,
            files=self.services.files,
            reactions=reactions,
        )
        self.reactions = reactions
        self.dispatcher = dispatcher(deps)
        log.info("Telegram bot @%s ready (%s)", me.username, self._mode())

    def _mode(self) -> str:
        return "webhook" if self.webhook_path else "long polling"

    async def _poll(self) -> None:
        """Long polling, each update handed to its chat's lane. While a lane is busy (a
        download, an album's wait), getUpdates hands its updates over again at once, so it is
        asked without waiting, each time an update was handled or `BUSY_POLL` seconds
        passed, until every lane is done."""
        lanes = self._lanes = Lanes(self._handle)
        delay = 1.0
        while not self._stopping:
            try:
                offset = lanes.offset
                updates = await self.bot.get_updates(
                    offset=offset,
                    timeout=0 if lanes.busy else POLL_TIMEOUT,
                    allowed_updates=UPDATES,
                    request_timeout=POLL_TIMEOUT + 10,
                )
                self._asked = offset
                delay = 1.0
            except (TelegramAPIError, TelegramConflictError) as exc:
                refused = refusal(exc)  # the token was revoked meanwhile
                if refused is not None:
                    raise refused from None
                log.warning("getUpdates failed (%s); trying again in %.0f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30)
                continue
            lanes.take(updates)
            await lanes.settle(BUSY_POLL)

    async def _feed(self, updates: Sequence[Update]) -> None:
        """Feed one update, or an album's parts as one (the handler gets them as `album`)."""
        assert self.dispatcher is not None
        album = [u.message for u in updates if u.message is not None] if len(updates) > 1 else None
        await self.dispatcher.feed_update(self.bot, updates[0], album=album)

    async def _handle(self, updates: Sequence[Update]) -> None:
        """Feed an update; while Redis is down keep trying, so it is never skipped."""
        tries = 0
        while True:
            try:
                await self._feed(updates)
                return
            except (RedisError, OSError):
                log.warning("cannot queue update %s yet; retrying", updates[0].update_id)
            except Exception:
                tries += 1
                log.exception("update %s failed (try %d)", updates[0].update_id, tries)
                if tries >= HANDLER_TRIES:
                    return
            await asyncio.sleep(min(2**tries, 10))

    async def webhook(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not secrets.compare_digest(given.encode(), self.secret.encode()):
            return web.json_response({"error": "wrong or missing secret token"}, status=401)
        if self.dispatcher is None:
            return web.json_response({"error": "not ready yet"}, status=503)
        data = await read_json(request)  # bounded in size and nesting, or a JSON 4xx
        try:
            update = Update.model_validate(data, context={"bot": self.bot})
        except (ValueError, ValidationError):
            return web.json_response({"error": "the body is not a Telegram update"}, status=400)
        if self._lanes is None:
            self._lanes = Lanes(self._feed)
        try:
            await asyncio.shield(self._lanes.put(update))  # in order with its chat's updates
        except RedisError as exc:
            log.warning("cannot queue update %s yet (%s)", update.update_id, exc)
            return web.json_response({"error": "not queued yet"}, status=503)
        except Exception:
            log.exception("update %s failed; Telegram will deliver it again", update.update_id)
            return web.json_response({"error": "not processed"}, status=500)
        return web.json_response({})
