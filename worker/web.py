"""`parley web`: the HTTP API, the web chat, and the ingress of each platform with a token."""

from __future__ import annotations

import asyncio
import signal

from aiohttp import web
from arq.connections import RedisSettings, create_pool

from adapters.http.api import PUBLIC, WebDeps, build_app
from adapters.slack.service import SlackService
from adapters.startup import REFUSED, watch_refusals
from adapters.telegram.service import TelegramService
from bot.config import ConfigError, Settings
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
    watch_refusals(app)
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
    asyncio.run(serve(settings))


async def serve(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT, or until a platform refuses its token: that
    `ConfigError` is raised here, after a clean stop, for the command to print."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    app = await make_app(settings)
    refused = app[REFUSED]
    refused.add_done_callback(lambda _: stopping.set())
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await _listen(runner, settings)
        await stopping.wait()
    finally:
        await runner.cleanup()
    if refused.done():
        raise refused.result()


async def _listen(runner: web.AppRunner, settings: Settings) -> None:
    host, port = settings.http_host, settings.http_port
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        raise ConfigError(
            f"PARLEY_HTTP_PORT: cannot listen on {host}:{port} ({exc.strerror or exc})"
        ) from None
    print(f"======== Running on http://{host}:{port} ========", flush=True)
