"""What a deployment costs: at rest, and per turn, in CPU of each of Parley's processes.

The deployment is what an operator runs: `parley web` (Telegram's long poll, the web app), one
`parley worker`, `parley scheduler` and redis-server, each a real process with the default
settings, Telegram and the fake model configured. CPU is read from /proc: a process's own, and
its children's, live or reaped (a worker's tool helpers, the web's spare file readers).

At rest: after each process says it is ready and one reply went through (so what a first
message starts, say a tool helper, runs as it would), the processes are left alone for
`SETTLE_S` and then watched for `WINDOW_S`: CPU per second of wall clock, and the commands
Redis ran (a count, steadier than CPU on a shared machine). Target: under 5 ms/s in all.

Per turn: `TURNS` short turns one after another, each a new person's "hi" in a private chat
(one person's messages are rate limited), from the update queued at the fake Bot API to the
reply's final text in the chat; the CPU each process used meanwhile, less its rate at rest,
divided by the turns, and Redis's commands per turn. Target: under 15 ms in all.

The fake Telegram and model run in this process, whose CPU is not counted; a long poll held
by the fake costs Parley nothing while it waits, as the real Bot API's does. Run with
`make bench` or `python -m tests.bench.footprint`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from redis.asyncio import Redis

from tests.bench.processes import environment, serving, start_workers, stop
from tests.bench.table import Figure, quick, report, samples
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.tg import TOKEN, FakeTelegram, TgUser
from tests.support.redis_server import RedisServer, free_port

SETTLE_S = 10.0 if quick() else 75.0  # past the web's spare readers' 60 s
WINDOW_S = 5.0 if quick() else 60.0
TARGET_MS_PER_S = 5.0  # the whole deployment
DEADLINE_S = 60.0
ANN = TgUser(id=1001, first_name="Ann")  # the first reply's; each turn has a person of its own
ANSWER = "Hello, Ann."
TURNS = samples(100, 5)
TURN_TARGET_MS = 15.0
NAMES = ("web", "worker", "scheduler", "redis")
FIGURES = [
    *(f"idle CPU, {name}" for name in NAMES),
    "idle CPU, all processes",
    "idle Redis commands",
    *(f"CPU per turn, {name}" for name in NAMES),
    "CPU per turn, all processes",
    "Redis commands per turn",
]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def _children() -> dict[int, list[int]]:
    """Every live process's children, by parent pid, from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and every descendant, live or reaped (utime, stime and the
    reaped children's cutime and cstime), from /proc."""
    tree, total, todo = _children(), 0, [pid]
    while todo:
        current = todo.pop()
        fields = _stat(current)
        if fields is not None:
            total += sum(int(value) for value in fields[11:15])
            todo.extend(tree.get(current, []))
    return total / os.sysconf("SC_CLK_TCK")


def redis_pid(server: RedisServer) -> int:
    assert server.process is not None, "redis-server is not running"
    return server.process.pid


async def turn(telegram: FakeTelegram, person: TgUser) -> None:
    """`person`'s "hi" in a private chat, until the reply's final text shows there."""
    chat = telegram.private_chat(person)
    since = len(telegram.calls)
    telegram.send(chat, person, "hi")
    deadline = time.monotonic() + DEADLINE_S
    while not any(
        c.method == "sendMessage" and c.params.get("text") == ANSWER
        and str(c.params.get("chat_id")) == str(chat.id)
        for c in telegram.calls[since:]
    ):  # fmt: skip
        if time.monotonic() > deadline:
            raise RuntimeError(f"no reply to {person.first_name} within {DEADLINE_S:.0f} s")
        await asyncio.sleep(0.002)


async def commands(redis: Redis) -> Counter[str]:
    """How many times Redis ran each command so far (INFO commandstats)."""
    stats = await redis.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()})


@dataclass
class Usage:
    """What `pids` used while `watching`: CPU ms of each, and the commands Redis ran."""

    pids: dict[str, int]
    redis: Redis
    cpu_ms: dict[str, float] = field(default_factory=dict)
    ran: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        cpu = {name: tree_cpu(pid) for name, pid in self.pids.items()}
        ran, start = await commands(self.redis), time.monotonic()
        yield
        self.seconds = time.monotonic() - start
        self.ran = await commands(self.redis) - ran
        self.ran["info"] -= 1  # the second INFO is this benchmark's
        self.cpu_ms = {name: (tree_cpu(p) - cpu[name]) * 1000 for name, p in self.pids.items()}


