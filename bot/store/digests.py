"""The days' digests in the record: who spoke on a day, what was said, the digest kept.

A digest is a memory (`bot.store.memory`) with the day it tells of, so it is searched,
embedded, listed and forgotten as memories are, and goes with its scope; it does not count
towards the scope's cap of memories people keep. The sessions it was written from are kept
beside it (`digest_sources`): deleting one of them deletes the digest, and retention deletes
the digests of days older than the record it keeps (both in `bot.store.archive`).
A scope whose person, or chat's admins, said so is not digested (`digests_off`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from sqlalchemy import Table, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import MESSAGES, SESSIONS
from bot.store.memory import MEMORIES, SOURCES, Memory, fold
from bot.store.record_statements import insert_of
from bot.store.schema import DigestOffRow
from bot.vocabulary.chats import HELPER_MARK
from bot.vocabulary.replays import LANES

OFF: Table = DigestOffRow.__table__  # type: ignore[assignment]
SAID = ("session_key", "role", "sender", "text", "created_at")  # a `Said`'s, in its order


@dataclass(frozen=True, order=True)
class Spoken:
    """A session someone wrote in during a window of time."""

    session: str
    chat_kind: str
    sender: str


@dataclass(frozen=True)
class Said:
    """A message of the record, as a digest reads it."""

    session: str
    role: Literal["user", "assistant"]
    sender: str | None
    text: str
    at: datetime


class Digests:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def spoken(self, start: datetime, end: datetime) -> list[Spoken]:
        """Who wrote in which session between `start` and `end`: helpers' sessions left
        out (their parents' tell what they were asked), and the lab's replays (what they say
        was said once already, or never by the person)."""
        joined = MESSAGES.join(SESSIONS, SESSIONS.c.key == MESSAGES.c.session_key)
        chosen = (
            select(MESSAGES.c.session_key, SESSIONS.c.chat_kind, MESSAGES.c.sender)
            .select_from(joined)
            .where(
                MESSAGES.c.role == "user",
                MESSAGES.c.sender.is_not(None),
                MESSAGES.c.created_at >= start,
                MESSAGES.c.created_at < end,
                ~MESSAGES.c.session_key.contains(HELPER_MARK, autoescape=True),
                ~MESSAGES.c.session_key.startswith(LANES, autoescape=True),
            )
            .distinct()
        )
        async with self.engine.connect() as db:
            rows = await db.execute(chosen)
            return sorted(Spoken(row[0], row[1], row[2]) for row in rows)

    async def said(self, sessions: Sequence[str], start: datetime, end: datetime) -> list[Said]:
        """What was written in `sessions` between `start` and `end`, in order: people's
        messages and the answers, not the summaries compaction wrote."""
        chosen = (
            select(*(MESSAGES.c[name] for name in SAID))
            .where(
                MESSAGES.c.session_key.in_(sessions),
                MESSAGES.c.role.in_(("user", "assistant")),
                MESSAGES.c.summary.is_(False),
                MESSAGES.c.text != "",
                MESSAGES.c.created_at >= start,
                MESSAGES.c.created_at < end,
            )
            .order_by(MESSAGES.c.created_at, MESSAGES.c.seq)
        )
        async with self.engine.connect() as db:
            return [Said(*row) for row in await db.execute(chosen)]

    async def written(self, scope: str, day: date) -> bool:
        found = select(MEMORIES.c.id).where(MEMORIES.c.scope == scope, MEMORIES.c.day == day)
        async with self.engine.connect() as db:
            return (await db.execute(found)).first() is not None

    async def keep(
        self, scope: str, day: date, text: str, sessions: Iterable[str]
    ) -> Memory | None:
        """Keep `scope`'s digest of `day`, written from `sessions`; None when it has one
        already (another worker's, written meanwhile)."""
        now = datetime.now(UTC)
        values = {"scope": scope, "text": text, "folded": fold(text), "created_at": now}
        try:
            async with self.engine.begin() as db:
                added = await db.execute(
                    MEMORIES.insert().values(**values, day=day).returning(MEMORIES.c.id)
                )
                memory_id = int(added.scalar_one())
                for session in sorted(set(sessions)):
                    await db.execute(
                        SOURCES.insert().values(memory_id=memory_id, session_key=session)
                    )
        except IntegrityError:  # the scope's digest of that day (or the same text) is kept
            return None
        return Memory(memory_id, scope, text, now, day)

    async def off(self, scopes: Iterable[str]) -> set[str]:
        """Those of `scopes` whose days are not digested."""
        chosen = select(OFF.c.scope).where(OFF.c.scope.in_(sorted(set(scopes))))
        async with self.engine.connect() as db:
            return set((await db.execute(chosen)).scalars())

    async def switch(self, scope: str, *, on: bool, by: str) -> None:
        """Digest `scope`'s days again (`on`), or not, as `by` said."""
        async with self.engine.begin() as db:
            if on:
                await db.execute(delete(OFF).where(OFF.c.scope == scope))
                return
            values = {"scope": scope, "by": by, "at": datetime.now(UTC)}
            statement = insert_of(db.dialect.name, OFF).values(values)
            await db.execute(statement.on_conflict_do_nothing(index_elements=["scope"]))
