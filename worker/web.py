"""`parley web`: the HTTP API, the web chat, and the ingress of each platform with a token.

A platform's service, and with it its SDK (slack_bolt and slack_sdk, about a tenth of the
web process's imports), is imported only when the platform has a token.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from functools import partial

from aiohttp import web
from redis.asyncio import Redis
from redis.exceptions import RedisError

from adapters.chat.tool_list import ToolCatalog
from adapters.http.api import PUBLIC, build_app
from adapters.http.server import Runner
from adapters.http.streams import READER_OPTIONS
from adapters.platforms.targets import answered_target
from adapters.web.services import Services
from adapters.web.startup import REFUSED, watch_refusals
from bot.assembly.catalog import worker_tools
from bot.assembly.stores import ToolStores
from bot.config.settings import ConfigError, Settings
from bot.files import shared_dirs
from bot.files.intake import Intake, Limits
from bot.files.reading import Readers, ReadLimits
from bot.files.voice import transcriber
from bot.mailbox.inbox import Mailbox
from bot.memory.models import embedder_of
from bot.memory.recall import Recall
from bot.people.pairing import Pairing
from bot.redis.confirmations import Confirmations
from bot.store.chats import ChatSettings
from bot.store.database import open_database
from bot.store.grants import Grants
from bot.store.traces import Traces
from bot.tools.base import ToolRegistry
from worker import redis_connections
from worker.persistence import check_persistence
from worker.redis_connections import IdleClosingPool
from worker.redis_pool import closing_idle, open_pool
from worker.signals import stop_on_signals
from worker.wakes import QueueJobs

log = logging.getLogger(__name__)
SPARE_FILES = 256  # open files beyond the event streams: the pool, the database, other requests


async def make_app(settings: Settings) -> web.Application:
    database = await open_database(settings)
    redis = await open_pool(settings)
    await check_persistence(redis)
    await _say_if_not_shared(redis, settings)
    # `/memory search` finds by meaning here too; the model's process starts when first asked
    recall = Recall.on(database.engine, embedder_of(settings))
    stores = ToolStores.open(database.engine, redis, recall)
    voice = transcriber(settings)
    mailbox = Mailbox(redis, QueueJobs(redis))
    services = Services(
        settings=settings,
        redis=redis,
        mailbox=mailbox,
        confirmations=Confirmations(redis),
        archive=database.archive,
        tasks=stores.tasks,
        recall=stores.recall,
        people=stores.people,
        grants=Grants(database.engine),
        chats=ChatSettings(database.engine),
        traces=Traces(database.engine, database.history.seal),
        tools=ToolCatalog(redis, ToolRegistry(worker_tools(settings, stores)).specs),
        files=Intake(
            Readers(settings.files_dir, ReadLimits.of(settings), ahead=True),
            Limits.of(settings),
            voice,
        ),
        target_of=partial(answered_target, settings=settings),
        stream_reader=partial(redis_connections.client, settings, **READER_OPTIONS),
        pairing=Pairing.of(redis, database.engine, mailbox.submit, settings.pairing_code_ttl),
    )
    app = build_app(services)
    watch_refusals(app)
    _mount_platforms(app, services)

    async def close(_: web.Application) -> None:
        await services.files.readers.aclose()
        if voice is not None:
            await voice.aclose()
        if stores.recall.embedder is not None:
            await stores.recall.embedder.aclose()
        await redis.aclose()
        await database.aclose()

    app.on_cleanup.append(close)
    pool = redis.connection_pool
    assert isinstance(pool, IdleClosingPool)
    app.cleanup_ctx.append(lambda _: closing_idle(pool))
    return app


async def _say_if_not_shared(redis: Redis, settings: Settings) -> None:
    """An ERROR at start for a files or workspaces directory that is not the one the other
    processes use (`bot.files.shared_dirs`); `/readyz` says so too, while it lasts."""
    try:
        problem = await shared_dirs.check(redis, settings)
    except (RedisError, OSError) as exc:
        log.warning("could not check the shared directories (%s)", type(exc).__name__)
        return
    if problem is not None:
        log.error("%s", problem)


def _mount_platforms(app: web.Application, services: Services) -> None:
    """The ingress of each platform with a token; see the module docstring."""
    settings = services.settings
    if settings.telegram_bot_token is not None:
        from adapters.telegram.service import TelegramService  # noqa: PLC0415

        TelegramService(services).mount(app, app[PUBLIC])
    if settings.slack_bot_token is not None:
        from adapters.slack.service import SlackService  # noqa: PLC0415

        SlackService(services).mount(app, app[PUBLIC])


def allow_open_files(settings: Settings) -> None:
    """Every event stream is an open socket: raise the soft limit on open files to fit."""
    needed = settings.max_streams + settings.redis_connections + SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        if target < needed:
            log.warning(
                "open files are limited to %d: fewer than PARLEY_MAX_STREAMS event streams fit",
                target,
            )


def run(settings: Settings) -> None:
    allow_open_files(settings)
    asyncio.run(serve(settings))


async def serve(settings: Settings) -> None:
    """Serve until SIGTERM or SIGINT, or until a platform refuses its token: that
    `ConfigError` is raised here, after a clean stop, for the command to print. The stop
    takes PARLEY_SHUTDOWN_GRACE at most (`adapters.web.shutdown`)."""
    stopping = stop_on_signals()
    app = await make_app(settings)
    refused = app[REFUSED]
    refused.add_done_callback(lambda _: stopping.set())
    runner = Runner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await _listen(runner, settings)
        await stopping.wait()
        log.info("stopping (%s)", "a platform refused its token" if refused.done() else "signal")
    finally:
        await runner.stop(settings.shutdown_grace)
    log.info("stopped")
    if refused.done():
        raise refused.result()


async def _listen(runner: Runner, settings: Settings) -> None:
    host, port = settings.http_host, settings.http_port
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        raise ConfigError(
            f"PARLEY_HTTP_PORT: cannot listen on {host}:{port} ({exc.strerror or exc})"
        ) from None
    print(f"======== Running on http://{host}:{port} ========", flush=True)
