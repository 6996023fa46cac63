"""`parley web` as a process of its own, for the tests of what an install serves: started from
a given command and folder (another copy of the code, a wheel's virtualenv), awaited on its
`/healthz`, stopped with SIGTERM; its log kept in a file the test reads."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from tests.support.waiting import until

START_LIMIT = 90  # a busy machine imports the web process's modules slowly


@contextlib.asynccontextmanager
async def web_process(
    command: list[str], env: dict[str, str], cwd: Path, log: Path
) -> AsyncIterator[str]:
    """The base URL of `command` (a `parley web`) once it answers `/healthz`, listening on
    `PARLEY_HTTP_PORT` of `env`; it is stopped when the block ends."""
    base = f"http://127.0.0.1:{env['PARLEY_HTTP_PORT']}"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *command, env=env, cwd=cwd, stdout=out, stderr=asyncio.subprocess.STDOUT
        )
    try:
        await _answering(base, proc, log)
        yield base
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)


async def _answering(base: str, proc: asyncio.subprocess.Process, log: Path) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:

        async def answering() -> bool:
            if proc.returncode is not None:
                said = await asyncio.to_thread(log.read_text)
                raise AssertionError(f"it exited with {proc.returncode}: {said}")
            with contextlib.suppress(httpx.TransportError):
                return (await client.get("/healthz")).status_code == 200
            return False

        await until(answering, lambda: f"an answer on /healthz: {log.read_text()}", START_LIMIT)
