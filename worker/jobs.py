"""The arq worker: drain jobs are short wake-ups; turns run as tasks this process supervises.

A turn can last minutes. Kept inside arq jobs, hundreds of them would sit at the head of
arq's queue and be re-read on every poll, starving the pick-up of new messages; as short
jobs that hand the session to a supervised task (`worker.supervisor`), arq only ever sees work
that ends at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from arq.connections import ArqRedis
from arq.cron import cron
from arq.worker import Worker, func
from redis.asyncio import Redis

from adapters.http.egress import HttpEgress
from adapters.platforms.egresses import configured_egresses
from bot.agent.loop import Agent
from bot.assembly.agent import build_agent
from bot.assembly.delegate import HelperLink
from bot.assembly.stores import ToolStores
from bot.config.otel import otel_config
from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.llm.router import ModelRouter
from bot.llm.served import Served
from bot.mailbox.inbox import Mailbox
from bot.mailbox.liveness import Liveness
from bot.mcp.config import load_mcp_config
from bot.mcp.status import publish, worker_key
from bot.memory.digest import DailyDigests
from bot.memory.models import embedder_of
from bot.memory.recall import Recall
from bot.people.limits import Limits
from bot.redis import keys
from bot.redis.confirmations import Confirmations
from bot.session.deps import RunnerDeps, SessionStores
from bot.session.egress import Egress, PlatformEgress
from bot.session.helpers import HelperRuns
from bot.session.record import RunExport
from bot.session.retention import ContextRetention
from bot.session.runner import SessionRunner
from bot.session.voice import voice_replies
from bot.store.cold_context import ColdContext
from bot.store.database import Database, open_database
from bot.telemetry import logs, metrics
from bot.tools.workspace_upkeep import prune_workspaces, remove_workspace
from bot.vocabulary.envelope import Envelope, Sender, expiry_id
from worker import health, loops, redis_connections, reminders
from worker.persistence import check_persistence
from worker.picking import Picking
from worker.platform_start import FirstCall, begin_platforms
from worker.signals import stop_on_signals
from worker.supervisor import Supervisor
from worker.wakes import Wakes

if TYPE_CHECKING:
    from bot.mcp.source import McpServers
    from worker.otel import RunExporter

log = logging.getLogger(__name__)


async def wake_session(ctx: dict[str, Any], session: str) -> None:
    """The drain job: hand the session to the supervisor and end, so arq stays free."""
    supervisor: Supervisor = ctx["supervisor"]
    await supervisor.wake(session)


# Who decided, for the record and the audit: the same name the confirmation's `decided_by` gets.
EXPIRY_SENDER = "timeout"


async def expire_confirmation(ctx: dict[str, Any], confirmation_id: str) -> None:
    """At its expiry an undecided confirmation expires (its calls do not run; the model is
    told no decision was made), and the turn goes on."""
    supervisor: Supervisor = ctx["supervisor"]
    if await supervisor.confirmations.decide(confirmation_id, "expired", EXPIRY_SENDER) != "ok":
        return
    confirmation = await supervisor.confirmations.get(confirmation_id)
    if confirmation is None:
        return
    try:
        await supervisor.egress.expired(confirmation)
    except Exception:  # what people see; the decision below is what matters
        log.warning("could not show that %s expired", confirmation_id, exc_info=True)
    await supervisor.mailbox.submit(
        Envelope(
            id=expiry_id(confirmation_id),
            session=confirmation.session,
            kind="expiry",
            sender=Sender(id=EXPIRY_SENDER),
            platform=confirmation.platform,
            reply_to=confirmation.reply_to,
            confirmation_id=confirmation_id,
            approve=False,
        )
    )


async def prune(ctx: dict[str, Any]) -> int:
    """Retention: delete everything older than PARLEY_RETENTION_DAYS, in every session, from
    the record, the live contexts and the workspaces, and the files people sent that no
    message kept carries. A session idle that long goes whole: its hot state and its
    workspace too, unless a turn has just begun there (then only its old files go). An
    active session's context loses its older turns, unless a message waits or a turn runs
    there (the next pass cuts them). arq runs it in one worker at a time (a unique job id)."""
    supervisor: Supervisor = ctx["supervisor"]
    settings = supervisor.settings
    if settings.retention_days is None:
        return 0
    before = datetime.now(UTC) - timedelta(days=settings.retention_days)
    pruned = await supervisor.archive.prune(before)
    for session in pruned.sessions:
        if await supervisor.mailbox.forget_idle(session) is not None:
            await asyncio.to_thread(remove_workspace, settings.workspace_dir, session)
    cut = await _cut_contexts(supervisor.contexts, pruned.older, before.timestamp())
    files = await asyncio.to_thread(prune_workspaces, settings.workspace_dir, before)
    store = FileStore(settings.files_dir)
    sent = await asyncio.to_thread(store.remove, pruned.unused_files)
    if pruned.sessions or pruned.rows or cut or files or sent:
        log.warning(
            "retention: deleted %d sessions idle for over %g days, and older than that in "
            "the others %d runs, %d messages, %d approvals, %d ended tasks, %d days' digests, "
            "%d messages of live contexts, %d workspace files and %d files people sent",
            len(pruned.sessions), settings.retention_days, pruned.runs, pruned.messages,
            pruned.confirmations, pruned.tasks, pruned.digests, cut, files, sent,
        )  # fmt: skip
    return len(pruned.sessions)


async def _cut_contexts(contexts: ContextRetention, sessions: list[str], before: float) -> int:
    """Cut each session's live context to the window; how many messages went. One that
    fails is said and left to the next pass, and the others are still cut."""
    cut = 0
    for session in sessions:
        try:
            cut += await contexts.cut(session, before)
        except Exception:
            log.warning("retention: could not cut the context of %s", session, exc_info=True)
    return cut


# The jobs a worker runs; their names are kept in Redis with every queued job.
JOBS = [
    func(wake_session, name=keys.WAKE_SESSION_JOB, max_tries=3),
    func(expire_confirmation, name=keys.EXPIRY_JOB, max_tries=3),
    func(reminders.remind_confirmation, name=keys.REMIND_JOB, max_tries=3),
]


def _supervisor(
    settings: Settings,
    redis: ArqRedis,
    agent: Agent,
    database: Database,
    liveness: Liveness,
    platforms: Mapping[str, Egress],
    in_progress_s: float,
    exports: RunExport | None = None,
    recall: Recall | None = None,
) -> Supervisor:
    """What one worker process runs turns with, wired once Redis is connected. A worker
    answers whichever platform a session is on, and HTTP (no SDK) always. `in_progress_s`:
    how long arq marks a job it started as running (see `worker.wakes`)."""
    mailbox = Mailbox(redis, Wakes(redis, in_progress_s))
    confirmations = Confirmations(redis)

    async def schedule_expiry(confirmation_id: str, ttl: float) -> None:
        await reminders.schedule(redis, settings, confirmation_id, ttl)

    egress = PlatformEgress(HttpEgress(redis), platforms)
    limits = Limits(redis, settings)
    runner = SessionRunner(
        RunnerDeps(
            settings=settings,
            mailbox=mailbox,
            agent=agent,
            egress=egress,
            confirmations=confirmations,
            schedule_expiry=schedule_expiry,
            history=database.history,
            liveness=liveness,
            limits=limits,
            stores=SessionStores.open(database.engine, redis, recall),
            exports=exports,
            voice=voice_replies(settings, mailbox, limits),
        )
    )
    contexts = ContextRetention(
        mailbox, ColdContext(database.engine), settings.lease_ttl, liveness.id
    )
    limit = asyncio.Semaphore(settings.worker_sessions)
    return Supervisor(
        settings, runner, mailbox, confirmations, egress, database.archive, contexts, limit,
        set(),
    )  # fmt: skip


def _agent(
    settings: Settings, database: Database, announcer: Redis, helpers: HelperLink,
    servers: McpServers | None, recall: Recall,
) -> tuple[Agent, FirstCall]:  # fmt: skip
    """The worker's agent, with the MCP servers' tools, and its models, which say when they
    are first called: the platforms' load begins then (`worker.platform_start`)."""
    models = FirstCall(ModelRouter(Served.of(settings), metrics.count_key_call))
    stores = ToolStores.open(database.engine, announcer, recall)
    agent = build_agent(settings, stores=stores, helpers=helpers, provider=models)
    if servers is not None:
        agent.deps.tools.add_source(servers)
    return agent, models


