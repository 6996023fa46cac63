"""Quiet check-ins: what one with nothing to say costs, and that it posts nothing.

A real redis-server, `parley web` (in this process) with the fake Bot API, a `parley worker`
process with the default settings, the fake model in this process. A check-in
(`/checkin every 2h …`, a quiet task) is made in a private Telegram chat; its runs are submitted
to the mailbox as the scheduler submits them, one after another, and the model answers each
that there is nothing to report. Per run: the model calls it made (target: one), the Bot API
calls it made in the chat (target: none, not even "typing"), its tokens (all the prompt's,
cached or not, as the task's daily cap counts them), and the time from its submission to its
run in the record. Then one run with news, which posts it.

Run with `make bench`, or `python -m tests.bench.checkin`.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import zoneinfo
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arq import create_pool
from arq.connections import RedisSettings
from sqlalchemy import text

from adapters.platforms.targets import target_of
from bot.mailbox.inbox import Mailbox
from bot.store.database import Database, open_database
from bot.tasks.book import NewTask, TaskBook
from bot.tasks.model import NOTHING_TO_REPORT, Task
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import parse_when
from tests.bench.processes import settle_collector, start_workers, stop
from tests.bench.table import Figure, report, samples
from tests.bench.telegram import serve, web_settings, worker_env
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.tg import FakeTelegram, TgUser
from tests.support.redis_server import RedisServer

# Within the default daily cap (PARLEY_TASK_TOKENS_PER_DAY): each run reads the whole prompt.
RUNS = samples(10, 3)
ANN = TgUser(id=1001, first_name="Ann")
NEWS = "The build failed at step 3."
FIGURES = (
    "quiet check-in, nothing to say: model calls each",
    "quiet check-in, nothing to say: Bot API calls each",
    "quiet check-in, nothing to say: tokens each",
    "quiet check-in, nothing to say: submitted → recorded, median",
)


async def recorded(database: Database, session: str, count: int) -> None:
    """Until the record holds `count` runs of `session`."""
    query = text("SELECT count(*) FROM runs WHERE session_key = :session")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        async with database.engine.connect() as connection:
            if (await connection.execute(query, {"session": session})).scalar_one() >= count:
                return
        await asyncio.sleep(0.005)
    raise RuntimeError(f"{count} runs of {session} were not recorded within 60 s")


async def tokens_of(database: Database, session: str) -> list[int]:
    query = text(
        "SELECT input_tokens + output_tokens + cache_read_tokens + cache_write_tokens FROM runs "
        "WHERE session_key = :session "
        "ORDER BY started_at"
    )
    async with database.engine.connect() as connection:
        return [int(n) for n in (await connection.execute(query, {"session": session})).scalars()]


async def check_in(book: TaskBook, session: str) -> Task:
    now = datetime.now(UTC)
    when = "every 2h"
    new = NewTask(
        target=target_of(session), creator=Sender(id=f"tg:{ANN.id}", name="Ann"),
        prompt="look at the build and tell me only if it failed", when=when,
        schedule=parse_when(when, zoneinfo.ZoneInfo("UTC"), now), quiet=True,
    )  # fmt: skip
    return await book.add(new, max_active=20, now=now)


async def measure(
    mailbox: Mailbox, database: Database, telegram: FakeTelegram, llm: FakeLLM, task: Task
) -> None:
    session, chat_id = task.target.session, str(ANN.id)
    took: list[float] = []
    asked, before = len(llm.requests), len(telegram.calls)
    start = datetime.now(UTC)
    for n in range(RUNS):
        submitted = time.perf_counter()
        await mailbox.submit(task.envelope(start + timedelta(hours=2 * n)))
        await recorded(database, session, n + 1)
        took.append((time.perf_counter() - submitted) * 1000)
    calls = (len(llm.requests) - asked) / RUNS
    posted = sum(1 for c in telegram.calls[before:] if str(c.params.get("chat_id")) == chat_id)
    tokens = statistics.median(await tokens_of(database, session))
    median = statistics.median(took)
    print(
        f"{RUNS} quiet check-ins with nothing to say: {calls:g} model call each, {posted} Bot "
        f"API calls in the chat, {tokens:g} tokens each, {median:.0f} ms submitted → recorded"
    )
    llm.responder = lambda _: Reply(text=NEWS)
    await mailbox.submit(task.envelope(start + timedelta(hours=2 * RUNS)))
    chat = telegram.private_chat(ANN)
    try:
        await telegram.wait_for(lambda: any(NEWS in m.text for m in telegram.messages(chat)), 10)
    except AssertionError:
        shown = [str(c.params.get("text", ""))[:80] for c in telegram.calls[before:]]
        raise RuntimeError(f"the check-in's news was not posted; the chat shows {shown}") from None
    news = [c.method for c in telegram.calls[before:] if str(c.params.get("chat_id")) == chat_id]
    print(f"one with news: {', '.join(news)}")
    report(
        Figure(FIGURES[0], calls, "calls", 2),
        Figure(FIGURES[1], posted / RUNS, "calls", 1),
        Figure(FIGURES[2], tokens, "tokens"),
        Figure(FIGURES[3], median, "ms"),
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm, FakeTelegram() as telegram:
            llm.responder = lambda _: Reply(text=NOTHING_TO_REPORT)
            env = worker_env(server.url, tmp, llm, telegram)
            settings = web_settings(env, tmp, telegram)
            runner = await serve(settings)
            pool = await create_pool(RedisSettings.from_dsn(server.url))
            database = await open_database(settings)
            workers, _ = await start_workers(1, env, server.url)
            try:
                settle_collector()
                task = await check_in(TaskBook(database.engine, pool), f"tg:{ANN.id}")
                await measure(Mailbox(pool, pool), database, telegram, llm, task)
            finally:
                await stop(workers)
                await database.aclose()
                await pool.aclose()
                await runner.cleanup()
                server.stop()


if __name__ == "__main__":
    asyncio.run(main())
