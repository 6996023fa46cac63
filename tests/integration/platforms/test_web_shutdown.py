"""`parley web` stopped with SIGTERM in the middle of a burst, then started again: every Telegram
update and Slack event is answered once, in order per chat (long polling, Socket Mode), webhook
requests in flight (Telegram's webhook, Slack's HTTP events) are answered (200) and queued
before the process ends, and what could not be queued within the grace comes again. Real
processes (`parley web`, `parley worker`), a real Redis, the fake Telegram, Slack and model
APIs; the shutdown's settings are the defaults but in the test of a grace that runs out.

The model echoes the numbered messages it was given since its last answer, so the replies of a
chat, read in order, list each message once if and only if each was answered once, in order
(messages that waited together are one turn and one reply)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.service import EVENTS_PATH
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.llm.script import RecordedRequest
from tests.fakes.slack import FakeSlack, SlackChannel, SlackUser
from tests.fakes.tg import FakeTelegram, TgChat, TgUser
from tests.support.images import image_bytes
from tests.support.redis_server import free_port
from tests.support.slack import slack_env
from tests.support.stack import Stack, idle, stack_env
from tests.support.telegram import WEBHOOK_PATH, WEBHOOK_SECRET, telegram_env
from tests.support.waiting import until
from tests.support.web_process import WebProcess

CHATS = 3
EACH = 8
SAID = re.compile(r"\bm(\d+)-(\d+)\b")
GRACE = 8.0  # PARLEY_SHUTDOWN_GRACE's default
EXIT_WITHIN = GRACE + 7  # and the interpreter's own exit on a busy machine
ANSWERED_WITHIN = 180.0
STEPS = ("stopped listening", "answering the requests in flight", "INFO worker.web: stopped")


def fresh_text(request: RecordedRequest) -> str:
    """The text of the user messages after the model's last answer: what this turn adds."""
    messages = request.body.get("messages", [])
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    parts: list[str] = []
    for message in messages[last + 1 :]:
        content = message.get("content")
        if message.get("role") != "user":
            continue
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [str(part.get("text", "")) for part in content or [] if isinstance(part, dict)]
    return "\n".join(parts)


def echo(request: RecordedRequest) -> Reply:
    heard = " ".join(f"m{chat}-{n}" for chat, n in SAID.findall(fresh_text(request)))
    return Reply(text=f"heard {heard}")


def numbers(texts: list[str], chat: int) -> list[int]:
    """The numbers of chat `chat`'s messages that `texts` (its replies, in order) echo."""
    return [int(n) for text in texts for c, n in SAID.findall(text) if int(c) == chat]


@pytest.fixture
async def scene(
    redis_url: str, fake_llm: FakeLLM, database_url: str, tmp_path: Path
) -> AsyncIterator[Scene]:
    fake_llm.responder = echo
    built = Scene(redis_url, fake_llm, database_url, tmp_path)
    try:
        yield built
    finally:
        for web in built.webs:
            await web.kill()
        await built.stack.stop()


class Scene:
    """A worker process, and the `parley web` processes a test starts one after another."""

    def __init__(self, redis_url: str, fake: FakeLLM, database_url: str, tmp: Path) -> None:
        self.redis_url, self.database_url, self.tmp = redis_url, database_url, tmp
        self.port = free_port()
        self.fake = fake
        self.stack = Stack(redis_url, fake, tmp)
        self.webs: list[WebProcess] = []

    def configure(self, **platform: str) -> dict[str, str]:
        env = stack_env(
            self.redis_url, self.fake, self.database_url,
            PARLEY_HTTP_PORT=str(self.port),
            PARLEY_FILES_DIR=str(self.tmp / "files"),
            PARLEY_WORKSPACE_DIR=str(self.tmp / "workspaces"),
            **platform,
        )  # fmt: skip
        assert not [name for name in env if "SHUTDOWN" in name or "MERGE" in name]
        self.stack.env = env
        return env

    async def web(self) -> WebProcess:
        log = self.tmp / f"web-{len(self.webs)}.log"
        self.webs.append(started := await WebProcess.start(self.stack.env, self.tmp, log))
        return started

    async def stopped(self, web: WebProcess, *steps: str, within: float = EXIT_WITHIN) -> None:
        """SIGTERM `web` (unless the test did): it exits 0 in time (`within` s of the signal),
        having logged each step of its shutdown."""
        if not web.asked:
            web.sigterm()
        code, took = await web.exited()
        said = web.said()
        print(f"\n`parley web` exited {code} {took:.1f} s after SIGTERM")
        assert code == 0, said
        assert took < within, said
        assert "Traceback" not in said, said
        for step in (*STEPS, *steps):
            assert step in said, f"no {step!r} in its log:\n{said}"


