"""A deployment at rest: the CPU each of Parley's processes uses while nothing happens.

What an operator pays for a bot nobody is talking to: `parley web` (Telegram's long poll, the
web app), one `parley worker`, `parley scheduler` and redis-server, each a real process with
the default settings, Telegram and the fake model configured. After each says it is ready and
one reply went through (so what a first message starts, say a tool helper, is running as it
would be), the processes are left alone for `SETTLE_S` and then watched for `WINDOW_S`: the
CPU seconds each used in the window (its own, and its children's, live or reaped: a worker's
tool helpers, the web's spare file readers), per second of wall clock.

The fake Telegram and model run in this process, whose CPU is not counted; a long poll held
by the fake costs Parley nothing while it waits, as the real Bot API's does. Run with
`make bench` or `python -m tests.bench.idle`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from redis.asyncio import Redis

from tests.bench.processes import environment, serving, start_workers, stop
from tests.bench.table import Figure, quick, report
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.tg import TOKEN, FakeTelegram, TgUser
from tests.support.redis_server import RedisServer, free_port

SETTLE_S = 10.0 if quick() else 75.0  # past the web's spare readers' 60 s
WINDOW_S = 5.0 if quick() else 60.0
TARGET_MS_PER_S = 5.0  # the whole deployment
DEADLINE_S = 60.0
ANN = TgUser(id=1001, first_name="Ann")
ANSWER = "Hello, Ann."
NAMES = ("web", "worker", "scheduler", "redis")
FIGURES = [f"idle CPU, {name}" for name in NAMES] + [
    "idle CPU, all processes",
    "idle Redis commands",
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


async def first_reply(telegram: FakeTelegram) -> None:
    """One message in and its answer out, so the processes are as a used deployment's are."""
    chat = telegram.private_chat(ANN)
    telegram.send(chat, ANN, "hello")
    deadline = time.monotonic() + DEADLINE_S
    while not any(c.params.get("text") == ANSWER for c in telegram.calls):
        if time.monotonic() > deadline:
            raise RuntimeError("no reply within the deadline")
        await asyncio.sleep(0.05)


async def commands(redis: Redis) -> Counter[str]:
    """How many times Redis ran each command so far (INFO commandstats)."""
    stats = await redis.info("commandstats")
    return Counter({name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()})


async def measure(pids: dict[str, int], redis: Redis) -> tuple[dict[str, float], Counter[str]]:
    """ms of CPU per second of each of `pids`, and the commands Redis ran, over WINDOW_S."""
    before, ran = {name: tree_cpu(pid) for name, pid in pids.items()}, await commands(redis)
    start = time.monotonic()
    await asyncio.sleep(WINDOW_S)
    elapsed = time.monotonic() - start
    ran = await commands(redis) - ran
    ran["info"] -= 1  # the second INFO above is this benchmark's
    used = {name: (tree_cpu(pid) - before[name]) * 1000 / elapsed for name, pid in pids.items()}
    return used, ran


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
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
                web = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "worker", "web", env=env,
                    stdout=asyncio.subprocess.DEVNULL,
                )  # fmt: skip
                processes.append(web)
                await serving(f"http://127.0.0.1:{port}", web)
                workers, _ = await start_workers(1, env, redis.url)
                processes.extend(workers)
                scheduler = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "worker", "scheduler", env=env
                )
                processes.append(scheduler)
                await first_reply(telegram)
                await asyncio.sleep(SETTLE_S)
                pids = {
                    "web": web.pid, "worker": workers[0].pid,
                    "scheduler": scheduler.pid, "redis": redis_pid(redis),
                }  # fmt: skip
                async with Redis.from_url(redis.url) as client:
                    used, ran = await measure(pids, client)
        finally:
            await stop(processes)
            redis.stop()
    print(f"At rest, after {SETTLE_S:.0f} s settling, over {WINDOW_S:.0f} s:")
    for name, value in used.items():
        print(f"  {name:10} {value:6.2f} ms of CPU per s")
    print(f"  {'all':10} {sum(used.values()):6.2f} ms of CPU per s")
    per_s = sum(ran.values()) / WINDOW_S
    print(f"Redis ran {per_s:.1f} commands per s: " + ", ".join(
        f"{name} {count / WINDOW_S:.2f}" for name, count in ran.most_common() if count > 0
    ))  # fmt: skip
    report(
        *(Figure(f"idle CPU, {name}", value, "ms/s") for name, value in used.items()),
        Figure("idle CPU, all processes", sum(used.values()), "ms/s", TARGET_MS_PER_S),
        Figure("idle Redis commands", per_s, "/s"),
    )


if __name__ == "__main__":
    asyncio.run(main())
