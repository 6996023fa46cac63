"""Bot API calls and timings of replies, in a private chat and in a group.

A short reply (one line, streamed in a few deltas) should cost exactly one call that shows
text; a streamed 500-word reply (about 3,000 characters at roughly 60 tokens a second)
one per pace of the chat, drafts evenly spaced from the first. The fake Telegram counts and
times every call Parley makes. Real redis-server, the web app and a worker process, the real
aiogram Bot. Nothing is sent before the worker announced it is ready (`worker.ready`).

The first visible text, with the model answering at once: from the update being available to
the bot (queued at the fake Telegram, which hands it to the bot's long poll) to the call that
first shows the reply's text (the fake's own timestamp of it), for a short reply and a
streamed 300-word one, each in a new private chat, with one worker and then two. Targets:
median under 20 ms, p99 under 60 ms. Then the same short reply to a photo (2000×1500 px,
captioned, timed from the update queued, once the fake made Telegram's sizes of it): what the
photo adds is the download of its 1280 px size from the fake Bot API, checking and storing
it, and the image in the model request; target: its median under 100 ms above the text's.
Run with `make bench`, or `python -m tests.bench.telegram`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from aiohttp import web

from bot.config.settings import Settings
from tests.bench.processes import settle_collector, start_workers, stop
from tests.bench.table import Figure, percentile, quick, report, samples
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, RecordedRequest, Reply
from tests.fakes.tg import TOKEN, FakeTelegram, TgChat, TgUser
from tests.support.images import image_bytes
from tests.support.redis_server import RedisServer, free_port
from worker.web import make_app

WORDS = 60 if quick() else 500
STREAMED_WORDS = 300
SAMPLES = samples(100, 4)
ANN = TgUser(id=1001, first_name="Ann")
KINDS = ("short", "streamed")
FIGURES = (
    "telegram first visible, short, 1 worker: median",
    "telegram first visible, short, 1 worker: p99",
    "telegram first visible, streamed, 1 worker: median",
    "telegram first visible, streamed, 1 worker: p99",
    "telegram first visible, short, 2 workers: median",
    "telegram first visible, short, 2 workers: p99",
    "telegram first visible, streamed, 2 workers: median",
    "telegram first visible, streamed, 2 workers: p99",
    "telegram first visible, photo, 1 worker: median",
    "telegram first visible, photo over text, 1 worker: median",
)
PHOTO = image_bytes((2000, 1500), "JPEG")


def reply_text(words: int = WORDS) -> str:
    body = [f"word{i}" for i in range(words)]
    paragraphs = [" ".join(body[i : i + 60]) for i in range(0, words, 60)]
    return "Here is **a long answer**.\n\n" + "\n\n".join(paragraphs)


SHORT = "Sure, **done**: the meeting is at 10:00 tomorrow."
SHOWING = ("sendMessage", "sendMessageDraft", "editMessageText")


async def measure(
    telegram: FakeTelegram, llm: FakeLLM, chat: TgChat, label: str, *, short: bool = False
) -> None:
    text = SHORT if short else reply_text()
    llm.enqueue(
        Reply(text=text, chunk_size=12, delay=0.01)
        if short
        else Reply(text=text, chunk_size=20, delay=0.08)
    )
    before = len(telegram.calls)
    start = time.monotonic()
    if chat.type == "private":
        telegram.send(chat, ANN, "write me 500 words")
    else:
        telegram.send(chat, ANN, "@parley_test_bot write me 500 words")

    def visible() -> bool:
        made = telegram.calls[before:]
        return any(c.ok and c.method in ("sendMessage", "sendMessageDraft") for c in made)

    await telegram.wait_for(visible, within=300)  # the warm-up waits for the worker to start
    first = time.monotonic() - start
    last = "tomorrow." if short else f"word{WORDS - 1}"
    await telegram.wait_for(
        lambda: bool(telegram.messages(chat)) and telegram.messages(chat)[-1].text.endswith(last),
        within=120,
    )
    total = time.monotonic() - start
    await asyncio.sleep(1)  # after the final text: calls that still follow it are counted
    made = telegram.calls[before:]
    calls = Counter(c.method for c in made)
    shown = ", ".join(f"{method} {n}" for method, n in sorted(calls.items()))
    showing = sum(n for method, n in calls.items() if method in SHOWING)
    drafts = [c.at for c in made if c.method == "sendMessageDraft"]
    gaps = [b - a for a, b in itertools.pairwise(drafts)]
    spacing = f"; drafts {min(gaps):.2f}-{max(gaps):.2f} s apart" if gaps else ""
    print(
        f"{label:14} {len(text):4} chars: first visible {first * 1000:5.0f} ms, final at "
        f"{total:4.1f} s; {showing} calls showing text, {sum(calls.values())} in all ({shown})"
        f"{spacing}; 429s: {telegram.floods}"
    )


def instant(request: RecordedRequest) -> Reply:
    """The model answering at once: the short reply to "short", else the streamed one; a
    request the benchmark did not script (a title, a summary) is answered too."""
    if request.last_user_text().endswith("short"):
        return Reply(text=SHORT, chunk_size=12)
    return Reply(text=reply_text(STREAMED_WORDS), chunk_size=20)


async def first_visible(
    telegram: FakeTelegram, person: TgUser, short: bool, photo: bool = False
) -> float:
    """Milliseconds from the update queued to the first call showing the reply's text, in
    `person`'s private chat (a person of their own each: one person's messages are rate
    limited); once the final text is there, so the next sample starts on an idle worker.
    With `photo`, the message is a photo captioned as the text would be."""
    chat = telegram.private_chat(person)
    before = len(telegram.calls)
    said = "short" if short else "streamed"
    if photo:  # the fake makes Telegram's sizes of it first: not the bot's time
        telegram.send_photo(chat, person, PHOTO, caption=said)
        start = time.time()
    else:
        start = time.time()
        telegram.send(chat, person, said)
    begins = "Sure" if short else "Here"
    last = "tomorrow." if short else f"word{STREAMED_WORDS - 1}"
    try:
        await telegram.wait_for(
            lambda: (
                bool(telegram.messages(chat)) and telegram.messages(chat)[-1].text.endswith(last)
            ),
            within=120,
        )
    except AssertionError:
        made = [
            (c.method, c.ok, str(c.params.get("text", ""))[-40:]) for c in telegram.calls[before:]
        ]
        shown_now = [m.text[-40:] for m in telegram.messages(chat)]
        raise RuntimeError(
            f"no final reply in chat {chat.id}: shows {shown_now}; calls {made}"
        ) from None
    shown = [
        c.at
        for c in telegram.calls[before:]
        if c.ok and c.method in SHOWING and str(c.params.get("text", "")).startswith(begins)
    ]
    return (min(shown) - start) * 1000


async def first_visibles(
    telegram: FakeTelegram, llm: FakeLLM, workers: int, users: int, kinds: tuple[str, ...] = KINDS
) -> dict[str, float]:
    """The median of each of `kinds` ("short", "streamed", "photo": a short reply to one)."""
    llm.responder = instant
    medians = {}
    for kind in kinds:
        took = []
        for n in range(SAMPLES):
            person = TgUser(id=users + n, first_name=f"P{n}")
            short = kind != "streamed"
            took.append(await first_visible(telegram, person, short, photo=kind == "photo"))
        name = f"telegram first visible, {kind}, {workers} worker{'s' * (workers > 1)}"
        p99 = percentile(took, 0.99)
        median = statistics.median(took)
        print(f"{name}: median {median:5.1f} ms, p99 {p99:5.1f} ms ({SAMPLES} samples)")
        if kind == "photo":
            report(Figure(f"{name}: median", median, "ms"))
        else:
            report(
                Figure(f"{name}: median", median, "ms", 20), Figure(f"{name}: p99", p99, "ms", 60)
            )
        medians[kind] = median
        users += SAMPLES
    return medians


async def calls_of_replies(telegram: FakeTelegram, llm: FakeLLM) -> None:
    await measure(telegram, llm, telegram.group("Warm-up"), "warm-up")
    await measure(telegram, llm, telegram.private_chat(ANN), "private")
    await measure(telegram, llm, telegram.group("Bench"), "group")
    short_chat = telegram.private_chat(TgUser(id=1002, first_name="Bo"))
    await measure(telegram, llm, short_chat, "private short", short=True)
    await measure(telegram, llm, telegram.group("Short"), "group short", short=True)


def worker_env(redis_url: str, folder: str, llm: FakeLLM, telegram: FakeTelegram) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder}/parley.db",
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": llm.anthropic_base_url,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": telegram.base_url,
        "PARLEY_LOG_LEVEL": "WARNING",
        "PARLEY_FILES_DIR": f"{folder}/files",
    }


def web_settings(env: dict[str, str], folder: str, telegram: FakeTelegram) -> Settings:
    """`parley web`'s settings beside workers started with `env`, on the fake Bot API."""
    return Settings(
        _env_file=None,
        redis_url=env["REDIS_URL"],
        database_url=env["DATABASE_URL"],
        telegram_bot_token=TOKEN,
        telegram_api_url=telegram.base_url,
        files_dir=Path(folder) / "files",
    )


async def serve(settings: Settings) -> web.AppRunner:
    """`parley web` in this process, on a free port."""
    runner = web.AppRunner(await make_app(settings))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", free_port()).start()
    return runner


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm, FakeTelegram() as telegram:
            env = worker_env(server.url, tmp, llm, telegram)
            runner = await serve(web_settings(env, tmp, telegram))
            workers: list[asyncio.subprocess.Process] = []
            try:
                workers, _ = await start_workers(1, env, server.url)
                settle_collector()
                await calls_of_replies(telegram, llm)
                text = await first_visibles(telegram, llm, 1, 10_000)
                photo = await first_visibles(telegram, llm, 1, 30_000, ("photo",))
                over = photo["photo"] - text["short"]
                print(f"a photo's first visible text is {over:.1f} ms later than a text's")
                name = "telegram first visible, photo over text, 1 worker: median"
                report(Figure(name, over, "ms", 100))
                workers += (await start_workers(1, env, server.url))[0]
                await first_visibles(telegram, llm, 2, 20_000)
            finally:
                await stop(workers)
                await runner.cleanup()
                server.stop()


if __name__ == "__main__":
    asyncio.run(main())
