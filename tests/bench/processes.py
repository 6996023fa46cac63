"""Parley's processes for the benchmarks: the fake model in a process of its own, and a
wait for `parley web` to serve."""

from __future__ import annotations

import asyncio
import sys
import time

import httpx

DEADLINE_S = 60  # a busy machine starts processes slowly


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
