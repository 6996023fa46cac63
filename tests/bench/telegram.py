"""Bot API calls and timings of one streamed 500-word reply, in a private chat and in a group.

The model streams about 3,000 characters at roughly 60 tokens a second; the fake Telegram
counts every call Parley makes. Real redis-server, the web app and a worker process, the
real aiogram Bot. Run with `make bench`.
"""

from __future__ import annotations

import asyncio
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


async def measure(telegram: FakeTelegram, llm: FakeLLM, chat: TgChat, label: str) -> None:
    text = reply_text()
    llm.enqueue(Reply(text=text, chunk_size=20, delay=0.08))
    before = len(telegram.calls)
    start = time.monotonic()
    if chat.type == "private":
        telegram.send(chat, ANN, "write me 500 words")
    else:
        telegram.send(chat, ANN, "@parley_test_bot write me 500 words")

    def visible() -> bool:
        made = telegram.calls[before:]
        return any(c.ok and c.method in ("sendMessage", "sendMessageDraft") for c in made)

    await telegram.wait_for(visible, within=30)
    first = time.monotonic() - start
    await telegram.wait_for(
        lambda: (
            bool(telegram.messages(chat))
            and telegram.messages(chat)[-1].text.endswith(f"word{WORDS - 1}")
        ),
        within=120,
    )
    total = time.monotonic() - start
    await asyncio.sleep(1)
    calls = Counter(c.method for c in telegram.calls[before:])
    shown = ", ".join(f"{method} {n}" for method, n in sorted(calls.items()))
    print(
        f"{label:8} {len(text)} chars: first visible {first * 1000:5.0f} ms, final at "
        f"{total:4.1f} s; {sum(calls.values())} calls ({shown}); 429s: {telegram.floods}"
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
            finally:
                worker.terminate()
                await worker.wait()
                await runner.cleanup()
                server.stop()


if __name__ == "__main__":
    asyncio.run(main())
