"""Soak: a day's traffic in minutes, then does anything grow or stay behind?

Real processes: redis-server, `parley web`, two `parley worker`s and `parley scheduler`, on
one SQLite file; the fake Anthropic API in this process. Clients of the HTTP API talk in many
sessions at once, each message's reply read as server-sent events: plain questions, questions
that make the model call the calculator, calls of a tool that waits for a person's approval
(the client presses approve and follows the resumed turn), and reminders a few seconds ahead
that the scheduler fires into their session. Every fifth turn is a Telegram chat's instead
(the fake Bot API in this process), its approval prompts pressed. Other clients open a
session's event stream and leave after a moment, again and again.

After a warm-up (a tenth of the turns) the resident memory of every process is read from
/proc, at each further tenth, and at the end: each must be within 10% of its size after
warm-up. A worker's own memory is what counts; the tool helpers it starts as calls overlap
(up to PARLEY_TOOL_PROCESSES, about 40 MiB each) are shown apart. Then every
Redis key is checked: it must expire, or belong to an owner that removes it (a session the
API still knows, the deployment's few shared keys); any other is printed by pattern.
`python -m tests.bench.soak [TURNS] [SESSIONS] [CLIENTS]` (20,000 turns over 2,000 sessions
by default, about 15 minutes on two busy cores); PARLEY_BENCH_QUICK=1 runs 40 over 10.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from redis.asyncio import Redis

from bot.redis import keys
from tests.bench.memory import MIB, rss, start_worker, stop
from tests.bench.processes import environment
from tests.bench.table import Figure, report
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec
from tests.fakes.llm.script import RecordedRequest
from tests.fakes.tg import TOKEN as TELEGRAM_TOKEN
from tests.fakes.tg import FakeTelegram, TgChat, TgUser
from tests.fakes.tg.model import BotMessage
from tests.support.redis_server import RedisServer, free_port
from tests.support.web_process import web_process

QUICK = os.environ.get("PARLEY_BENCH_QUICK") == "1"
TOKEN = "soak-api-token"
ENDINGS = ("in it.", "of it.")  # how the brain's answers end
KINDS = ("ask", "ask", "calc", "ask", "launch", "ask", "calc", "ask", "ask", "remind")
REMINDER = "Time to stretch, reminder"
DEADLINE_S = 300.0  # a loaded machine is slow, not broken
ROOT = Path(__file__).resolve().parents[2]


def brain(request: RecordedRequest) -> Reply:
    """Answers by the first word of the person's message; tool results are acknowledged."""
    if request.system_text().startswith("You condense"):
        return Reply(text="Notes on the conversation so far. " * 10)
    if request.tool_results():
        return Reply(text="Done, and here is what came of it. " * 3)
    words = request.last_user_text().split("]", 1)[-1].split()
    first, last = (words[0], words[-1]) if words else ("", "0")
    if first == "calc":
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": f"{last} * 7"})])
    if first == "launch":
        return Reply(tool_calls=[ToolCallSpec("launch", {"target": f"probe {last}"})])
    if first == "remind":
        when = {"prompt": f"{REMINDER} {last}", "when": "in 3 seconds"}
        return Reply(tool_calls=[ToolCallSpec("schedule_task", when)])
    return Reply(text="A plain answer with a few sentences in it. " * 6, chunk_size=24)


@dataclass
class Tally:
    turns: Counter[str] = field(default_factory=Counter)
    watchers: int = 0
    problems: Counter[str] = field(default_factory=Counter)
    done: int = 0  # messages sent and answered (or given up on)
    progress: asyncio.Event = field(default_factory=asyncio.Event)  # set at each of them


async def events(response: httpx.Response) -> AsyncIterator[tuple[str, dict[str, object]]]:
    """(event name, data) of a server-sent event stream."""
    name = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


async def follow(http: httpx.AsyncClient, url: str, body: dict[str, str]) -> str | None:
    """POST `body` and read the turn's events: the confirmation it waits for, or None."""
    headers = {"Accept": "text/event-stream"}
    async with http.stream("POST", url, json=body, headers=headers) as response:
        if response.status_code >= 400:
            raise RuntimeError(f"{url}: {response.status_code} {await response.aread()!r}")
        async for name, data in events(response):
            if name == "confirmation_required":
                return str(data["confirmation_id"])  # the client leaves; the turn waits
            if name == "completed":
                return None
    raise RuntimeError(f"{url}: the stream ended before the turn did")


