"""The `parley` command: one entry point for every process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot import __version__
from bot.config.settings import ConfigError, Settings, load_settings
from bot.config.warnings import WARNED, settings_warnings
from bot.telemetry import logs

if TYPE_CHECKING:
    from bot.agent.loop import Agent
    from worker.pair import Done

log = logging.getLogger(__name__)
# `parley doctor`'s checks, for its help (`worker.doctor.run.NAMES`, which the command checks)
DOCTOR_CHECKS = (
    "configuration", "redis", "database", "telegram", "slack", "model", "memory", "mcp",
    "sandbox",
)  # fmt: skip
SKIP_HELP = "Leave a check out (repeatable): " + ", ".join(DOCTOR_CHECKS) + "."
MCP_PORT = 8081  # next to `parley web`'s 8080, so both can run on one machine
app = typer.Typer(
    name="parley",
    help="A self-hosted LLM chat agent for Telegram, Slack and HTTP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _settings() -> Settings:
    """The settings, or exit 2 with one line naming the bad variable; what they allow but
    was hardly meant is a warning line each (`bot.config.warnings`)."""
    try:
        settings = load_settings()
    except ConfigError as exc:
        typer.echo(f"parley: configuration error: {exc}", err=True)
        raise typer.Exit(2) from None
    logs.configure(settings)
    for line in settings_warnings(settings, os.environ):
        log.warning(line)
    os.environ[WARNED] = "1"  # the processes this one starts do not say it again
    return settings


def _check_model(settings: Settings) -> Agent:
    """The agent, or exit 2 with one line if the model or its key is wrong."""
    from bot.assembly.agent import build_agent

    try:
        return build_agent(settings)
    except ConfigError as exc:
        typer.echo(f"parley: configuration error: {exc}", err=True)
        raise typer.Exit(2) from None


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """No garbage collection while a process imports its modules and builds what it runs on.

    A worker's imports leave some 230,000 objects (pydantic builds a class for each of the
    Anthropic API's 1,400 types), none of them garbage, and the collector's 500 passes over
    them while they pile up cost a seventh of the imports' CPU (0.3 s of 2.2 s). Afterwards
    they are moved out of its sight for good (`gc.freeze`): later passes skip them too.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


@contextlib.contextmanager
def _database_errors() -> Iterator[None]:
    """A database (or, for `parley web`, a Redis) that cannot be reached, or one migrated by
    a newer version: exit 1 with one line, not a traceback."""
    from bot.store.database import DatabaseUnavailable, SchemaAhead
    from worker.redis_pool import RedisUnavailable

    try:
        yield
    except (DatabaseUnavailable, SchemaAhead, RedisUnavailable) as exc:
        typer.echo(f"parley: {exc}", err=True)
        raise typer.Exit(1) from None


@app.command()
def chat() -> None:
    """Chat with the agent in this terminal (reads stdin, so `echo hi | parley chat` works)."""
    from adapters.console import ConsoleChat

    settings = _settings()
    agent = _check_model(settings)

    async def main() -> int:
        warming = asyncio.create_task(agent.warm())  # the calculator's helper
        try:
            return await ConsoleChat(agent, settings).run()
        finally:
            warming.cancel()
            await agent.aclose()

    raise typer.Exit(asyncio.run(main()))


