"""Parley for end-to-end tests: the web app and most workers in the test's event loop, the
workers a test kills or signals as processes (see tests.support.workers)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import pytest
from aiohttp import web
from redis.asyncio import Redis

from adapters.http.server import Runner
from bot.config.settings import Settings
from bot.redis import keys
from bot.store.database import upgrade
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM
from tests.support.audio import speech_env, voice_env
from tests.support.images import image_env
from tests.support.parley import Process, start_parley
from tests.support.redis_server import RedisServer, free_port
from tests.support.waiting import until
from tests.support.workers import Announcements, InProcessWorker
from worker.web import make_app

if TYPE_CHECKING:
    from tests.support.postgres_server import PostgresServer

ROOT = Path(__file__).resolve().parents[2]


def stack_env(
    redis_url: str, fake: FakeLLM, database_url: str | None = None, **extra: str
) -> dict[str, str]:
    """The environment of Parley's processes; without `database_url`, the default SQLite
    file under the process's working directory. The files people send go to a folder of this
    pytest process's, never the checkout's `data/` (a stack of its own passes its own)."""
    database = {"DATABASE_URL": database_url} if database_url else {}
    return {
        **database,
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": redis_url,
        "PARLEY_MODEL": "claude-test",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        "PARLEY_LLM_BACKOFF_BASE": "0.05",
        "PARLEY_TOOL_MODULES": '["tests.support.tools"]',
        "PARLEY_LOG_LEVEL": "INFO",
        "PARLEY_FILES_DIR": str(Path(tempfile.gettempdir()) / f"parley-test-files-{os.getpid()}"),
        **extra,
    }


@dataclass
class Stack:
    redis_url: str
    fake: FakeLLM
    tmp: Path
    base_url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    workers: list[Process] = field(default_factory=list)
    in_process: list[InProcessWorker] = field(default_factory=list)
    named: dict[str, Process] = field(default_factory=dict)

    async def start_worker(self) -> InProcessWorker:
        """A worker in the test's event loop, ready to take jobs."""
        settings = env_settings(self.env)
        worker = await InProcessWorker.start(settings, Announcements(self.redis_url))
        self.in_process.append(worker)
        return worker

    async def start_worker_process(self) -> Process:
        """A `parley worker` process, ready to take jobs; it logs to worker-N.log."""
        path = self.tmp / f"worker-{len(self.workers)}.log"
        announcements = Announcements(self.redis_url)
        after = await announcements.last()
        with path.open("wb") as log:
            proc = await start_parley("worker", env=self.env, cwd=self.tmp, stdout=log, stderr=log)
        self.workers.append(proc)

        def failed() -> str | None:
            return None if proc.returncode is None else f"it exited with {proc.returncode}"

        def details() -> str:
            return f"its log:\n{path.read_text()}"

        self.named[await announcements.wait(after, proc.pid, failed, details)] = proc
        return proc

    def kill(self, proc: Process, sig: int = signal.SIGKILL) -> None:
        proc.send_signal(sig)

    def worker_named(self, worker_id: str) -> Process:
        """The worker process whose liveness id is `worker_id`, as it announced when ready."""
        if worker_id not in self.named:
            raise AssertionError(f"no worker process announced the id {worker_id}")
        return self.named[worker_id]

    async def stop(self) -> None:
        """In-process workers shut down cleanly (a failure in one fails the test); worker
        processes are killed."""
        try:
            stopped = await asyncio.gather(
                *(worker.stop() for worker in self.in_process), return_exceptions=True
            )
            for failure in stopped:
                if failure is not None:
                    raise failure
        finally:
            for proc in self.workers:
                if proc.returncode is None:
                    proc.kill()
                await proc.wait()

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base_url, timeout=60, **kwargs)

    async def session(self, client: httpx.AsyncClient) -> str:
        response = await client.post("/api/sessions")
        assert response.status_code == 201
        return str(response.json()["id"])


async def recorded(stack: Stack, session: str, count: int) -> dict[str, Any]:
    """The session as `GET /api/sessions/{id}` shows it, once its record holds `count`
    messages and no turn runs in it: what a reload reads."""
    async with stack.client() as client:
        answers: list[httpx.Response] = []

        async def written() -> bool:
            answers.append(response := await client.get(f"/api/sessions/{session}"))
            body = response.json()
            return (
                response.status_code == 200
                and len(body["recent"]) >= count
                and not (body["running"])
            )

        await until(written, lambda: f"{session} recorded: {answers[-1].text}", every=0.1)
        return dict(answers[-1].json())


async def read_events(
    response: httpx.Response,
    on_event: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
) -> list[dict[str, Any]]:
    """The SSE events of a streamed response, until it ends."""
    events: list[dict[str, Any]] = []
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            events.append(json.loads(line[6:]))
            if on_event is not None:
                await on_event(events[-1])
    return events


async def send(
    client: httpx.AsyncClient, session: str, text: str, **headers: str
) -> list[dict[str, Any]]:
    async with client.stream(
        "POST", f"/api/sessions/{session}/messages", json={"text": text}, headers=headers
    ) as response:
        assert response.status_code == 200, await response.aread()
        return await read_events(response)


def texts(events: list[dict[str, Any]]) -> str:
    """The text a client shows: deltas, with each reset wiping the current model call."""
    shown = ""
    for event in events:
        if event["type"] == "reset":
            shown = ""
        elif event["type"] == "text_delta":
            shown += event["text"]
    return shown


