"""Web API calls and timings of streamed replies in Slack: one 500-word reply in a thread and
in a DM, then twenty replies at once in one workspace.

The model streams about 3,900 characters at roughly 60 tokens a second; the fake Slack counts
every call Parley makes and enforces the rate tiers. Real redis-server, the web app and two
worker processes, the real slack-bolt app and slack_sdk client. Nothing is sent before the
workers announced they are ready (`worker.ready`).

The first visible text, with the model answering at once: from the event posted to the app
to the fake Slack's own timestamp of the call that first shows the reply's words, in a new
DM with a person of its own, for a short reply and a streamed 300-word one, with one worker
and then two, after one reply of each kind has warmed the worker up. Targets: median under
20 ms, p99 under 60 ms.

Those samples arrive the way first messages do: apart. Slack limits chat.postMessage per
workspace (and Parley's budget keeps to a share of that: one every 250 ms steady, after a
burst), and one bot token is one workspace, so a sample starts no sooner than one steady
interval of that budget after the one before (`SPACING`): each first post finds its token
and the figure is Parley's latency, never a wait for the budget. What people arriving
faster than that budget cost is a figure of its own, not hidden: the same short replies sent
back to back in the one workspace, each as soon as the one before has shown its final text
(`back to back`), where once the budget's burst is spent every first post waits for its
token. Run with `make bench`, or `python -m tests.bench.slack`.
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

from adapters.slack.client import POST_PER_WORKSPACE
from adapters.slack.service import EVENTS_PATH
from bot.config.settings import Settings
from tests.bench.processes import settle_collector, start_workers, stop
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
    "slack first visible, short, back to back in one workspace: median",
    "slack first visible, short, back to back in one workspace: p99",
)
# One steady interval of the workspace's chat.postMessage budget at the default share.
SPACING = 60 / (POST_PER_WORKSPACE * Settings.model_fields["slack_rate_share"].default)
SHOWING = ("chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream")


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
    """Milliseconds from the event posted to the fake's own timestamp of the first call that
    shows the reply's words, in `user`'s new DM; returned once the final text is there, so
    the next sample starts on an idle worker."""
    where = slack.dm(user)
    before = len(slack.calls)
    start = time.monotonic()
    await slack.say(user, where, "short" if short else "streamed")
    last = "tomorrow." if short else f"word{STREAMED_WORDS - 1}"
    await slack.wait_for(_shows(slack, where.id, None, last), within=120)
    begins = "Sure" if short else "Here"
    shown = [
        call.at
        for call in slack.calls[before:]
        if call.status == 200
        and call.method in SHOWING
        and call.params.get("channel") == where.id
        and str(call.params.get("markdown_text", "")).startswith(begins)
    ]
    return (min(shown) - start) * 1000


async def first_visibles(slack: FakeSlack, llm: FakeLLM, workers: int) -> None:
    """Each case's samples, each started at least `SPACING` after the one before."""
    llm.responder = instant
    for kind in KINDS:
        warm = slack.user(f"U0W{workers}{kind[:2].upper()}", f"w{workers}{kind}")
        await first_visible(slack, warm, kind == "short")  # first uses are not a sample
        took = []
        for n in range(SAMPLES):
            user = slack.user(f"U0F{workers}{kind[:2].upper()}{n:03}", f"f{workers}{kind}{n}")
            started = time.monotonic()
            took.append(await first_visible(slack, user, kind == "short"))
            await asyncio.sleep(started + SPACING - time.monotonic())
        name = f"slack first visible, {kind}, {workers} worker{'s' * (workers > 1)}"
        summarise(name, took, 20, 60, f"one at least every {SPACING * 1000:.0f} ms")
    llm.responder = None


async def back_to_back(slack: FakeSlack, llm: FakeLLM) -> None:
    """Short replies in new DMs of the one workspace, each sent as soon as the one before
    shows its final text: faster than the workspace's chat.postMessage budget, whose burst
    the first ones spend and whose steady rate the others then wait for."""
    llm.responder = instant
    took = []
    for n in range(SAMPLES):
        user = slack.user(f"U0K{n:03}", f"k{n}")
        took.append(await first_visible(slack, user, short=True))
    llm.responder = None
    summarise("slack first visible, short, back to back in one workspace", took, None, None, "")


def summarise(
    name: str, took: list[float], median_limit: float | None, p99_limit: float | None, how: str
) -> None:
    """Print a case's figures with how its samples were sent, and report them (with their
    targets, or none for a figure shown only so it is not hidden)."""
    p99 = percentile(took, 0.99)
    median = statistics.median(took)
    print(
        f"{name}: median {median:5.1f} ms, p99 {p99:5.1f} ms, max {max(took):5.1f} ms "
        f"({len(took)} samples{', ' + how if how else ''})"
    )
    report(
        Figure(f"{name}: median", median, "ms", median_limit),
        Figure(f"{name}: p99", p99, "ms", p99_limit),
    )


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
                settle_collector()
                await first_visibles(slack, llm, 1)
                workers += (await start_workers(1, env, server.url))[0]
                await first_visibles(slack, llm, 2)
                await back_to_back(slack, llm)
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