async def answered(replies: Callable[[int], list[str]], what: str) -> None:
    """Until every chat's replies echo all its messages, and no turn runs any more."""

    def complete() -> bool:
        return all(len(numbers(replies(chat), chat)) >= EACH for chat in range(CHATS))

    await until(complete, lambda: f"{what}: {[replies(c) for c in range(CHATS)]}", ANSWERED_WITHIN)


def assert_each_once_in_order(replies: Callable[[int], list[str]]) -> None:
    for chat in range(CHATS):
        assert numbers(replies(chat), chat) == list(range(EACH)), replies(chat)


# --- Telegram, long polling --------------------------------------------------------------------


def confirmed_past(tg: FakeTelegram) -> int:
    """The highest offset the bot's getUpdates calls have confirmed updates below."""
    offsets = [int(c.params.get("offset") or 0) for c in tg.calls if c.method == "getUpdates"]
    return max(offsets, default=0)


async def test_telegram_long_polling_stopped_mid_burst_answers_each_update_once(
    scene: Scene, fake_telegram: FakeTelegram
) -> None:
    tg = fake_telegram
    scene.configure(**telegram_env(tg))
    await scene.stack.start_worker_process()
    first = await scene.web()
    people = [TgUser(id=2001 + n, first_name=f"P{n}") for n in range(CHATS)]
    chats: list[TgChat] = [tg.private_chat(person) for person in people]
    sent: list[dict[str, Any]] = []

    async def burst() -> None:
        for n in range(EACH):
            for chat, person in enumerate(people):
                sent.append(tg.send(chats[chat], person, f"m{chat}-{n}"))
            await asyncio.sleep(0.15)  # the burst's pace: updates keep coming during the stop

    pushing = asyncio.create_task(burst())
    await until(lambda: len(sent) > 3, "the burst begun")
    start = sent[0]["update_id"]
    await tg.wait_for(lambda: confirmed_past(tg) > start + 3, what="a few updates taken")
    await scene.stopped(
        first,
        "Telegram: long polling stopped",
        "Telegram: every update taken is queued",
        "Telegram: updates before",
    )
    await pushing
    assert len(sent) == CHATS * EACH
    queued_by_first = [u for u in sent if u["update_id"] < confirmed_past(tg)]
    assert queued_by_first, "the first process took none of the burst"
    # Telegram hands an update over again when it did not get the confirmation: the new
    # process must recognise it by its update_id
    tg.pending.insert(0, queued_by_first[-1])
    await scene.web()

    def replies(chat: int) -> list[str]:
        return [m.text for m in tg.messages(chats[chat])]

    await answered(replies, "every update answered after the restart")
    await idle(scene.redis_url)
    assert_each_once_in_order(replies)


async def test_an_update_not_queued_within_the_grace_comes_again_after_the_restart(
    scene: Scene, fake_telegram: FakeTelegram
) -> None:
    """A photo whose download hangs: the process still exits in time (PARLEY_SHUTDOWN_GRACE,
    2 s here), without confirming the update, and the next process is handed it again."""
    tg = fake_telegram
    env = scene.configure(**telegram_env(tg))
    env["PARLEY_SHUTDOWN_GRACE"] = "2"
    await scene.stack.start_worker_process()
    first = await scene.web()
    person = TgUser(id=4001, first_name="Slow")
    chat = tg.private_chat(person)
    slow = tg.hold("getFile")
    update = tg.send_photo(chat, person, image_bytes((64, 48), "JPEG"), caption="m0-0")
    await tg.wait_for(lambda: tg.waiting == ["getFile"], what="the photo's download asked")
    first.sigterm()
    code, took = await first.exited()
    said = first.said()
    assert code == 0 and took < 2 + 7, said
    assert "Telegram: not queued in time, so handed over again: 1 updates" in said, said
    assert confirmed_past(tg) <= update["update_id"]  # not confirmed: Telegram keeps it
    slow.set()
    await scene.web()
    await tg.wait_for(lambda: bool(tg.messages(chat)), within=ANSWERED_WITHIN)
    await idle(scene.redis_url)
    assert [numbers([m.text for m in tg.messages(chat)], 0)] == [[0]]