def _check_agent(settings: Settings) -> None:
    """Exit 2 with one line if the model, its key or the tools are wrong, as `_check_model`
    would, without building the agent: `parley up` runs none, and its worker imports the
    provider's SDK (over a second of CPU) itself, so the processes start that much sooner."""
    from bot.assembly.agent import configured_tools, tool_registry
    from bot.llm.served import Served

    try:
        Served.of(settings).check()
        tool_registry(configured_tools(settings))
    except ConfigError as exc:
        typer.echo(f"parley: configuration error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command()
def up() -> None:
    """Run everything here: Redis (started if needed), a worker, the scheduler and the web chat."""
    from worker.up import up as run_all

    settings = _settings()
    _check_agent(settings)
    raise typer.Exit(run_all(settings, _command))


def _command(args: list[str]) -> None:
    """`parley ARGS` in this process: what `parley up` runs in each child it forks."""
    app(args, prog_name="parley")


@app.command()
def web() -> None:
    """Serve the HTTP API and the web chat (PARLEY_HTTP_HOST:PARLEY_HTTP_PORT)."""
    settings = _settings()  # before the platforms' SDKs load: a mistake is said at once
    with _starting():
        from worker.web import run

    with _database_errors():
        try:
            run(settings)
        except ConfigError as exc:  # a platform refused its token, or the port is taken
            typer.echo(f"parley: configuration error: {exc}", err=True)
            raise typer.Exit(2) from None


@app.command()
def worker() -> None:
    """Run an arq worker that takes the turns of waiting sessions; start as many as you like."""
    from bot.sandbox.probe import start

    start()  # while the rest is imported
    settings = _settings()
    with _starting():
        from worker.jobs import serve

        _check_model(settings)
    with _database_errors():
        try:
            asyncio.run(serve(settings))
        except ConfigError as exc:  # a mistake in the MCP servers' file
            typer.echo(f"parley: configuration error: {exc}", err=True)
            raise typer.Exit(2) from None


@app.command()
def scheduler() -> None:
    """Run the scheduled tasks (reminders, recurring jobs); a second one stands by."""
    settings = _settings()
    with _starting():
        from worker.scheduler import serve

    with _database_errors():
        try:
            asyncio.run(serve(settings))
        except ConfigError as exc:  # a configured task names a session no platform makes
            typer.echo(f"parley: configuration error: {exc}", err=True)
            raise typer.Exit(2) from None


@app.command()
def health(
    role: str = typer.Argument(..., help="web, worker or scheduler: the process to check."),
) -> None:
    """Check this host's process (for Docker's HEALTHCHECK and Kubernetes' probes): exit 0
    if it is healthy, else 1 with one line saying what is wrong."""
    from worker import health as probes

    if role == "web":
        try:
            settings = load_settings()
        except ConfigError as exc:
            typer.echo(f"parley: configuration error: {exc}", err=True)
            raise typer.Exit(2) from None
        problem = probes.check_web(settings.http_host, settings.http_port)
    elif role in probes.ROLES:
        problem = probes.check_role(role)
    else:
        typer.echo(f"parley: health checks web, worker or scheduler, not {role!r}", err=True)
        raise typer.Exit(2)
    if problem is not None:
        typer.echo(f"parley: {problem}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{role}: healthy")


@app.command()
def doctor(
    model: bool = typer.Option(
        False, "--model", help="Also call the default model once, for a few tokens."
    ),
    skip: Annotated[list[str] | None, typer.Option("--skip", help=SKIP_HELP)] = None,
    timeout: float = typer.Option(15.0, "--timeout", help="Seconds each check may take."),
    as_json: bool = typer.Option(False, "--json", help="The checklist as JSON."),
) -> None:
    """Check this deployment: settings, Redis, the database, the platforms' tokens, MCP
    servers, the sandbox; the fix for each failure, no secret shown. Exit 1 if any failed."""
    from worker.doctor import report
    from worker.doctor.run import NAMES, Options, examine

    skip = skip or []
    unknown = [name for name in skip if name not in NAMES]
    if unknown:
        known = ", ".join(NAMES)
        typer.echo(f"parley: --skip takes {known}, not {unknown[0]!r}", err=True)
        raise typer.Exit(2)
    if not 0 < timeout <= 600:
        typer.echo(
            f"parley: --timeout must be more than 0 and at most 600, not {timeout:g}", err=True
        )
        raise typer.Exit(2)
    outcome = examine(Options(model=model, skip=frozenset(skip), timeout=timeout))
    render = report.render_json if as_json else report.render
    typer.echo(render(outcome.findings, outcome.scrub))
    raise typer.Exit(1 if report.failures(outcome.findings) else 0)


@app.command()
def mcp(
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP at /mcp (needs PARLEY_API_TOKEN)."
    ),
    port: int | None = typer.Option(
        None, "--port", help=f"The HTTP port (default {MCP_PORT}; 0 = any free one)."
    ),
    sensitive: bool = typer.Option(
        False, "--sensitive", help="Offer sensitive tools too (code, file writes)."
    ),
) -> None:
    """Serve Parley's tools to MCP clients: over stdio (the default) or streamable HTTP."""
    from worker.mcp_server import serve

    if port is not None and not http:
        typer.echo("parley: --port is for --http; stdio needs no port", err=True)
        raise typer.Exit(2)
    if port is not None and not 0 <= port <= 65535:
        typer.echo(f"parley: --port must be 0-65535, not {port}", err=True)
        raise typer.Exit(2)
    settings = _settings()
    chosen = MCP_PORT if port is None else port
    try:
        asyncio.run(serve(settings, http=http, port=chosen, sensitive=sensitive))
    except ConfigError as exc:
        typer.echo(f"parley: configuration error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command()
def migrate(
    revision: str = typer.Argument("head", help="The revision to go to."),
    down: bool = typer.Option(False, "--down", help="Downgrade to REVISION instead."),
) -> None:
    """Bring the database (DATABASE_URL) up to date; every process also does this on start."""
    from bot.config.database_url import BadDatabaseUrl, database_url
    from bot.store import migrate as migrations
    from bot.store.database import upgrade
    from bot.store.engine import shown_url

    settings = _settings()
    try:
        url = shown_url(database_url(settings.database_url))
    except BadDatabaseUrl as exc:
        typer.echo(f"parley: configuration error: {exc}", err=True)
        raise typer.Exit(2) from None

    async def main() -> str | None:
        if down:
            await migrations.downgrade(settings.database_url, revision)
        else:
            await upgrade(settings.database_url, revision=revision, wait=0)
        return await migrations.current(settings.database_url)

    with _database_errors():
        typer.echo(f"{url}: schema at {asyncio.run(main()) or 'empty (base)'}")


@app.command()
def backup(
    destination: str = typer.Argument(
        ..., help="A new file (or a folder) to copy the SQLite database to."
    ),
) -> None:
    """Copy the SQLite database (DATABASE_URL) while Parley runs: a consistent snapshot,
    checked; PostgreSQL is backed up with pg_dump, Redis by copying its AOF."""
    from worker.backup import BackupRefused, back_up

    settings = _settings()
    try:
        copied = back_up(settings.database_url, Path(destination))
    except BackupRefused as exc:
        typer.echo(f"parley: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(copied.line())


pair_app = typer.Typer(
    name="pair",
    help="Let strangers in by their pairing codes (PARLEY_DM_POLICY=pairing).",
    no_args_is_help=True,
)
app.add_typer(pair_app)


@pair_app.command("approve")
def pair_approve(code: str = typer.Argument(..., help="The code the person was given.")) -> None:
    """Pair the person a code was given to: they may talk to the bot, and are told so."""
    from worker import pair

    _pairing_done(lambda settings: pair.approve(settings, code))


@pair_app.command("list")
def pair_list() -> None:
    """The codes waiting for an admin, and the people paired."""
    from worker import pair

    _pairing_done(pair.listing)


@pair_app.command("revoke")
def pair_revoke(person: str = typer.Argument(..., help="The person's id, like tg:123.")) -> None:
    """Unpair a person: they are a stranger again."""
    from worker import pair

    _pairing_done(lambda settings: pair.revoke(settings, person))


def _pairing_done(run: Callable[[Settings], Coroutine[Any, Any, Done]]) -> None:
    """Run a `parley pair` command: its answer on stdout, or on stderr with exit 1."""
    settings = _settings()
    with _database_errors():
        done = asyncio.run(run(settings))
    typer.echo(done.text, err=not done.ok)
    if not done.ok:
        raise typer.Exit(1)


@app.command()
def version() -> None:
    """Print Parley's version."""
    typer.echo(__version__)


@app.command("trace-key")
def trace_key() -> None:
    """Print a new key for PARLEY_TRACE_KEY, which seals runs' traces at rest."""
    from cryptography.fernet import Fernet

    typer.echo(Fernet.generate_key().decode())