async def idle(redis_url: str) -> None:
    """Wait until no turn holds a lease and nothing is armed (a reply's last edit landed)."""
    redis = Redis.from_url(redis_url)

    async def quiet() -> bool:
        leases = [k async for k in redis.scan_iter("parley:*:lease")]
        return not leases and not await redis.zcard("parley:armed")

    try:
        await until(quiet, "no lease held and no reply armed")
    finally:
        await redis.aclose()


async def reply_ids_kept(redis_url: str, platform: str) -> None:
    """Once a worker has kept a reply's message ids in Redis (`adapters/replies.py`): a
    worker killed after it resumes the reply in the same message."""
    redis = Redis.from_url(redis_url)

    async def kept() -> bool:
        return bool([key async for key in redis.scan_iter(keys.reply(platform, "*"))])

    try:
        await until(kept, f"a {platform} reply's message ids kept in Redis", every=0.02)
    finally:
        await redis.aclose()


async def lease_tokens(redis_url: str) -> dict[str, str]:
    """Each held session and its lease token (`fence:worker:nonce`)."""
    redis = Redis.from_url(redis_url)
    try:
        held = {}
        async for name in redis.scan_iter("parley:*:lease"):
            token = await redis.get(name)
            if token is not None:
                held[name.decode().partition("{")[2].rpartition("}")[0]] = token.decode()
        return held
    finally:
        await redis.aclose()


def env_settings(env: dict[str, str], skip: tuple[str, ...] = ()) -> Settings:
    """The settings a process given the environment `env` reads, but for the fields in
    `skip`; a worker in the test's loop gets its settings this way."""
    values: dict[str, Any] = {}
    for name, value in env.items():
        field = name.removeprefix("PARLEY_").lower()
        if field in Settings.model_fields and field not in skip:
            values[field] = json.loads(value) if value[:1] in ("{", "[") else value
    return Settings(_env_file=None, **values)


def web_settings(env: dict[str, str]) -> Settings:
    """The web process's settings, from the same variables the workers get (the tools only
    matter to workers; the policy also says which tools `/tools` may switch on)."""
    return env_settings(env, skip=("tool_modules",))


S = TypeVar("S", bound=Stack)


@contextlib.asynccontextmanager
async def serving(built: S, settings: Settings, port: int) -> AsyncIterator[S]:
    """The web app of `settings` on `port` while the test runs; workers stopped after it."""
    runner = Runner(await make_app(settings), access_log=None)  # as `parley web` serves
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    built.base_url = f"http://127.0.0.1:{port}"
    try:
        yield built
    finally:
        await built.stop()
        await runner.cleanup()


def database_for(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh database: "sqlite" in the test's directory, or one on the test PostgreSQL."""
    if kind == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        return server.create_database()
    return f"sqlite+aiosqlite:///{tmp_path}/parley.db"


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file whose schema is at its head, made once per pytest worker."""
    path = tmp_path_factory.mktemp("schema") / "parley.db"
    with ThreadPoolExecutor(1) as thread:  # a loop of its own, whatever the caller runs
        thread.submit(asyncio.run, upgrade(f"sqlite+aiosqlite:///{path}")).result()
    return path


@pytest.fixture
def database_url(tmp_path: Path, request: pytest.FixtureRequest, migrated_sqlite: Path) -> str:
    """SQLite unless parametrised indirectly with "postgresql". The SQLite file starts as a
    copy of `migrated_sqlite`: the processes a test starts find the schema up to date, as
    every start of Parley's but the first does, instead of each test migrating a file of its
    own (tests/store/test_migrations.py migrates from an empty one)."""
    kind = getattr(request, "param", "sqlite")
    url = database_for(kind, tmp_path, request)
    if kind == "sqlite":
        with (
            contextlib.closing(sqlite3.connect(migrated_sqlite)) as source,
            contextlib.closing(sqlite3.connect(tmp_path / "parley.db")) as copy,
        ):
            source.backup(copy)
    return url


@pytest.fixture
async def stack(
    redis_url: str,
    fake_llm: FakeLLM,
    database_url: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Stack]:
    extra = {
        "PARLEY_WORKSPACE_DIR": str(tmp_path / "workspaces"),  # shared by the web and workers
        "PARLEY_FILES_DIR": str(tmp_path / "files"),
        **(getattr(request, "param", {}) or {}),
    }
    if extra.pop("voice", ""):  # voice notes transcribed at the fake model API's endpoint
        extra |= voice_env(fake_llm)
    if extra.pop("images", ""):  # `generate_image` at the fake model API's endpoint
        extra |= image_env(fake_llm)
    if extra.pop("speech", ""):  # replies said aloud at the fake model API's speech endpoint
        extra |= speech_env(fake_llm)
    env = stack_env(redis_url, fake_llm, database_url, **extra)
    built = Stack(redis_url, fake_llm, tmp_path, env=env)
    async with serving(built, web_settings(env), free_port()) as running:
        yield running


@pytest.fixture
async def own_stack(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[tuple[Stack, RedisServer]]:
    """A stack on a Redis of its own (with AOF), which the test stops and starts."""
    server = RedisServer(tmp_path / "redis-data")
    server.directory.mkdir()
    server.start()
    env = stack_env(server.url, fake_llm, f"sqlite+aiosqlite:///{tmp_path}/parley.db")
    built = Stack(server.url, fake_llm, tmp_path, env=env)
    try:
        async with serving(built, web_settings(env), free_port()) as running:
            yield running, server
    finally:
        server.stop()