# --- Telegram, webhook ---------------------------------------------------------------------------


async def test_telegram_webhook_request_in_flight_on_sigterm_is_answered_and_queued(
    scene: Scene, fake_telegram: FakeTelegram
) -> None:
    """The first update is being handled (its photo downloading) when SIGTERM arrives: it
    gets its 200 once it is queued, before the process exits. Telegram delivers the others
    one after another, trying again each one that fails while no process listens; each is
    answered once, in order."""
    tg = fake_telegram
    url = f"http://127.0.0.1:{scene.port}{WEBHOOK_PATH}"
    scene.configure(
        **telegram_env(tg, TELEGRAM_WEBHOOK_URL=url, TELEGRAM_WEBHOOK_SECRET=WEBHOOK_SECRET)
    )
    await scene.stack.start_worker_process()
    first = await scene.web()
    assert tg.webhook["url"] == url
    people = [TgUser(id=3001 + n, first_name=f"W{n}") for n in range(CHATS)]
    chats: list[TgChat] = [tg.private_chat(person) for person in people]
    slow = tg.hold("getFile")
    photo = image_bytes((64, 48), "JPEG")
    held = tg.send_photo(chats[0], people[0], photo, caption="m0-0")
    for n in range(EACH):
        for chat, person in enumerate(people):
            if (chat, n) != (0, 0):
                tg.send(chats[chat], person, f"m{chat}-{n}")
    await tg.wait_for(lambda: tg.waiting == ["getFile"], what="the photo's download asked")
    first.sigterm()
    await until(lambda: "stopped listening" in first.said(), "the stop begun")
    slow.set()
    await scene.stopped(first, "Telegram: every update taken is queued")
    assert tg.deliveries[0] == (held["update_id"], 200)
    await scene.web()

    def replies(chat: int) -> list[str]:
        return [m.text for m in tg.messages(chats[chat])]

    await answered(replies, "every update answered after the restart")
    await idle(scene.redis_url)
    refused = sum(1 for _, status in tg.deliveries if status != 200)
    print(f"{refused} deliveries failed while no process listened")
    assert_each_once_in_order(replies)


# --- Slack, Socket Mode ------------------------------------------------------------------------


