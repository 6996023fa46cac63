"""A steady stream of messages over several sessions, and a fake model that answers each so
that what every session ends with can be checked against what was sent: each answered once,
in order, no reply cut or doubled. For the tests that restart workers or Redis under load.

Message `m` of session `s` reads "sS mM". The model answers a turn with "ans sS mM" for each
message it carries (several, when messages waiting are merged into one turn or join it while it
runs): a long reply,
streamed in small pieces, for every fourth message; and for every third it first calls
`slow_write`, a side effect that must never run twice, writing one line to a file of the call's
own (`effects/sS-mM.txt`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import WatchError

from bot.mailbox.inbox import Mailbox
from bot.redis.results import done
from bot.session.states import StateStore
from bot.store.cold_context import ColdContext
from bot.store.engine import make_engine
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.messages import Message
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec

MARK = re.compile(r"\bs(\d+) m(\d+)\b")
ANSWERED = re.compile(r"ans s\d+ m(\d+)")
FILLER = " and so the story goes on" * 6  # a long reply: some 40 pieces streamed


def answer_to(session: int, numbers: Iterable[int]) -> str:
    """The whole text the model answers a turn carrying `numbers` with."""
    parts = [f"ans s{session} m{n}" + (FILLER if n % 4 == 2 else "") for n in numbers]
    return " | ".join(parts)


def _marks(text: str) -> list[tuple[int, int]]:
    return [(int(s), int(m)) for s, m in MARK.findall(text)]


def _said(message: dict[str, Any]) -> str:
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return " ".join(b.get("text", "") for b in blocks or [] if b.get("type") == "text")


def _turn_marks(request: RecordedRequest) -> list[tuple[int, int]]:
    """The marks of the messages the turn answers: every person's message since the last
    answer, those that joined the turn after a tool call's result included (steering)."""
    messages = request.body.get("messages", [])
    answers = [i for i, m in enumerate(messages) if m.get("role") == "assistant"
               and ANSWERED.search(_said(m))]  # fmt: skip
    since = answers[-1] + 1 if answers else 0
    return [mark for m in messages[since:] if m.get("role") == "user" for mark in _marks(_said(m))]


def _shown(request: RecordedRequest) -> list[str]:
    """The request's last messages, short: each role and its blocks' types and texts."""
    shown = []
    for message in request.body.get("messages", [])[-6:]:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts = [f"{b.get('type')}:{str(b.get('text', b.get('id', '')))[:40]}" for b in blocks]
        shown.append(f"{message.get('role')}[{', '.join(parts)}]")
    return shown


@dataclass
class Ledger:
    """The fake model's responder; it notes anything a turn saw out of order."""

    effects: Path
    violations: list[str] = field(default_factory=list)
    calls: int = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        self.calls += 1
        marks = _turn_marks(request)
        session, numbers = marks[0][0], [m for _, m in marks]
        history = [
            int(n)
            for message in request.body["messages"]
            if message["role"] == "assistant"
            for block in message["content"]
            for n in ANSWERED.findall(block.get("text", ""))
        ]
        if history != sorted(set(history)) or (history and history[-1] >= numbers[0]):
            self.violations.append(
                f"s{session}: answers {history} before {numbers}; the request's messages: "
                f"{_shown(request)}"
            )
        wanted = [m for m in numbers if m % 3 == 1]
        if wanted and not request.tool_results():
            calls = [
                ToolCallSpec(
                    "slow_write",
                    {"path": str(self.effects / f"s{session}-m{m}.txt"), "seconds": 0.3},
                    id=f"toolu_s{session}m{m}",
                )
                for m in wanted
            ]
            return Reply(text=f"writing s{session}", tool_calls=calls, delay=0.01)
        return Reply(text=answer_to(session, numbers), chunk_size=4, delay=0.02)


