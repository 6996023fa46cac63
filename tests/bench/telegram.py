"""Bot API calls and timings of replies, in a private chat and in a group.

A short reply (one line, streamed in a few deltas) should cost exactly one call that shows
text; a streamed 500-word reply (about 3,000 characters at roughly 60 tokens a second)
one per pace of the chat, drafts evenly spaced from the first. The fake Telegram counts and
times every call Parley makes. Real redis-server, the web app and a worker process, the real
aiogram Bot. Run with `make bench`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from aiohttp import web

from bot.config import Settings
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply
from tests.fakes.tg import TOKEN, FakeTelegram, TgChat, TgUser
from tests.support.redis_server import RedisServer, free_port
from worker.web import make_app

WORDS = 500
ANN = TgUser(id=1001, first_name="Ann")


def reply_text() -> str:
    words = [f"word{i}" for i in range(WORDS)]
    paragraphs = [" ".join(words[i : i + 60]) for i in range(0, WORDS, 60)]
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
    await asyncio.sleep(1)
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


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm, FakeTelegram() as telegram:
            env = {
                **os.environ,
                "REDIS_URL": server.url,
                "DATABASE_URL": f"sqlite+aiosqlite:///{tmp}/parley.db",
                "PARLEY_MODEL": "claude-bench",
                "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
                "ANTHROPIC_BASE_URL": llm.anthropic_base_url,
                "TELEGRAM_BOT_TOKEN": TOKEN,
                "TELEGRAM_API_URL": telegram.base_url,
                "PARLEY_LOG_LEVEL": "WARNING",
            }
            worker = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "worker", "worker", env=env
            )
            settings = Settings(
                _env_file=None,
                redis_url=server.url,
                database_url=env["DATABASE_URL"],
                telegram_bot_token=TOKEN,
                telegram_api_url=telegram.base_url,
            )
            runner = web.AppRunner(await make_app(settings))
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", free_port()).start()
            try:
                await asyncio.sleep(3)
                await measure(telegram, llm, telegram.group("Warm-up"), "warm-up")
                await measure(telegram, llm, telegram.private_chat(ANN), "private")
                await measure(telegram, llm, telegram.group("Bench"), "group")
                short_chat = telegram.private_chat(TgUser(id=1002, first_name="Bo"))
                await measure(telegram, llm, short_chat, "private short", short=True)
                await measure(telegram, llm, telegram.group("Short"), "group short", short=True)
            finally:
                worker.terminate()
                await worker.wait()
                await runner.cleanup()
                server.stop()


if __name__ == "__main__":
    asyncio.run(main())
