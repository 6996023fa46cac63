"""`parley scheduler`: runs the scheduled tasks; start two for a standby.

APScheduler 3 cannot share its jobs between processes, so one scheduler leads at a time under
a Redis leader lease (`bot.redis.leader`); the others stand by, trying to take the lease every
second, and one takes over within the lease's TTL (PARLEY_SCHEDULER_LEASE) of the leader's
death, or at once when it stops cleanly and lets go. A run sent twice around a takeover has one
envelope id, which the mailbox's dedup drops (`bot.tasks.scheduler`).

While it leads, a scheduler listens on `parley:tasks` for the tasks people and operators add
or cancel, subscribed before it loads the table so no change falls in between, and reloads
the whole table every `RELOAD_EVERY_S` for an announcement lost with a connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from datetime import UTC, datetime

from arq.connections import ArqRedis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from adapters.platforms.targets import UnknownSession, target_of
from bot.config.settings import ConfigError, Settings
from bot.config.values import ConfiguredTask
from bot.config.zones import known_zone
from bot.llm.served import served_model
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.redis.leader import LeaderLease
from bot.store.database import open_database
from bot.tasks.book import NewTask, TaskBook
from bot.tasks.model import CONFIG_CREATOR
from bot.tasks.scheduler import TaskScheduler
from bot.telemetry import metrics
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import parse_when
from bot.waits import set_within
from worker import health
from worker.redis_pool import open_pool
from worker.signals import stop_on_signals
from worker.wakes import QueueJobs

log = logging.getLogger(__name__)
STANDBY_POLL_S = 1.0
RELOAD_EVERY_S = 30.0
TASK_ID = re.compile(r"[0-9]{1,19}")
CONFIG_SENDER = Sender(id=CONFIG_CREATOR, name="Parley's configuration")


async def serve(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT; a leader lets go of the lease on the way out."""
    stopping = stop_on_signals()
    await run_until(settings, stopping)


async def run_until(settings: Settings, stopping: asyncio.Event) -> None:
    configured = configured_tasks(settings, datetime.now(UTC))  # a bad one stops us here
    database = await open_database(settings)
    redis = await open_pool(settings)
    lease = LeaderLease(redis, keys.SCHEDULER_LEADER, settings.scheduler_lease)
    book = TaskBook(database.engine, redis)
    log.info("scheduler %s is up", lease.token)
    signal = asyncio.create_task(
        health.keep(health.Signal("scheduler"), health.EVERY_S, lambda: True)
    )
    metrics.SCHEDULERS.set(1)  # counted on /metrics, as a worker is, by the snapshot it publishes
    published = asyncio.create_task(metrics.publish(redis, metrics.own_key()))
    try:
        while not stopping.is_set():
            try:
                if await lease.acquire():
                    await _lead(settings, redis, book, lease, configured, stopping)
            except (OSError, RedisError) as exc:
                log.warning("scheduler %s: Redis away (%s); standing by", lease.token, exc)
            await _wait(stopping, STANDBY_POLL_S)
    finally:
        signal.cancel()
        published.cancel()  # its snapshot is removed on the way out
        await asyncio.gather(signal, published, return_exceptions=True)
        with contextlib.suppress(Exception):
            await lease.release()
        await redis.aclose()
        await database.aclose()


async def _lead(
    settings: Settings,
    redis: ArqRedis,
    book: TaskBook,
    lease: LeaderLease,
    configured: list[NewTask],
    stopping: asyncio.Event,
) -> None:
    """Run the tasks until this process stops or loses the lease."""
    log.info("scheduler %s leads", lease.token)
    await book.replace_config(configured, datetime.now(UTC))
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.TASKS_CHANNEL)
    clock = TaskScheduler(
        book,
        Mailbox(redis, QueueJobs(redis)).submit,
        grace=settings.task_grace,
        is_admin=settings.is_admin,
    )
    lost = asyncio.Event()
    helpers = [
        asyncio.create_task(_keep(lease, settings.scheduler_lease, lost)),
        asyncio.create_task(_follow(pubsub, clock)),
        asyncio.create_task(_reload_now_and_then(clock)),
    ]
    metrics.SCHEDULER_LEADING.set(1)
    try:
        await clock.start()
        ended = [asyncio.create_task(stopping.wait()), asyncio.create_task(lost.wait())]
        await asyncio.wait([*ended, *helpers], return_when=asyncio.FIRST_COMPLETED)
        for waiter in ended:
            waiter.cancel()
    finally:
        metrics.SCHEDULER_LEADING.set(0)
        clock.stop()
        for helper in helpers:
            helper.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        with contextlib.suppress(Exception):
            await pubsub.reset()
    if lost.is_set():
        log.warning("scheduler %s lost the lease; standing by", lease.token)


async def _keep(lease: LeaderLease, ttl: float, lost: asyncio.Event) -> None:
    """Renew the lease every third of its TTL; a refused renewal, or none that worked for a
    whole TTL, means another scheduler may lead now."""
    loop = asyncio.get_running_loop()
    renewed = loop.time()
    while True:
        await asyncio.sleep(ttl / 3)
        try:
            if not await lease.renew():
                break
            renewed = loop.time()
        except (OSError, RedisError):
            log.warning("scheduler %s could not renew its lease", lease.token, exc_info=True)
            if loop.time() - renewed >= ttl:
                break
    lost.set()


async def _follow(pubsub: PubSub, clock: TaskScheduler) -> None:
    """Apply each announced change (a task id) as it comes."""
    async for message in pubsub.listen():
        if message.get("type") != "message":
            continue
        raw = message["data"]
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        if not TASK_ID.fullmatch(text):
            log.warning("ignored an announcement that is not a task id: %r", text[:40])
            continue
        try:
            await clock.apply(int(text))
        except Exception:
            log.warning("could not apply the change of task %s", text, exc_info=True)


async def _reload_now_and_then(clock: TaskScheduler) -> None:
    while True:
        await asyncio.sleep(RELOAD_EVERY_S)
        try:
            await clock.reload()
        except Exception:
            log.warning("could not reload the tasks", exc_info=True)


async def _wait(stopping: asyncio.Event, seconds: float) -> None:
    await set_within(stopping, seconds)


def configured_tasks(settings: Settings, now: datetime) -> list[NewTask]:
    """PARLEY_TASKS as tasks; a session no platform would make is a configuration error."""
    return [_configured(task, settings, now) for task in settings.tasks]


def _configured(task: ConfiguredTask, settings: Settings, now: datetime) -> NewTask:
    try:
        target = target_of(task.session)
    except UnknownSession as exc:
        raise ConfigError(f"PARLEY_TASKS: task {task.name!r}: {exc}") from None
    zone = known_zone(task.timezone or settings.timezone)
    schedule = parse_when(task.when, zone, now)  # read once already by the settings
    config = task.config
    if config is not None and config.model is not None:
        if (served := served_model(settings, config.model)) is None:
            raise ConfigError(
                f"PARLEY_TASKS: task {task.name!r}: this deployment's API does not serve "
                f"{config.model!r}"
            )
        config = config.model_copy(update={"model": served})
    return NewTask(
        target=target,
        creator=CONFIG_SENDER,
        prompt=task.prompt,
        when=task.when,
        schedule=schedule,
        if_missed=task.if_missed,
        name=task.name,
        config=config,
    )