@contextlib.asynccontextmanager
async def deployment(folder: str) -> AsyncIterator[tuple[FakeTelegram, dict[str, int], str]]:
    """Redis, `parley web`, a worker and the scheduler, each ready and one reply through:
    the fake Telegram, the processes by name, and Redis's URL."""
    redis = RedisServer(Path(folder))
    redis.start()
    processes: list[asyncio.subprocess.Process] = []
    try:
        async with FakeLLM() as llm, FakeTelegram() as telegram:
            llm.responder = lambda _request: Reply(text=ANSWER)
            port = free_port()
            env = environment(
                redis.url, folder, llm.anthropic_base_url,
                TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_URL=telegram.base_url,
                PARLEY_HTTP_PORT=str(port),
            )  # fmt: skip
            run = ("web", "scheduler")
            web, scheduler = [
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "worker", role, env=env, stdout=asyncio.subprocess.DEVNULL
                )
                for role in run
            ]
            processes += [web, scheduler]
            await serving(f"http://127.0.0.1:{port}", web)
            workers, _ = await start_workers(1, env, redis.url)
            processes += workers
            await turn(telegram, ANN)
            pids = {"web": web.pid, "worker": workers[0].pid, "scheduler": scheduler.pid}
            yield telegram, pids | {"redis": redis_pid(redis)}, redis.url
    finally:
        await stop(processes)
        redis.stop()


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with deployment(folder) as (telegram, pids, redis_url):
            await asyncio.sleep(SETTLE_S)
            async with Redis.from_url(redis_url) as redis:
                rest, busy = Usage(pids, redis), Usage(pids, redis)
                async with rest.watching():
                    await asyncio.sleep(WINDOW_S)
                async with busy.watching():
                    for n in range(TURNS):
                        await turn(telegram, TgUser(id=5000 + n, first_name="Ann"))
    print_rest(rest)
    print_turns(busy, rest)


def print_rest(rest: Usage) -> None:
    per_s = {name: ms / rest.seconds for name, ms in rest.cpu_ms.items()}
    print(f"At rest, after {SETTLE_S:.0f} s settling, over {rest.seconds:.0f} s:")
    for name, value in per_s.items():
        print(f"  {name:10} {value:6.2f} ms of CPU per s")
    print(f"  {'all':10} {sum(per_s.values()):6.2f} ms of CPU per s")
    commands_per_s = rest.ran.total() / rest.seconds
    print(f"Redis ran {commands_per_s:.1f} commands per s: {said(rest.ran, rest.seconds)}")
    report(
        *(Figure(f"idle CPU, {name}", value, "ms/s") for name, value in per_s.items()),
        Figure("idle CPU, all processes", sum(per_s.values()), "ms/s", TARGET_MS_PER_S),
        Figure("idle Redis commands", commands_per_s, "/s"),
    )


def print_turns(busy: Usage, rest: Usage) -> None:
    """Each process's CPU per turn, less what it would have used at rest meanwhile."""
    per_turn = {
        name: (ms - rest.cpu_ms[name] / rest.seconds * busy.seconds) / TURNS
        for name, ms in busy.cpu_ms.items()
    }
    print(f"{TURNS} short turns in {busy.seconds:.1f} s, CPU per turn, idle subtracted:")
    for name, value in per_turn.items():
        print(f"  {name:10} {value:6.2f} ms")
    print(f"  {'all':10} {sum(per_turn.values()):6.2f} ms")
    print(f"Redis ran {busy.ran.total() / TURNS:.1f} commands per turn: {said(busy.ran, TURNS)}")
    report(
        *(Figure(f"CPU per turn, {name}", value, "ms") for name, value in per_turn.items()),
        Figure("CPU per turn, all processes", sum(per_turn.values()), "ms", TURN_TARGET_MS),
        Figure("Redis commands per turn", busy.ran.total() / TURNS, ""),
    )


def said(ran: Counter[str], per: float) -> str:
    return ", ".join(f"{name} {count / per:.2f}" for name, count in ran.most_common() if count)


if __name__ == "__main__":
    asyncio.run(main())