@dataclass
class Traffic:
    """People writing to `sessions` sessions through the mailbox, one message after another
    with a pause, until `stop` is set; `sent` counts each session's messages."""

    mailbox: Mailbox
    sessions: int
    pause: float = 0.25
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    sent: dict[int, int] = field(default_factory=dict)

    def session(self, s: int) -> str:
        return f"test:load{s}"

    async def person(self, s: int, at_least: int) -> None:
        self.sent[s] = 0
        while not self.stop.is_set() or self.sent[s] < at_least:
            m = self.sent[s]
            envelope = Envelope(
                id=f"load-s{s}-m{m}",
                session=self.session(s),
                text=f"s{s} m{m}",
                sender=Sender(id=f"test:u{s}"),
            )
            await self.submit(envelope)
            self.sent[s] += 1
            await asyncio.sleep(self.pause * (1 + s % 3) / 2)

    async def submit(self, envelope: Envelope) -> None:
        """Submit until Redis says it has it: a person whose message got no answer from a
        Redis restarting sends it again, under the same id (so it is kept once)."""
        retried = False
        while True:
            try:
                accepted = await self.mailbox.submit(envelope)
            # WatchError: the connection of a WATCH (arq's enqueue) dropped, an answer lost too
            except (RedisConnectionError, WatchError, OSError):
                retried = True
                await asyncio.sleep(0.1)
                continue
            # refused as a duplicate only when an attempt that got no answer had stored it
            assert accepted.accepted or retried, f"{envelope.id} refused: {accepted}"
            return

    async def run(self, at_least: int) -> None:
        """Until stopped, and until each session has sent `at_least` messages."""
        await asyncio.gather(*(self.person(s, at_least) for s in range(self.sessions)))


def answered_once_in_order(s: int, sent: int, messages: list[Message]) -> list[str]:
    """What is wrong with session `s`'s conversation, given it sent `sent` messages: each
    message once and in order, each answered once, every reply whole, and every tool call
    followed by its result."""
    problems: list[str] = []
    asked = [m for message in messages if message.role == "user" for _, m in _marks(message.text)]
    if asked != list(range(sent)):
        problems.append(f"s{s}: the person's messages recorded as {asked}")
    replies = [message.text for message in messages if message.role == "assistant"]
    answered = [int(n) for text in replies for n in ANSWERED.findall(text)]
    if answered != list(range(sent)):
        problems.append(f"s{s}: answered {answered}, not 0..{sent - 1} once each")
    for text in replies:
        numbers = [int(n) for n in ANSWERED.findall(text)]
        if numbers and text != answer_to(s, numbers):
            problems.append(f"s{s}: a reply cut or doubled: {text!r}")
    calls = [use.id for message in messages for use in message.tool_uses]
    results = [result.tool_use_id for message in messages for result in message.tool_results]
    if calls != results:
        problems.append(f"s{s}: tool calls {calls} but results {results}")
    return problems


async def check_conversations(
    traffic: Traffic, redis_url: str, effects: Path, database_url: str
) -> list[str]:
    """Everything wrong with the sessions `traffic` wrote to, once every turn is over: their
    conversations (their older turns read from the database at `database_url`, where the
    workers moved them once a context grew past what Redis keeps), messages still waiting,
    dead letters, side effects run twice."""
    problems: list[str] = []
    engine = make_engine(database_url)
    try:
        states = StateStore(traffic.mailbox, ColdContext(engine))
        for s, sent in traffic.sent.items():
            state = await states.load(traffic.session(s))
            if state is None:
                problems.append(f"s{s}: no state")
                continue
            problems += answered_once_in_order(s, sent, state.messages)
            if waiting := await traffic.mailbox.pending(traffic.session(s)):
                problems.append(f"s{s}: {waiting} messages still waiting")
    finally:
        await engine.dispose()
    redis = Redis.from_url(redis_url)
    try:
        dead = await done(redis.lrange("parley:dead", 0, -1))
    finally:
        await redis.aclose()
    if dead:
        problems.append(f"dead letters: {dead}")
    return problems + await asyncio.to_thread(_repeated_effects, effects)


def _repeated_effects(effects: Path) -> list[str]:
    """The side effects that ran more than once."""
    counted = {path.name: path.read_text().count("written") for path in effects.glob("*.txt")}
    return [
        f"{name}: the side effect ran {n} times" for name, n in sorted(counted.items()) if n > 1
    ]
