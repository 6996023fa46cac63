"""Start-up: from exec of `parley worker` to the moment it takes work.

A worker's start-up is also the recovery time whenever one is replaced (a deploy, a crash,
a scale-out), so it is measured as an operator sees it: a message for a Telegram chat is
queued before the worker exists, then `python -m worker worker` is started as a real process
with one provider (Anthropic) and one platform (Telegram) configured, against the fakes.

Three moments are timed from the exec:
- "live": the worker's liveness key appears in Redis. It is written at start-up, before arq
  polls, so it says the process is up, not that it can answer;
- "takes work": the queued message's first model request reaches the fake model API. This is
  the truer figure: by then the worker has connected, checked the schema, picked the job,
  taken the session's lease and built the request. The target (under 1.5 s) is about it;
- "reply shown": the first call that shows text in the chat (a draft or a message). The
  worker takes work while the platform's SDK still loads (see `adapters.platforms.loading`), so this
  one also includes aiogram's import, overlapped with the turn.
These machines are shared, so wall-clock figures swing with the load; the CPU seconds the
worker had used when it took work (from /proc) are printed beside them as the steadier figure.

`parley up` (what `make run` runs) is timed from its exec to the first reply shown, with the
message waiting at the fake Bot API: its web, worker and scheduler all start at once on the
two cores, so this is the cold start of a whole deployment on one machine. The CPU seconds
its processes had used by then (itself and all it started, Redis aside, from /proc) are
printed beside it.

`parley web` is timed the same way, with Telegram configured and a person's message already
waiting at the fake Bot API: from the exec to its first `getUpdates` (answered at once, with
the message), and to the message taken (its session armed in Redis, ready for a worker).

Each run starts on the same database file, as a replacement worker would; one uncounted
warm-up run first migrates it and leaves the bytecode of every module compiled, as on a
machine that ran Parley before. Run with `make bench`, or `python -m tests.bench.startup [N]`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arq.connections import ArqRedis, RedisSettings, create_pool

from bot.mailbox.inbox import Mailbox
from bot.redis.keys import ARMED_SET, WORKER_PREFIX
from bot.vocabulary.envelope import Envelope, Sender
from tests.bench.table import Figure, report, samples
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply
from tests.fakes.tg import TOKEN, FakeTelegram, TgUser
from tests.support.redis_server import RedisServer, free_port

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else samples(5, 1)
SHOWING = ("sendMessage", "sendMessageDraft")
ANSWER = "Hello, Ann: the worker is up."  # the fake model's answer to every request
DEADLINE_S = 120.0  # generous: a loaded machine is slow, not broken
ANN = TgUser(id=1001, first_name="Ann")
# The targets: a worker answers a second after it is started (its reply shown; the platform's
# SDK loads meanwhile, see `adapters.platforms.loading`), and so takes work sooner still;
# `parley web` polls Telegram within 2.5 s, where bots on python-telegram-bot take 2.0-2.4 s
# on these machines; `parley up` starts three processes on two cores: its reply within 1.5 s.
TAKES_WORK_S, SHOWN_S, POLLS_S, UP_SHOWN_S = 1.0, 1.0, 2.5, 1.5


@dataclass(frozen=True)
class Start:
    live: float
    takes_work: float
    shown: float
    cpu: float  # CPU seconds the worker had used when it took work


def cpu_seconds(pid: int) -> float:
    """User + system time of a running process, from /proc (0 where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_env(
    redis_url: str, database_url: str, llm: FakeLLM, telegram: FakeTelegram
) -> dict[str, str]:
    """Anthropic and Telegram only; nothing inherited that could change how Python starts."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": llm.anthropic_base_url,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": telegram.base_url,
        "PARLEY_LOG_LEVEL": "WARNING",
    }


async def queue_message(mailbox: Mailbox, chat_id: int, run: int) -> None:
    await mailbox.submit(
        Envelope(
            id=f"startup-{run}",
            session=f"tg:{chat_id}",
            text=f"hello {run}",
            sender=Sender(id=f"tg:{ANN.id}", name=ANN.first_name),
            platform="telegram",
            reply_to={"chat_id": chat_id, "chat_type": "private"},
        )
    )


async def one_start(
    pool: ArqRedis, llm: FakeLLM, telegram: FakeTelegram, env: dict[str, str], run: int
) -> Start:
    await pool.flushall()
    chat = telegram.private_chat(ANN)
    await queue_message(Mailbox(pool, pool), chat.id, run)
    requests, calls = len(llm.requests), len(telegram.calls)
    live = takes_work = shown = cpu = 0.0
    start = time.monotonic()
    worker = await asyncio.create_subprocess_exec(sys.executable, "-m", "worker", "worker", env=env)
    try:
        while not (live and takes_work and shown):
            now = time.monotonic() - start
            if now > DEADLINE_S or worker.returncode is not None:
                raise RuntimeError(f"run {run}: the worker did not answer within {now:.0f} s")
            if not live and [k async for k in pool.scan_iter(f"{WORKER_PREFIX}*")]:
                live = now
            if not takes_work and len(llm.requests) > requests:
                takes_work, cpu = now, cpu_seconds(worker.pid)
            if not shown and answer_shown(telegram, calls):
                shown = now
            await asyncio.sleep(0.005)
    finally:
        worker.terminate()
        await worker.wait()
    return Start(live, takes_work, shown, cpu)


@dataclass(frozen=True)
class WebStart:
    polls: float  # the first getUpdates, answered at once with the waiting message
    takes: float  # the message submitted: its session armed in Redis
    cpu: float  # CPU seconds the process had used when it polled


async def one_web_start(
    pool: ArqRedis, telegram: FakeTelegram, env: dict[str, str], run: int
) -> WebStart:
    await pool.flushall()
    telegram.send(telegram.private_chat(ANN), ANN, f"hello {run}")
    calls = len(telegram.calls)
    polls = takes = cpu = 0.0
    start = time.monotonic()
    web = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "worker", "web", env=env, stdout=asyncio.subprocess.DEVNULL
    )
    try:
        while not (polls and takes):
            now = time.monotonic() - start
            if now > DEADLINE_S or web.returncode is not None:
                raise RuntimeError(f"run {run}: parley web did not poll within {now:.0f} s")
            if not polls and any(
                # a process's first poll has no offset; an earlier one's last may end late
                c.method == "getUpdates" and not c.params.get("offset")
                for c in telegram.calls[calls:]
            ):
                polls, cpu = now, cpu_seconds(web.pid)
            if not takes and await pool.exists(ARMED_SET):
                takes = now
            await asyncio.sleep(0.005)
    finally:
        web.terminate()
        await web.wait()
    return WebStart(polls, takes, cpu)


@dataclass(frozen=True)
class UpStart:
    shown: float  # seconds from the exec to the first reply shown
    cpu: float  # CPU seconds `parley up` and the processes it started had used by then


def tree_cpu(root: int) -> float:
    """CPU seconds of `root` and its descendants but redis-server (0 where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        if "(redis-server)" not in stat:
            children.setdefault(int(stat.rpartition(")")[2].split()[1]), []).append(int(entry.name))
    total, waiting = 0.0, [root]
    while waiting:
        pid = waiting.pop()
        total += cpu_seconds(pid)
        waiting.extend(children.get(pid, []))
    return total


async def one_up(pool: ArqRedis, telegram: FakeTelegram, env: dict[str, str], run: int) -> UpStart:
    """From the exec of `parley up` to its first reply shown."""
    await pool.flushall()
    telegram.send(telegram.private_chat(ANN), ANN, f"hello {run}")
    calls = len(telegram.calls)
    start = time.monotonic()
    up = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "worker", "up", env=env, stdout=asyncio.subprocess.DEVNULL
    )
    try:
        while not answer_shown(telegram, calls):
            now = time.monotonic() - start
            if now > DEADLINE_S or up.returncode is not None:
                raise RuntimeError(f"run {run}: parley up did not reply within {now:.0f} s")
            await asyncio.sleep(0.005)
        return UpStart(time.monotonic() - start, tree_cpu(up.pid))
    finally:
        up.terminate()  # it stops its processes, and waits for them
        await up.wait()


def answer_shown(telegram: FakeTelegram, since: int) -> bool:
    """Whether the model's answer, or its first words, showed in the chat after call `since`.

    Only the answer counts: an error notice (say, after the model's retries ran out) would
    time the SDK's back-off instead of the start-up.
    """
    return any(
        c.method in SHOWING and c.params.get("text") and ANSWER.startswith(c.params["text"])
        for c in telegram.calls[since:]
    )


def summary(label: str, values: list[float]) -> str:
    return (
        f"{label:12} min {min(values):5.2f} s   median {statistics.median(values):5.2f} s   "
        f"max {max(values):5.2f} s"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        pool = await create_pool(RedisSettings.from_dsn(server.url))
        try:
            async with FakeLLM() as llm, FakeTelegram() as telegram:
                llm.responder = lambda _request: Reply(text=ANSWER)
                env = worker_env(server.url, f"sqlite+aiosqlite:///{tmp}/parley.db", llm, telegram)
                first = await one_start(pool, llm, telegram, env, 0)
                print(f"warm-up (migrates, compiles): takes work after {first.takes_work:.2f} s")
                starts = [await one_start(pool, llm, telegram, env, n) for n in range(1, RUNS + 1)]
                web_env = env | {"PARLEY_HTTP_PORT": str(free_port())}
                webs = [await one_web_start(pool, telegram, web_env, n) for n in range(RUNS + 1)]
                ups = [await one_up(pool, telegram, web_env, n) for n in range(RUNS)]
        finally:
            await pool.aclose()
            server.stop()
    print_worker(starts)
    print_web(webs[1:])  # the first compiled what only the web process imports
    print(f"`parley up` with Anthropic + Telegram, {RUNS} starts, from exec:")
    print(summary("reply shown", [u.shown for u in ups]))
    print(summary("CPU used", [u.cpu for u in ups]) + "   (all its processes, at the reply)")
    report(
        Figure("parley up: first reply shown, median", median(u.shown for u in ups), "s",
               UP_SHOWN_S),
        Figure("parley up: CPU of its processes at the reply, median",
               median(u.cpu for u in ups), "s"),
    )  # fmt: skip


def print_worker(starts: list[Start]) -> None:
    print(f"`parley worker` with Anthropic + Telegram, {len(starts)} starts, from exec:")
    print(summary("live", [s.live for s in starts]))
    print(summary("takes work", [s.takes_work for s in starts]))
    print(summary("reply shown", [s.shown for s in starts]))
    print(summary("CPU used", [s.cpu for s in starts]) + "   (when it took work)")
    report(
        Figure("worker start: takes work, median", median(s.takes_work for s in starts), "s",
               TAKES_WORK_S),
        Figure("worker start: reply shown, median", median(s.shown for s in starts), "s",
               SHOWN_S),
        Figure("worker start: CPU when it took work, median", median(s.cpu for s in starts),
               "s"),
    )  # fmt: skip


def print_web(webs: list[WebStart]) -> None:
    print(f"`parley web` with Telegram, {len(webs)} starts, from exec:")
    print(summary("getUpdates", [w.polls for w in webs]))
    print(summary("takes message", [w.takes for w in webs]))
    print(summary("CPU used", [w.cpu for w in webs]) + "   (when it polled)")
    report(
        Figure("web start: first getUpdates, median", median(w.polls for w in webs), "s",
               POLLS_S),
        Figure("web start: CPU when it polled, median", median(w.cpu for w in webs), "s"),
    )  # fmt: skip


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


if __name__ == "__main__":
    asyncio.run(main())
