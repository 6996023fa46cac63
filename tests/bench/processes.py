"""Parley's processes for the benchmarks: the fake model in a process of its own, and a
wait for `parley web` to serve."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import httpx

from tests.fakes.llm import ANTHROPIC_KEY

DEADLINE_S = 60  # a busy machine starts processes slowly


def environment(redis_url: str, folder: str, model_url: str, **more: str) -> dict[str, str]:
    """What Parley's processes are started with: this Redis, a SQLite file in `folder`, and
    the fake model at `model_url`."""
    return {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder}/parley.db",
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": model_url,
        "PARLEY_LOG_LEVEL": "WARNING",
        **more,
    }


async def fake_model() -> tuple[asyncio.subprocess.Process, str]:
    """The fake model APIs (`python -m tests.fakes.llm`, its demo brain) and their URL."""
    fake = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.llm", stdout=asyncio.subprocess.PIPE
    )
    assert fake.stdout is not None
    return fake, (await fake.stdout.readline()).decode().strip()


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