async def converse(http: httpx.AsyncClient, session: str, n: int, tally: Tally) -> None:
    kind = KINDS[n % len(KINDS)]
    text = {"ask": "tell me about item", "calc": "calc", "launch": "launch", "remind": "remind"}
    waiting = await follow(http, f"/api/sessions/{session}/messages", {"text": f"{text[kind]} {n}"})
    tally.turns[kind] += 1
    if waiting is not None:
        await follow(http, f"/api/confirmations/{waiting}", {"decision": "approve"})
        tally.turns["approved"] += 1
    elif kind == "launch":
        tally.problems["launch without approval prompt"] += 1


def answers(telegram: FakeTelegram, chat: TgChat) -> int:
    """The chat's finished answers (a private chat's messages are posted whole)."""
    return sum(m.text.endswith(ENDINGS) for m in telegram.messages(chat))


def prompt_in(telegram: FakeTelegram, chat: TgChat) -> BotMessage | None:
    return next((m for m in telegram.messages(chat) if m.reply_markup), None)


async def chat_turn(telegram: FakeTelegram, person: TgUser, n: int, tally: Tally) -> None:
    """A Telegram message, its approval pressed if it asks for one, until its answer."""
    chat = telegram.private_chat(person)
    kind = ("ask", "calc", "launch")[n // 5 % 3]
    before = answers(telegram, chat)
    telegram.send(chat, person, f"{'tell me about item' if kind == 'ask' else kind} {n}")
    if kind == "launch":
        await telegram.wait_for(lambda: prompt_in(telegram, chat) is not None, DEADLINE_S)
        prompt = prompt_in(telegram, chat)
        assert prompt is not None and prompt.reply_markup is not None
        buttons = {
            b["text"]: b["callback_data"] for r in prompt.reply_markup["inline_keyboard"] for b in r
        }
        telegram.press(chat, person, prompt.message_id, buttons["✅ Approve"])
        await telegram.wait_for(lambda: prompt_in(telegram, chat) is None, DEADLINE_S)
        tally.turns["telegram approved"] += 1
    await telegram.wait_for(lambda: answers(telegram, chat) > before, DEADLINE_S)
    tally.turns[f"telegram {kind}"] += 1


@dataclass
class People:
    """Who the turns are for: API sessions, and Telegram's people in private chats."""

    http: httpx.AsyncClient
    sessions: list[str]
    telegram: FakeTelegram
    persons: list[TgUser]


async def client(people: People, plan: Iterator[int], tally: Tally) -> None:
    for n in plan:
        try:
            if n % 5 == 2:  # the API keeps its launches (4) and reminders (9)
                person = people.persons[n // 5 % len(people.persons)]
                await chat_turn(people.telegram, person, n, tally)
            else:
                await converse(people.http, people.sessions[n % len(people.sessions)], n, tally)
        except (httpx.HTTPError, RuntimeError, TimeoutError, AssertionError) as exc:
            tally.problems[type(exc).__name__] += 1
            print(f"  turn {n}: {exc!r}", file=sys.stderr)
        tally.done += 1
        tally.progress.set()


async def trajectory(procs: Processes, tally: Tally, start: int, end: int) -> None:
    """The processes' sizes at each tenth of the turns after warm-up: a plateau reached late
    and a steady climb look alike at the end, not on the way."""
    for tenth in range(1, 10):
        mark = start + (end - start) * tenth // 10
        while tally.done < mark:
            tally.progress.clear()
            await tally.progress.wait()
        print(f"  after {mark:6} turns: " + sizes_line(procs.sizes()), flush=True)


async def watcher(http: httpx.AsyncClient, sessions: list[str], tally: Tally) -> None:
    """Opens a session's event stream, stays a moment, leaves; again until cancelled."""
    chance = random.Random(7)
    while True:
        session = chance.choice(sessions)
        with contextlib.suppress(httpx.HTTPError, TimeoutError):
            async with asyncio.timeout(chance.uniform(0.2, 2.0)):
                async with http.stream("GET", f"/api/sessions/{session}/events") as response:
                    async for _ in response.aiter_lines():
                        pass
        tally.watchers += 1


@dataclass
class Processes:
    web: int
    workers: list[asyncio.subprocess.Process]
    scheduler: asyncio.subprocess.Process

    def sizes(self, *, tree: bool = False) -> dict[str, int]:
        """Each process's resident memory; with `tree`, its children's too (a worker's tool
        helpers, started as calls overlap, up to PARLEY_TOOL_PROCESSES: not growth)."""
        sizes = {"web": rss(self.web, tree=tree), "scheduler": rss(self.scheduler.pid, tree=tree)}
        sizes |= {f"worker {i + 1}": rss(w.pid, tree=tree) for i, w in enumerate(self.workers)}
        return sizes


async def traffic(
    people: People, turns: int, clients: int, procs: Processes
) -> tuple[dict[str, int], dict[str, int], Tally]:
    """All the turns, `clients` at a time; the processes' sizes after warm-up and at the end."""
    tally = Tally()
    warm = max(min(50, turns // 2), turns // 10)
    http, sessions = people.http, people.sessions
    watchers = [asyncio.create_task(watcher(http, sessions, tally)) for _ in range(4)]
    try:
        plan = iter(range(warm))
        await asyncio.gather(*(client(people, plan, tally) for _ in range(clients)))
        warmed, started = procs.sizes(), time.monotonic()
        print(f"warmed up after {warm} turns: " + sizes_line(warmed))
        plan = iter(range(warm, turns))
        watchers.append(asyncio.create_task(trajectory(procs, tally, warm, turns)))
        await asyncio.gather(*(client(people, plan, tally) for _ in range(clients)))
        rate = (turns - warm) / (time.monotonic() - started)
        print(f"{turns} turns in all, {rate:.1f} a second after warm-up")
        print("with their children:  " + sizes_line(procs.sizes(tree=True)))
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    return warmed, procs.sizes(), tally


def sizes_line(sizes: dict[str, int]) -> str:
    return ", ".join(f"{name} {size / MIB:.0f} MiB" for name, size in sizes.items())


async def quiet(redis: Redis, llm: FakeLLM, reminders: int) -> None:
    """Until the scheduler fired every reminder and no session has work or a lease."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        fired = {r.last_user_text() for r in llm.requests if REMINDER in r.last_user_text()}
        leases = [k async for k in redis.scan_iter(match=keys.session("*", "lease"))]
        if len(fired) >= reminders and not await redis.zcard(keys.ARMED_SET) and not leases:
            return
        await asyncio.sleep(0.5)
    print(f"  not quiet after {DEADLINE_S:.0f} s: {reminders - len(fired)} reminders unfired")


OWNED_SESSION = re.compile(r"^parley:\{http:([0-9a-f]+)\}:")
CHAT_SESSION = re.compile(r"^parley:\{(tg|slack):[^}]+\}:")
SHARED = {keys.ARMED_SET, keys.DEAD_LETTERS, keys.READY_STREAM, "arq:queue"}


def pattern(name: str) -> str:
    """The key's family: its session, ids and numbers as placeholders."""
    shape = re.sub(r"\{[^}]*\}", "{session}", name)
    shape = re.sub(r"(?<=:)(?=[\w-]*[\dA-Z_-])[\w-]{8,}(?=:|$)", "*", shape)
    return re.sub(r"[0-9a-f]{8,}|\d+", "*", shape)


async def ownerless(redis: Redis) -> tuple[Counter[str], Counter[str]]:
    """Every key by pattern and how it goes (`expires`, `owned`, `shared`); and the keys with
    neither an expiry nor an owner that removes them, by pattern."""
    names = [k.decode() async for k in redis.scan_iter(count=1000)]
    async with redis.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.ttl(name)
        ttls = await pipe.execute()
    known = {n.rsplit(":", 1)[1] for n in names if n.startswith(keys.http_session(""))}
    families: Counter[str] = Counter()
    orphans: Counter[str] = Counter()
    for name, ttl in zip(names, ttls, strict=True):
        owned = OWNED_SESSION.match(name)
        if ttl == -2:  # gone between the scan and the question
            continue
        if ttl >= 0:
            families[f"{pattern(name)} (expires)"] += 1
        elif name in SHARED:
            families[f"{name} (shared)"] += 1
        elif name.startswith(keys.http_session("")) or (owned and owned.group(1) in known):
            families[f"{pattern(name)} (owned by its API session)"] += 1
        elif CHAT_SESSION.match(name):
            families[f"{pattern(name)} (owned by its chat, until retention)"] += 1
        else:
            orphans[pattern(name)] += 1
    return families, orphans


@contextlib.asynccontextmanager
async def parley(
    tmp: str, redis_url: str, llm: FakeLLM, telegram: FakeTelegram
) -> AsyncIterator[tuple[str, Processes]]:
    """Web, two workers and the scheduler, each ready; stopped at the end."""
    extra = {
        "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
        "TELEGRAM_API_URL": telegram.base_url,
        "PARLEY_TOOL_MODULES": '["tests.support.tools"]',
        "PARLEY_USER_MESSAGES_PER_MINUTE": "1000000",
        "PARLEY_TASKS_PER_PERSON": "10000",
        "PARLEY_API_TOKEN": TOKEN,
        "PARLEY_HTTP_PORT": str(free_port()),
    }
    env = environment(redis_url, tmp, llm.anthropic_base_url, **extra)
    env = {k: v for k, v in env.items() if not k.startswith("PARLEY_BENCH")}
    command = [sys.executable, "-m", "worker", "web"]
    async with web_process(env, ROOT, Path(tmp) / "web.log", command=command) as base:
        web_pid = child_running(command)
        workers = [await start_worker(redis_url, tmp, llm.anthropic_base_url, **extra)]
        workers.append(await start_worker(redis_url, tmp, llm.anthropic_base_url, **extra))
        scheduler = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "worker", "scheduler", env=env
        )
        try:
            await leading(redis_url, scheduler)
            yield base, Processes(web_pid, workers, scheduler)
        finally:
            for proc in [*workers, scheduler]:
                await stop(proc)


def child_running(command: list[str]) -> int:
    """The pid of this process's child started with `command` (from /proc)."""
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
                if argv == command:
                    return int(pid)
    raise RuntimeError(f"no child runs {command}")


async def leading(redis_url: str, scheduler: asyncio.subprocess.Process) -> None:
    """Until the scheduler holds the leader lease."""
    redis = Redis.from_url(redis_url)
    deadline = time.monotonic() + DEADLINE_S
    try:
        while not await redis.exists(keys.SCHEDULER_LEADER):
            if scheduler.returncode is not None or time.monotonic() > deadline:
                raise RuntimeError("the scheduler never led")
            await asyncio.sleep(0.1)
    finally:
        await redis.aclose()


def arguments() -> tuple[int, int, int]:
    given = [int(a) for a in sys.argv[1:4]]
    default = [40, 10, 4] if QUICK else [20_000, 2_000, 16]
    turns, sessions, clients = given + default[len(given) :]
    return turns, sessions, clients


async def main() -> None:
    turns, count, clients = arguments()
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        redis = Redis.from_url(server.url)
        try:
            async with (
                FakeLLM() as llm,
                FakeTelegram() as telegram,
                parley(tmp, server.url, llm, telegram) as (base, procs),
            ):
                llm.responder = brain
                auth = {"Authorization": f"Bearer {TOKEN}"}
                limits = httpx.Limits(max_connections=clients + 8)
                async with httpx.AsyncClient(
                    base_url=base, headers=auth, timeout=DEADLINE_S, limits=limits
                ) as http:
                    sessions = [
                        (await http.post("/api/sessions")).json()["id"] for _ in range(count)
                    ]
                    persons = [TgUser(id=5000 + i, first_name=f"P{i}") for i in range(count // 5)]
                    people = People(http, sessions, telegram, persons or [TgUser(5000, "P")])
                    warmed, ended, tally = await traffic(people, turns, clients, procs)
                    await quiet(redis, llm, tally.turns["remind"])
                families, orphans = await ownerless(redis)
                memory = int((await redis.info("memory"))["used_memory"])
        finally:
            await redis.aclose()
            server.stop()
    summarise(warmed, ended, tally, families, orphans, memory)


def summarise(
    warmed: dict[str, int],
    ended: dict[str, int],
    tally: Tally,
    families: Counter[str],
    orphans: Counter[str],
    memory: int,
) -> None:
    print("at the end:           " + sizes_line(ended))
    growth = {name: (ended[name] - warmed[name]) / warmed[name] * 100 for name in warmed}
    print("growth after warm-up: " + ", ".join(f"{n} {g:+.1f}%" for n, g in growth.items()))
    print(f"turns: {dict(tally.turns)}; event streams opened and left: {tally.watchers}")
    print(f"problems: {dict(tally.problems) or 'none'}")
    total = sum(families.values()) + sum(orphans.values())
    print(f"Redis: {total} keys, {memory / MIB:.1f} MiB:")
    for shape, n in sorted(families.items()):
        print(f"  {n:6}  {shape}")
    print("without expiry or owner:")
    for shape, n in orphans.most_common():
        print(f"  {n:6}  {shape}")
    if not orphans:
        print("  none")
    report(
        Figure("soak: RSS growth after warm-up, largest", max(growth.values()), "%", 10.0),
        Figure("soak: Redis keys without expiry or owner", sum(orphans.values()), "keys", 1.0),
        Figure("soak: failed turns", sum(tally.problems.values()), "turns", 1.0),
    )


if __name__ == "__main__":
    asyncio.run(main())
