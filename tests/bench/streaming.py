"""What streaming a reply to Telegram costs in Bot API calls, how often Telegram refuses one
(429), and whether every reply finally shows exactly what the model wrote.

Messages arrive as they do in production: the fake Telegram (in this process, with Telegram's
flood limits: a bucket per chat, per group, per bot and for drafts, and a penalty after a 429
during which every call is refused again) serves them to a `parley web` process that long-polls
`getUpdates`; two `parley worker` processes run the turns and stream the replies back through
the real aiogram Bot. The model is the fake model in a process of its own, streaming
`tests.fakes.llm.words` replies at a realistic pace (80 tokens a second, four tokens a delta).

Two parts:
- one reply each of 50, 500 and 5,000 words, in private chats (drafts, then the message) and
  in groups (a message edited in place), all at once: the Bot API calls each cost, by method;
- 200 private chats asking for 500 words at the same moment: the share of calls answered 429.

A reply is over when its turn ended (the session's state saved, its inbox empty and its lease
released, which happens only after the reply's last update landed). Its final visible text is then
compared with the model's: the chat's messages must be exactly `render()` of the model's
markdown (Parley's own cut into messages), and, checked without Parley's code, their words
must be the model's words without the bold marks, in order, none lost or repeated.
Run with `make bench`, or `python -m tests.bench.streaming`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from redis.asyncio import Redis

from adapters.telegram.render import render
from bot.redis import keys
from tests.bench.processes import environment, fake_model, serving
from tests.bench.table import Figure, quick, report, samples
from tests.fakes.llm.words import reply_text, visible_text
from tests.fakes.tg import TOKEN, Call, FakeTelegram, TgChat, TgUser
from tests.support.redis_server import RedisServer, free_port
from tests.support.workers import Announcements

SIZES = (50, 500, 5000)
RATE = 2000 if quick() else 80  # tokens a second: the smoke run only checks that it works
CHATS = samples(200, 20)  # private chats streaming at once
CROWD_WORDS = 500
WORKERS = 2
DEADLINE_S = 900.0  # 200 replies paced through one bot's budget on a busy machine
FIGURES = (
    *(f"streaming: Bot API calls per {n}-word reply, private" for n in SIZES),
    *(f"streaming: Bot API calls per {n}-word reply, group" for n in SIZES),
    "streaming: 429 answers, every chat at once",
    "streaming: replies whose final text differs from the model's",
)


@dataclass(frozen=True)
class Asked:
    chat: TgChat
    user: TgUser
    words: int


def differs(telegram: FakeTelegram, asked: Asked) -> str | None:
    """How the chat's final messages differ from the model's reply (a kind, then the
    chat's), or None if they do not."""
    shown = [m.text for m in telegram.messages(asked.chat)]
    expected = [chunk.text for chunk in render(reply_text(asked.words))]
    if shown != expected:
        kind = "more messages" if len(shown) > len(expected) else "fewer messages"
        if len(shown) == len(expected):
            kind = "other text"
        deleted = sum(m.deleted for m in telegram.sent.get(asked.chat.id, []))
        return (
            f"{kind}: chat {asked.chat.id}, {len(shown)} messages ({deleted} more deleted), "
            f"{len(expected)} expected; the last shown {shown[-1:]!r:.120}"
        )
    if " ".join(shown).split() != visible_text(asked.words).split():
        return "other words: the words shown are not the model's words"
    return None


async def ended(redis: Redis, asked: Asked) -> bool:
    """The chat's turn is over: its state was saved, its inbox is empty and its lease free.
    Whether it showed anything is for `differs` to say: a reply never shown differs too."""
    session = f"tg:{asked.chat.id}"
    state, inbox, lease = (keys.session(session, name) for name in ("state", "inbox", "lease"))
    return await redis.exists(state) == 1 and not await redis.exists(inbox, lease)


async def all_ended(redis: Redis, asked: list[Asked]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    waiting = list(asked)
    while waiting:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(waiting)} replies still going after {DEADLINE_S:.0f} s")
        waiting = [a for a in waiting if not await ended(redis, a)]
        await asyncio.sleep(0.1)


def ask(telegram: FakeTelegram, asked: Asked) -> None:
    text = f"{asked.words} words at {RATE} tokens/s"
    if asked.chat.type != "private":
        text = f"@parley_test_bot {text}"
    telegram.send(asked.chat, asked.user, text)


def calls_in(calls: list[Call], chat: TgChat) -> list[Call]:
    return [c for c in calls if str(c.params.get("chat_id")) == str(chat.id)]


async def per_reply(redis: Redis, telegram: FakeTelegram) -> tuple[list[Figure], int]:
    """One reply of each size in a private chat and in a group, all at once."""
    asked = []
    for n, words in enumerate(SIZES):
        user = TgUser(id=5000 + n, first_name=f"Reader{n}")
        asked.append(Asked(telegram.private_chat(user), user, words))
        asked.append(Asked(telegram.group(f"Readers {words}"), user, words))
    start = len(telegram.calls)
    for one in asked:
        ask(telegram, one)
    await all_ended(redis, asked)
    made = telegram.calls[start:]
    figures, wrong = [], 0
    for one in asked:
        calls = calls_in(made, one.chat)
        methods = Counter(c.method for c in calls)
        shown = ", ".join(f"{method} {n}" for method, n in sorted(methods.items()))
        refused = [f"{c.method}: {c.error}" for c in calls if not c.ok]
        problem = differs(telegram, one)
        wrong += problem is not None
        print(
            f"{one.words:5} words, {one.chat.type:7}: {len(calls):3} calls ({shown}), "
            f"{len(telegram.messages(one.chat))} messages shown"
            f"{'; refused: ' + '; '.join(refused) if refused else ''}"
            f"{'; DIFFERS: ' + problem if problem else ''}"
        )
        name = f"streaming: Bot API calls per {one.words}-word reply, {one.chat.type}"
        figures.append(Figure(name, len(calls), "calls"))
    return figures, wrong


async def crowd(redis: Redis, telegram: FakeTelegram) -> tuple[Figure, int]:
    """`CHATS` private chats asking at the same moment: the share of calls refused 429."""
    asked = [Asked(telegram.private_chat(u), u, CROWD_WORDS) for u in people(CHATS)]
    start, floods, violations = len(telegram.calls), telegram.floods, telegram.flood_violations
    began = time.monotonic()
    for one in asked:
        ask(telegram, one)
    await all_ended(redis, asked)
    made = telegram.calls[start:]
    refused = telegram.floods - floods
    share = refused / len(made) * 100
    wrong = [p for a in asked if (p := differs(telegram, a)) is not None]
    kinds = ", ".join(f"{n} {kind}" for kind, n in Counter(p.split(":")[0] for p in wrong).items())
    methods = ", ".join(f"{m} {n}" for m, n in sorted(Counter(c.method for c in made).items()))
    flooded = Counter(c.method for c in made if c.error and c.error.startswith("Too Many"))
    by_method = ", ".join(f"{m} {n}" for m, n in sorted(flooded.items()))
    print(
        f"{CHATS} chats x {CROWD_WORDS} words: all ended after {time.monotonic() - began:.1f} s; "
        f"{len(made)} calls ({methods}); {refused} answered 429 ({share:.2f}%"
        f"{'; ' + by_method if by_method else ''}), "
        f"{telegram.flood_violations - violations} made during a penalty; "
        f"{len(wrong)} replies differ{f' ({kinds}), as ' + wrong[0] if wrong else ''}"
    )
    return Figure(FIGURES[-2], share, "%", 1), len(wrong)


def people(count: int) -> list[TgUser]:
    return [TgUser(id=10_000 + n, first_name=f"P{n}") for n in range(count)]


async def start_workers(
    env: dict[str, str], url: str, started: list[asyncio.subprocess.Process]
) -> None:
    """`WORKERS` worker processes, added to `started` at once (to be stopped whatever
    happens), each ready once it announced itself."""
    announcements = Announcements(url)
    after = await announcements.last()
    workers = [
        await asyncio.create_subprocess_exec(sys.executable, "-m", "worker", "worker", env=env)
        for _ in range(WORKERS)
    ]
    started += workers
    for proc in workers:
        await announcements.wait(after, proc.pid, partial(exited, proc))


def exited(proc: asyncio.subprocess.Process) -> str | None:
    return None if proc.returncode is None else f"it exited with {proc.returncode}"


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp), "--appendfsync", "everysec")
        server.start()
        fake, model_url = await fake_model()
        redis = Redis.from_url(server.url)
        try:
            async with FakeTelegram() as telegram:
                more = {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_URL": telegram.base_url}
                env = environment(server.url, tmp, model_url, **more)
                env = {k: v for k, v in env.items() if not k.startswith("PARLEY_BENCH_")}
                figures = await measure(env, redis, telegram)
        finally:
            fake.terminate()
            await fake.wait()
            await redis.aclose()
            server.stop()
    report(*sorted(figures, key=lambda f: FIGURES.index(f.name)))


async def measure(env: dict[str, str], redis: Redis, telegram: FakeTelegram) -> list[Figure]:
    """Both parts, with the web process and the workers stopped before the fake Telegram."""
    processes: list[asyncio.subprocess.Process] = []
    try:
        port = free_port()
        web = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "worker", "web", env={**env, "PARLEY_HTTP_PORT": str(port)}
        )
        processes.append(web)
        await serving(f"http://127.0.0.1:{port}", web)
        await start_workers(env, env["REDIS_URL"], processes)
        print(f"{WORKERS} workers; the model streams at {RATE} tokens/s")
        figures, wrong = await per_reply(redis, telegram)
        flooded, crowd_wrong = await crowd(redis, telegram)
    finally:
        for proc in processes:
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
    return [*figures, flooded, Figure(FIGURES[-1], wrong + crowd_wrong, "replies", 1)]


if __name__ == "__main__":
    asyncio.run(main())