def build_worker(
    settings: Settings, database: Database, servers: McpServers | None = None,
    exports: RunExport | None = None,
) -> Worker:  # fmt: skip
    """`servers`: the worker's MCP servers, whose tools the agent offers too; `exports`:
    where ended runs go besides the record (OpenTelemetry, when configured). The agent's
    tools are built before Redis is connected, those on the database's stores included, so
    their task book announces new tasks on a client of its own, which connects when a task
    is made."""
    announcer = redis_connections.client(settings)
    helpers = HelperLink()  # bound to the worker's runner once it has one
    # the tools' and the turns' recall: the model's process starts with the first embedding
    recall = Recall.on(database.engine, embedder_of(settings))
    agent, models = _agent(settings, database, announcer, helpers, servers, recall)
    digesting = (settings, recall, agent.deps.provider, agent.deps.retry)
    DailyDigests.configured(*digesting, announcer)  # a bad PARLEY_DIGEST_MODEL: said at start
    background: list[asyncio.Task[None]] = []

    async def startup(ctx: dict[str, Any]) -> None:
        redis: ArqRedis = ctx["redis"]
        liveness = ctx["liveness"] = Liveness(redis, settings.liveness_ttl)
        await liveness.start()
        log.info("worker %s is up", liveness.id)
        await check_persistence(redis)
        begin = asyncio.Event()  # the platforms' load begins (see `worker.platform_start`)
        platforms = configured_egresses(settings, redis, begin)
        supervisor = ctx["supervisor"] = _supervisor(
            settings,
            redis,
            agent,
            database,
            liveness,
            platforms,
            worker.in_progress_timeout_s,
            exports,
            recall,
        )
        supervisor.picking = picking
        helpers.bind(HelperRuns(settings, supervisor.runner, supervisor.runner.deps.limits))
        if servers is not None:
            supervisor.tools_ready = servers.first_connections
        beside = [
            liveness.run(),
            health.keep(health.Signal("worker"), health.EVERY_S, liveness.beating),
            loops.sweep(settings, supervisor.mailbox, liveness),
            loops.listen(redis, supervisor, worker),
            loops.watch_database(settings, database),
            loops.watch_shared_dirs(redis, settings),
            begin_platforms(redis, begin, models.called),
            agent.warm(),
            loops.say_ready(redis, liveness, platforms),
            metrics.publish(redis, metrics.own_key()),
        ]
        if (stores := supervisor.runner.deps.stores) is not None:
            beside.append(loops.catch_up_memories(stores.recall, redis, liveness.id))
        if (digests := DailyDigests.configured(*digesting, redis)) is not None:
            beside.append(loops.write_digests(digests))
        if servers is not None:
            beside.append(publish(redis, servers, worker_key()))
        metrics.WORKERS.set(1)
        background.extend(asyncio.create_task(loop) for loop in beside)

    async def shutdown(ctx: dict[str, Any]) -> None:
        """Idempotent: arq calls it on a clean stop, `serve` again after a lost Redis."""
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        supervisor: Supervisor | None = ctx.pop("supervisor", None)
        if supervisor is not None:
            await supervisor.stop()
            await supervisor.egress.aclose()
        await picking.aclose()
        liveness: Liveness | None = ctx.pop("liveness", None)
        if liveness is not None:
            await liveness.stop()
        with contextlib.suppress(Exception):
            await agent.aclose()
        with contextlib.suppress(Exception):
            await announcer.aclose()
        if recall.embedder is not None:
            await recall.embedder.aclose()

    worker = Worker(
        functions=JOBS,
        cron_jobs=[cron(prune, minute=17, run_at_startup=True, unique=True, timeout=600)],
        redis_pool=redis_connections.arq_client(settings),  # TLS and Sentinel alike
        on_startup=startup,
        on_shutdown=shutdown,
        poll_delay=settings.poll_delay,
        max_jobs=50,
        job_timeout=60,
        keep_result=0,
        handle_signals=False,
    )
    picking = Picking(worker)
    return worker