@pytest.mark.slow(30)  # Slack's redelivery waits out its acknowledgement's timeout and more
async def test_slack_socket_mode_stopped_mid_burst_answers_each_event_once(scene: Scene) -> None:
    """Each person's third message is being handled (its file downloading) when SIGTERM
    arrives: it is queued and acknowledged before the socket closes. Their fourth, sent
    during the stop, is left unacknowledged, and Slack delivers it again to the new process;
    the rest follow. An acknowledged event Slack delivers again is not answered again."""
    # Slack waits before it delivers an unacknowledged envelope again (a minute at first), and
    # a new process takes some seconds to start here; the downloads are held for a while
    async with FakeSlack(retry_delays=(5.0, 15.0, 30.0), ack_timeout=10.0) as slack:
        slack.mode = "socket"
        # apps.connections.open is Tier 1 ("1+ per minute"; Slack tolerates a small burst):
        # the new process connects right after the old one did
        slack.tiers["apps.connections.open"] = 3
        env = scene.configure(**slack_env(slack, socket=True))
        # The held downloads keep the old connection open until the late events reached it,
        # not the clock: on a busy machine the default 8 s could close it before they came.
        env["PARLEY_SHUTDOWN_GRACE"] = "60"
        await scene.stack.start_worker_process()
        first = await scene.web()
        people: list[SlackUser] = [slack.user(f"U0P{n}", f"p{n}") for n in range(CHATS)]
        dms: list[SlackChannel] = [slack.dm(person) for person in people]
        slow = slack.shared.hold()
        note = (b"a note\n", "note.txt", "text/plain")

        async def say(chat: int, which: range) -> None:
            for n in which:  # one after another, as a person types
                await slack.say(people[chat], dms[chat], f"m{chat}-{n}", files=[note] * (n == 2))

        early = asyncio.gather(*(say(chat, range(3)) for chat in range(CHATS)))
        await slack.wait_for(lambda: slack.shared.waiting == CHATS, what="the downloads waiting")
        first.sigterm()
        await until(lambda: "Socket Mode takes no more events" in first.said(), "the stop")
        late = asyncio.gather(*(say(chat, range(3, EACH)) for chat in range(CHATS)))
        fourths = {f"m{chat}-3" for chat in range(CHATS)}

        def fourths_left() -> bool:  # the bot's own posts, echoed, may be left beside them
            ids = [i for i, body in slack.socket.pushed if body["event"].get("text") in fourths]
            said = first.said()
            return len(ids) == CHATS and all(f"{i} left for the next" in said for i in ids)

        await until(fourths_left, "the late events left")
        slow.set()
        await early
        await scene.stopped(
            first,
            "Slack: every event taken is queued and acknowledged",
            "Slack: Socket Mode connection closed",
            within=60 + EXIT_WITHIN - GRACE,
        )
        assert slack.socket.closes[:1] == [1000], slack.socket.closes  # a clean close
        await scene.web()
        await late

        def replies(chat: int) -> list[str]:
            return [m.shown for m in slack.bot_messages(dms[chat].id)]

        await answered(replies, "every event answered after the restart")
        # Slack delivers an event again when an acknowledgement was lost
        stored = next(d.body for d in slack.deliveries if d.status == 200)
        status, _ = await slack.send(stored, retry_num=1, retry=False)
        await idle(scene.redis_url)
        assert status == 200
        held = [d for d in slack.deliveries if d.body["event"].get("files")]
        assert [(d.retry_num, d.status) for d in held] == [(0, 200)] * CHATS
        for chat in range(CHATS):
            fourth = [d for d in slack.deliveries if d.body["event"]["text"] == f"m{chat}-3"]
            assert fourth[0].status == 0 and fourth[-1].status == 200, fourth
            assert fourth[-1].retry_num >= 1 and fourth[-1].headers["retry_reason"] == "timeout"
        assert_each_once_in_order(replies)


# --- Slack, HTTP events in flight --------------------------------------------------------------


async def test_slack_events_in_flight_on_sigterm_are_answered_and_queued(scene: Scene) -> None:
    """Each event waits on its file's download when SIGTERM arrives: each still gets its 200
    (on its first delivery) once the download ends, before the process exits; Slack's retry
    of one of them, to the next process, is answered and not queued again."""
    async with FakeSlack(ack_timeout=30.0) as slack:
        scene.configure(**slack_env(slack))
        slack.events_url = f"http://127.0.0.1:{scene.port}{EVENTS_PATH}"
        await scene.stack.start_worker_process()
        first = await scene.web()
        people = [slack.user(f"U0H{n}", f"h{n}") for n in range(CHATS)]
        dms = [slack.dm(person) for person in people]
        slow = slack.shared.hold()
        note = (b"a note\n", "note.txt", "text/plain")
        saying = asyncio.gather(
            *(slack.say(people[c], dms[c], f"m{c}-0", files=[note]) for c in range(CHATS))
        )
        await slack.wait_for(lambda: slack.shared.waiting == CHATS, what="the downloads waiting")
        first.sigterm()
        await until(lambda: "stopped listening" in first.said(), "the stop begun")
        slow.set()
        await saying
        await scene.stopped(first)
        ids = {person.id for person in people}
        theirs = [d for d in slack.deliveries if d.body.get("event", {}).get("user") in ids]
        assert [(d.retry_num, d.status) for d in theirs] == [(0, 200)] * CHATS

        def replies(chat: int) -> list[str]:
            return [m.shown for m in slack.bot_messages(dms[chat].id)]

        def all_answered() -> bool:
            return all(numbers(replies(c), c) == [0] for c in range(CHATS))

        await until(all_answered, lambda: f"the answers: {[replies(c) for c in range(CHATS)]}")
        await scene.web()
        retry = await slack.send(theirs[0].body, retry_num=1, retry=False)
        await idle(scene.redis_url)
        assert retry[0] == 200
        assert all(numbers(replies(c), c) == [0] for c in range(CHATS))
        assert len(scene.fake.requests) == CHATS
