"""Web API calls and timings of streamed replies in Slack: one 500-word reply in a thread and
in a DM, then twenty replies at once in one workspace.

The model streams about 3,900 characters at roughly 60 tokens a second; the fake Slack counts
every call Parley makes and enforces the rate tiers. Real redis-server, the web app and two
worker processes, the real slack-bolt app and slack_sdk client. Nothing is sent before the
workers announced they are ready (`worker.ready`).

The first visible text, with the model answering at once: from the event posted to the app
to the moment the fake shows the reply's first words in a new DM (watched every millisecond),
for a short reply and a streamed 300-word one, with one worker and then two. Targets: median
under 25 ms, p99 under 100 ms. Run with `make bench`, or `python -m tests.bench.slack`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from adapters.slack.service import EVENTS_PATH
from tests.bench.processes import start_workers, stop
from tests.bench.table import Figure, percentile, quick, report, samples
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, RecordedRequest, Reply
from tests.fakes.slack import BOT_TOKEN, BOT_USER_ID, SIGNING_SECRET, FakeSlack, SlackChannel
from tests.fakes.slack import SlackUser as User
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import web_settings
from worker.web import make_app

WORDS = 60 if quick() else 500
STREAMED_WORDS = 300
SAMPLES = samples(100, 4)
SHORT = "Sure, done: the meeting is at 10:00 tomorrow."
KINDS = ("short", "streamed")
FIGURES = (
    "slack first visible, short, 1 worker: median",
    "slack first visible, short, 1 worker: p99",
    "slack first visible, streamed, 1 worker: median",
    "slack first visible, streamed, 1 worker: p99",
    "slack first visible, short, 2 workers: median",
    "slack first visible, short, 2 workers: p99",
    "slack first visible, streamed, 2 workers: median",
    "slack first visible, streamed, 2 workers: p99",
)


def reply_text(words: int = WORDS) -> str:
    body = [f"word{i}" for i in range(words)]
    paragraphs = [" ".join(body[i : i + 60]) for i in range(0, words, 60)]
    return "Here is **a long answer**.\n\n" + "\n\n".join(paragraphs)


async def one(slack: FakeSlack, llm: FakeLLM, user: User, where: SlackChannel, label: str) -> None:
    text = reply_text()
    llm.enqueue(Reply(text=text, chunk_size=20, delay=0.08))
    before = len(slack.calls)
    start = time.monotonic()
    mention = "" if where.is_im else f"<@{BOT_USER_ID}> "
    asked = await slack.say(user, where, f"{mention}write me 500 words")
    thread = None if where.is_im else asked.ts

    await slack.wait_for(_shows(slack, where.id, thread, ""), within=30)
    first = time.monotonic() - start
    await slack.wait_for(_shows(slack, where.id, thread, f"word{WORDS - 1}"), within=120)
    total = time.monotonic() - start
    await asyncio.sleep(1)  # after the final text: calls that still follow it are counted
    calls = Counter(c.method for c in slack.calls[before:])
    shown = ", ".join(f"{method} {n}" for method, n in sorted(calls.items()))
    print(
        f"{label:8} {len(text)} chars: first visible {first * 1000:5.0f} ms, final at "
        f"{total:4.1f} s; {sum(calls.values())} calls ({shown}); 429s: {slack.rate_limited}"
    )


def _shows(slack: FakeSlack, channel: str, thread: str | None, end: str) -> Callable[[], bool]:
    """Whether a bot message in the thread shows text ending with `end` ("": any text)."""
    return lambda: any(
        m.shown and m.shown.endswith(end) for m in slack.bot_messages(channel, thread)
    )


def instant(request: RecordedRequest) -> Reply:
    """The model answering at once: the short reply to "short", else the streamed one."""
    if request.last_user_text().endswith("short"):
        return Reply(text=SHORT, chunk_size=12)
    return Reply(text=reply_text(STREAMED_WORDS), chunk_size=20)


async def first_visible(slack: FakeSlack, user: User, short: bool) -> float:
    """Milliseconds from the event posted to the reply's first words shown in a new DM;
    once the final text is there, so the next sample starts on an idle worker."""
    where = slack.dm(user)
    start = time.monotonic()
    await slack.say(user, where, "short" if short else "streamed")
    shows = _shows_start(slack, where.id, "Sure" if short else "Here")
    while not shows():
        if time.monotonic() - start > 120:
            raise RuntimeError("the reply never showed")
        await asyncio.sleep(0.001)
    took = (time.monotonic() - start) * 1000
    last = "tomorrow." if short else f"word{STREAMED_WORDS - 1}"
    await slack.wait_for(_shows(slack, where.id, None, last), within=120)
    return took


def _shows_start(slack: FakeSlack, channel: str, begins: str) -> Callable[[], bool]:
    return lambda: any(m.shown.startswith(begins) for m in slack.bot_messages(channel, None))


async def first_visibles(slack: FakeSlack, llm: FakeLLM, workers: int) -> None:
    llm.responder = instant
    for kind in KINDS:
        took = []
        for n in range(SAMPLES):
            user = slack.user(f"U0F{workers}{kind[:2].upper()}{n:03}", f"f{workers}{kind}{n}")
            took.append(await first_visible(slack, user, kind == "short"))
        name = f"slack first visible, {kind}, {workers} worker{'s' * (workers > 1)}"
        p99 = percentile(took, 0.99)
        median = statistics.median(took)
        print(f"{name}: median {median:5.1f} ms, p99 {p99:5.1f} ms ({SAMPLES} samples)")
        report(Figure(f"{name}: median", median, "ms", 25), Figure(f"{name}: p99", p99, "ms", 100))
    llm.responder = None


async def many(slack: FakeSlack, llm: FakeLLM, count: int = 20) -> None:
    text = reply_text(120)
    general = slack.channel("C0BENCH", "bench")
    people = [slack.user(f"U0B{i:02}", f"b{i}") for i in range(count)]
    for _ in people:
        llm.enqueue(Reply(text=text, chunk_size=20, delay=0.03))
    before = len(slack.calls)
    start = time.monotonic()
    asked = await asyncio.gather(*(slack.say(p, general, f"<@{BOT_USER_ID}> go") for p in people))
    seen: dict[str, float] = {}
    done: dict[str, float] = {}
    while len(done) < count and time.monotonic() - start < 300:
        for message in asked:
            if message.ts not in seen and _shows(slack, general.id, message.ts, "")():
                seen[message.ts] = time.monotonic() - start
            if message.ts not in done and _shows(slack, general.id, message.ts, text)():
                done[message.ts] = time.monotonic() - start
        await asyncio.sleep(0.02)
    firsts, finals = sorted(seen.values()), sorted(done.values())
    total = finals[-1]
    calls = Counter(c.method for c in slack.calls[before:])
    shown = ", ".join(f"{method} {n}" for method, n in sorted(calls.items()))
    print(
        f"{count} at once: first visible median {firsts[len(firsts) // 2]:4.1f} s, last "
        f"{firsts[-1]:4.1f} s; final median {finals[len(finals) // 2]:4.1f} s, last "
        f"{total:4.1f} s; {sum(calls.values())} calls "
        f"({shown}); 429s: {slack.rate_limited}, calls during a Retry-After: {slack.violations}"
    )


def worker_env(redis_url: str, folder: str, llm: FakeLLM, slack: FakeSlack) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder}/parley.db",
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": llm.anthropic_base_url,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack.base_url,
        "PARLEY_LOG_LEVEL": "WARNING",
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm, FakeSlack() as slack:
            port = free_port()
            slack.events_url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
            env = worker_env(server.url, tmp, llm, slack)
            runner = web.AppRunner(await make_app(web_settings(env)))
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            workers: list[asyncio.subprocess.Process] = []
            try:
                workers, _ = await start_workers(1, env, server.url)
                await first_visibles(slack, llm, 1)
                workers += (await start_workers(1, env, server.url))[0]
                await first_visibles(slack, llm, 2)
                ann = slack.user("U0ANN", "ann")
                await one(slack, llm, ann, slack.channel("C0WARM", "warm"), "warm-up")
                await one(slack, llm, ann, slack.channel("C0GENERAL", "general"), "thread")
                await one(slack, llm, ann, slack.dm(ann), "dm")
                await many(slack, llm, samples(20, 4))
            finally:
                await stop(workers)
                await runner.cleanup()
                server.stop()


if __name__ == "__main__":
    asyncio.run(main())