async def serve(settings: Settings) -> None:
    """Run a worker until SIGTERM or SIGINT. If Redis goes away, start over once it is back:
    every message and every session's state lives in Redis, so nothing is lost meanwhile."""
    stopping = stop_on_signals()
    await run_until(settings, stopping)


async def run_until(settings: Settings, stopping: asyncio.Event) -> None:
    """Run a worker until `stopping` is set, then shut it down as a SIGTERM does: `serve`
    once the signals are wired, or a worker inside a program that owns its event loop.

    The MCP servers are checked first (a bad mcp.json stops the worker with one line) and
    start connecting in the background; they stay connected while arq's worker restarts."""
    servers = _mcp_servers(settings)
    exports = _exports(settings)
    if servers is not None:
        servers.start()
    try:
        database = await open_database(settings)
        try:
            await _serve(settings, database, stopping, servers, exports)
        finally:
            await database.aclose()
    finally:
        if servers is not None:
            await servers.aclose()
        if exports is not None:  # the spans still queued go out, in a bounded time
            await asyncio.to_thread(exports.shutdown)


def _exports(settings: Settings) -> RunExporter | None:
    """The runs' OpenTelemetry export, when an OTLP endpoint is set (a bad variable is a
    ConfigError); the SDK is only loaded then."""
    config = otel_config()
    if config is None:
        return None
    from worker.otel import run_exporter  # noqa: PLC0415

    return run_exporter(config, logs.secrets_of(settings))


def _mcp_servers(settings: Settings) -> McpServers | None:
    """The worker's MCP servers, if it has any; the MCP SDK (half a second to import) is
    only loaded then."""
    config = load_mcp_config(settings)
    if config is None:
        return None
    from bot.mcp.source import McpServers  # noqa: PLC0415

    return McpServers(config, settings)


async def _serve(
    settings: Settings, database: Database, stopping: asyncio.Event, servers: McpServers | None,
    exports: RunExporter | None = None,
) -> None:  # fmt: skip
    while not stopping.is_set():
        worker = build_worker(settings, database, servers, exports)
        running = asyncio.create_task(worker.async_run())
        stop = asyncio.create_task(stopping.wait())
        await asyncio.wait({running, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        running.cancel()
        failure = None
        with contextlib.suppress(asyncio.CancelledError):
            failure = await asyncio.gather(running, return_exceptions=True)
        pool = worker.pool  # ours (`redis_connections.arq_client`): closed whatever happens
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await worker.close()  # fails without Redis; the jobs it waits for were cancelled
        with contextlib.suppress(Exception):
            await pool.aclose()  # its connections, and with Sentinel those to the sentinels
        if worker.on_shutdown is not None:
            await worker.on_shutdown(worker.ctx)
        if not stopping.is_set():
            log.warning("worker stopped (%s); starting again in 1 s", failure)
            await asyncio.sleep(1)
