"""`parley scheduler` processes for tests, and which of them leads (the lease's token names
the host and process id, see `bot.redis.leader`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from redis.asyncio import Redis

from bot.redis import keys
from tests.support.parley import Process, start_parley
from tests.support.waiting import until


class Schedulers:
    """Scheduler processes started with `env` in `tmp`, each logging to scheduler-N.log."""

    def __init__(self, redis_url: str, env: dict[str, str], tmp: Path) -> None:
        self.redis_url = redis_url
        self.env = env
        self.tmp = tmp
        self.processes: list[Process] = []

    async def start(self, env: dict[str, str] | None = None) -> Process:
        path = self.tmp / f"scheduler-{len(self.processes)}.log"
        with path.open("wb") as log:
            proc = await start_parley(
                "scheduler", env={**self.env, **(env or {})}, cwd=self.tmp, stdout=log, stderr=log
            )
        self.processes.append(proc)
        return proc

    def log(self, proc: Process) -> str:
        return (self.tmp / f"scheduler-{self.processes.index(proc)}.log").read_text()

    async def leader(self) -> int | None:
        """The process id of the scheduler that leads now, if any."""
        async with Redis.from_url(self.redis_url) as redis:
            token = await redis.get(keys.SCHEDULER_LEADER)
        return int(token.decode().split(":")[1]) if token else None

    async def wait_for_leader(self, among: list[Process] | None = None) -> Process:
        """The process that leads, once one of `among` (default: all started) does."""
        candidates = among if among is not None else self.processes
        leading: list[Process] = []

        async def led() -> bool:
            pid = await self.leader()
            leading[:] = [p for p in candidates if p.pid == pid and p.returncode is None]
            for proc in candidates:
                if proc.returncode is not None and proc.returncode != -9:
                    raise AssertionError(f"a scheduler exited: {self.log(proc)}")
            return bool(leading)

        await until(led, lambda: "\n".join(["a scheduler leading", *map(self.log, candidates)]))
        return leading[0]

    async def stop(self) -> None:
        """SIGTERM, so the leader lets go of the lease and the next test's scheduler leads at
        once; SIGKILL for one that does not stop."""
        for proc in self.processes:
            if proc.returncode is None:
                proc.terminate()
        for proc in self.processes:
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
