"""What a worker gives its session runner: one typed object, built once per process."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.agent.loop import Agent
from bot.config.settings import Settings
from bot.mailbox.inbox import Mailbox
from bot.mailbox.liveness import Liveness
from bot.memory.recall import Recall
from bot.people.limits import Limits
from bot.redis.confirmations import Confirmations
from bot.session.egress import Egress
from bot.session.record import RunExport
from bot.session.voice import VoiceReplies
from bot.store.chats import ChatSettings
from bot.store.grants import Grants
from bot.store.history import History
from bot.store.people import People
from bot.store.turn_facts import TurnReads
from bot.tasks.book import TaskBook


@dataclass(frozen=True)
class SessionStores:
    """The database's stores a turn is decided with: what its person chose and always
    allows, what its scope remembers, what its chat's admins chose, and the task book (a
    scheduled run whose task was called off while it waited is not run). The runner's own,
    on the worker's loop."""

    people: People
    recall: Recall  # the memories, found by meaning with a model
    grants: Grants
    tasks: TaskBook
    chats: ChatSettings  # what each chat's admins chose: its instruction, its tools off
    reads: TurnReads  # all a turn reads of these before it runs, in one statement

    @classmethod
    def open(cls, engine: AsyncEngine, redis: Redis, recall: Recall | None = None) -> SessionStores:
        """All of them on one database (and Redis, where tasks are announced); `recall` is the
        process's (`Recall.on`), by words alone when none is given."""
        return cls(
            People(engine),
            recall or Recall.on(engine),
            Grants(engine),
            TaskBook(engine, redis),
            ChatSettings(engine),
            TurnReads(engine),
        )


@dataclass(frozen=True)
class RunnerDeps:
    settings: Settings
    mailbox: Mailbox
    agent: Agent
    egress: Egress
    confirmations: Confirmations
    schedule_expiry: Callable[[str, float], Awaitable[None]]  # an expiry job after the TTL
    history: History
    liveness: Liveness | None = None  # None: leases end only by their TTL (tools, tests)
    stores: SessionStores | None = None  # None: turns without preferences, memories, grants
    limits: Limits | None = None  # None: turns count against no daily budget (tests)
    exports: RunExport | None = None  # None: runs are not exported (no OTLP endpoint)
    voice: VoiceReplies | None = None  # None: no reply is said aloud (PARLEY_SPEECH_MODEL unset)
