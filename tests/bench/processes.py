"""Parley's processes for the benchmarks: the fake model in a process of its own, and waits on
real readiness signals, never fixed sleeps: `parley web` answering /healthz, and workers
announcing themselves on the ready stream (`worker.ready`, `bot.redis.keys.READY_STREAM`), which
they do once their platforms are loaded. A benchmark that sampled before that would put a
worker's start-up into its figures."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import Mapping

import httpx
from redis.asyncio import Redis

from bot.redis.keys import READY_STREAM
from tests.fakes.llm import ANTHROPIC_KEY

DEADLINE_S = 60  # a busy machine starts processes slowly


def environment(redis_url: str, folder: str, model_url: str, **more: str) -> dict[str, str]:
    """What Parley's processes are started with: this Redis, a SQLite file and the files
    people send in `folder`, and the fake model at `model_url`."""
    return {
        **suite_free(os.environ),
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder}/parley.db",
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": model_url,
        "PARLEY_LOG_LEVEL": "WARNING",
        "PARLEY_FILES_DIR": f"{folder}/files",
        **more,
    }


def suite_free(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the suite's own variables, which Parley would warn are no settings."""
    return {name: value for name, value in env.items() if not name.startswith("PARLEY_BENCH_")}


async def fake_model() -> tuple[asyncio.subprocess.Process, str]:
    """The fake model APIs (`python -m tests.fakes.llm`, its demo brain) and their URL."""
    fake = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.llm", stdout=asyncio.subprocess.PIPE
    )
    return fake, await model_url(fake)


async def model_url(fake: asyncio.subprocess.Process) -> str:
    """The Anthropic base URL the fake model APIs print among their first lines."""
    assert fake.stdout is not None
    line = ""
    while not line.startswith("ANTHROPIC_BASE_URL="):  # it says more first
        line = (await fake.stdout.readline()).decode()
        assert line, "the fake model APIs did not start"
    return line.strip().removeprefix("ANTHROPIC_BASE_URL=")


async def serving(base_url: str, web: asyncio.subprocess.Process) -> None:
    """Once `parley web` at `base_url` answers its health check."""
    async with httpx.AsyncClient(base_url=base_url) as client:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and web.returncode is None:
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("`parley web` did not come up")


async def last_announcement(redis_url: str) -> str:
    """The ready stream's latest entry id: read from it to see only workers started after."""
    async with Redis.from_url(redis_url) as redis:
        entries = await redis.xrevrange(READY_STREAM, count=1)
    return entries[0][0].decode() if entries else "0-0"


async def workers_ready(
    redis_url: str, workers: list[asyncio.subprocess.Process], after: str
) -> dict[int, float]:
    """Once every process of `workers` announced it is ready after entry `after`: the Unix
    time (ms, Redis's clock) of each one's announcement, by process id. Blocks on XREAD;
    raises if a worker exits first or DEADLINE_S passes."""
    waiting = {worker.pid: worker for worker in workers}
    ready: dict[int, float] = {}
    deadline = time.monotonic() + DEADLINE_S
    async with Redis.from_url(redis_url) as redis:
        while len(ready) < len(waiting):
            ended = [w.pid for w in workers if w.returncode is not None and w.pid not in ready]
            if ended or time.monotonic() > deadline:
                why = f"exited: {ended}" if ended else f"not ready after {DEADLINE_S} s"
                raise RuntimeError(f"workers never became ready ({why})")
            for _, entries in await redis.xread({READY_STREAM: after}, block=500):
                for entry_id, fields in entries:
                    after = entry_id.decode()
                    pid = int(fields[b"pid"])
                    if pid in waiting:
                        ready[pid] = float(after.split("-")[0])
    return ready


async def start_workers(
    count: int, env: dict[str, str], redis_url: str
) -> tuple[list[asyncio.subprocess.Process], dict[int, float]]:
    """`count` `parley worker` processes, returned once all are ready, with the moments
    they said so (see `workers_ready`)."""
    after = await last_announcement(redis_url)
    command = [sys.executable, "-m", "worker", "worker"]
    env = suite_free(env)
    workers = [await asyncio.create_subprocess_exec(*command, env=env) for _ in range(count)]
    try:
        return workers, await workers_ready(redis_url, workers, after)
    except BaseException:
        await stop(workers)
        raise


async def stop(processes: list[asyncio.subprocess.Process]) -> None:
    """SIGTERM each that still runs, and wait for all."""
    for process in processes:
        if process.returncode is None:
            process.terminate()
    for process in processes:
        await process.wait()


def settle_collector() -> None:
    """Move what this process built so far out of the garbage collector's sight, as `parley
    web` does after its imports: the web app runs in this process, and a full collection
    over every module imported here (some 200,000 objects, 120-150 ms on a loaded machine)
    would otherwise stall its ingress and land on a sample as if it were Parley's latency."""
    gc.collect()
    gc.freeze()
