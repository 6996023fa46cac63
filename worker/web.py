"""`parley web`: the HTTP API, the web chat, and the ingress of each platform with a token."""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web
from arq.connections import RedisSettings, create_pool

from adapters.http.api import PUBLIC, WebDeps, build_app
from adapters.http.server import serve
from adapters.slack.service import SlackService
from adapters.telegram.service import TelegramService
from bot.config import Settings
from bot.confirmations import Confirmations
from bot.mailbox import Mailbox
from bot.store.database import open_database
from bot.tools.base import ToolRegistry
from bot.tools.builtin import builtin_tools


async def make_app(settings: Settings) -> web.Application:
    database = await open_database(settings)
    redis = await create_pool(RedisSettings.from_dsn(settings.redis_url))
    deps = WebDeps(
        settings=settings,
        redis=redis,
        mailbox=Mailbox(redis, redis),
        confirmations=Confirmations(redis),
        archive=database.archive,
        tools=ToolRegistry(builtin_tools()).specs,
    )
    app = build_app(deps)
    if settings.telegram_bot_token is not None:
        TelegramService(deps).mount(app, app[PUBLIC])
    if settings.slack_bot_token is not None:
        SlackService(deps).mount(app, app[PUBLIC])

    async def close(_: web.Application) -> None:
        await redis.aclose()
        await database.aclose()

    app.on_cleanup.append(close)
    return app


def run(settings: Settings) -> None:
    async def main() -> None:
        await serve(await make_app(settings), settings.http_host, settings.http_port)

    with contextlib.suppress(KeyboardInterrupt, web.GracefulExit):
        asyncio.run(main())
