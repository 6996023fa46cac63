"""`parley web` as a process of its own, for the tests of what an install serves: started from
a given command and folder (another copy of the code, a wheel's virtualenv), awaited on its
`/healthz`, stopped with SIGTERM; its log kept in a file the test reads. Without a command,
it is this checkout's `parley web`, forked (`tests.support.parley`). `WebProcess` is that
one too, which a test stops when it likes."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.parley import STDOUT, Process, start_parley
from tests.support.waiting import until

START_LIMIT = 90  # a busy machine imports the web process's modules slowly


@contextlib.asynccontextmanager
async def web_process(
    env: dict[str, str], cwd: Path, log: Path, *, command: list[str] | None = None
) -> AsyncIterator[str]:
    """The base URL of `parley web` (executed as `command` when one is given) once it answers
    `/healthz`, listening on `PARLEY_HTTP_PORT` of `env`; it is stopped when the block ends."""
    base = f"http://127.0.0.1:{env['PARLEY_HTTP_PORT']}"
    proc: Process
    with log.open("wb") as out:
        if command is None:
            proc = await start_parley("web", env=env, cwd=cwd, stdout=out, stderr=STDOUT)
        else:
            proc = await asyncio.create_subprocess_exec(
                *command, env=env, cwd=cwd, stdout=out, stderr=STDOUT
            )
    try:
        await _answering(base, proc, log)
        yield base
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)


async def _answering(base: str, proc: Process, log: Path, path: str = "/healthz") -> None:
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:

        async def answering() -> bool:
            if proc.returncode is not None:
                said = await asyncio.to_thread(log.read_text)
                raise AssertionError(f"it exited with {proc.returncode}: {said}")
            with contextlib.suppress(httpx.TransportError):
                return (await client.get(path)).status_code == 200
            return False

        await until(answering, lambda: f"an answer on {path}: {log.read_text()}", START_LIMIT)


@dataclass
class WebProcess:
    """`python -m worker web` started with `env` in `cwd`, logging to `log`; a test stops it
    with SIGTERM when it likes (`terminate`) and reads how long that took and how it ended."""

    proc: Process
    base: str
    log: Path
    asked: float = 0.0  # the loop's time of the SIGTERM

    @classmethod
    async def start(cls, env: dict[str, str], cwd: Path, log: Path) -> WebProcess:
        """Once it answers `/readyz` (its platforms connected), or a failed test."""
        with log.open("wb") as out:
            proc = await start_parley("web", env=env, cwd=cwd, stdout=out, stderr=STDOUT)
        started = cls(proc, f"http://127.0.0.1:{env['PARLEY_HTTP_PORT']}", log)
        try:
            await _answering(started.base, proc, log, "/readyz")
        except BaseException:
            await started.kill()
            raise
        return started

    def said(self) -> str:
        return self.log.read_text()

    def sigterm(self) -> None:
        self.asked = asyncio.get_running_loop().time()
        self.proc.send_signal(signal.SIGTERM)

    async def exited(self, within: float = START_LIMIT) -> tuple[int, float]:
        """Its exit status, and the seconds from SIGTERM to its exit."""
        try:
            code = await asyncio.wait_for(self.proc.wait(), within)
        except TimeoutError:
            await self.kill()
            raise AssertionError(f"still running {within} s after SIGTERM: {self.said()}") from None
        return code, asyncio.get_running_loop().time() - self.asked

    async def terminate(self, within: float = START_LIMIT) -> tuple[int, float]:
        """SIGTERM; its exit status and the seconds it took to exit."""
        self.sigterm()
        return await self.exited(within)

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
