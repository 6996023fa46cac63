"""Long-term memories: what people asked the agent to keep, across `/new` and restarts.

Every query filters by scope (a person, or a group chat: `bot.memory.scope`), so one scope's
memories never reach another. Search is the database's own full-text index (see migration
0003). The words of a query are taken out of the person's text and each is quoted, so
nothing a person writes (`"`, `OR`, `*`, `-`, `:`) is ever read as search syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Table, delete, func, literal, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.schema import DigestSourceRow, MemoryRow, MemoryVectorRow, UtcDateTime

MEMORIES: Table = MemoryRow.__table__  # type: ignore[assignment]
VECTORS: Table = MemoryVectorRow.__table__  # type: ignore[assignment]
SOURCES: Table = DigestSourceRow.__table__  # type: ignore[assignment]
MAX_TEXT = 500
MAX_PER_SCOPE = 200
MAX_FORGET = 10  # words matching more than this are too vague to delete by
MAX_WORDS = 32  # of a query: a long message's words beyond these add little
WORD = re.compile(r"[^\W_]+")  # letters and digits: what both databases' tokenisers keep
CHUNK = 500  # ids a statement binds at most (SQLite's limit is higher, but not unbounded)


class MemoryRefused(Exception):
    """Why a memory was not added or removed, in a sentence the person can act on."""


@dataclass(frozen=True)
class Memory:
    id: int
    scope: str
    text: str
    created_at: datetime
    day: date | None = None  # a day's digest (`bot.memory.digest`): the day it tells of

    @classmethod
    def of(cls, row: Any) -> Memory:
        return cls(
            id=row.id, scope=row.scope, text=row.text, created_at=row.created_at, day=row.day
        )

    def line(self) -> str:
        return f"#{self.id} {self.text}"


def fold(text: str) -> str:
    """`text` as search compares it: case-folded, accents dropped ("Österreich" is found
    as "osterreich"), the same on both databases whatever their locale."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def words(query: str) -> list[str]:
    """The distinct words of `query`, folded, at most `MAX_WORDS`."""
    return list(dict.fromkeys(WORD.findall(fold(query))))[:MAX_WORDS]


def clean(fact: str) -> str:
    """A fact as stored: whitespace collapsed, so repeats differing only in it are one."""
    return " ".join(fact.split())


class Memories:
    def __init__(self, engine: AsyncEngine, max_per_scope: int = MAX_PER_SCOPE) -> None:
        self.engine = engine
        self.max_per_scope = max_per_scope

    async def add(self, scope: str, fact: str) -> tuple[Memory, bool]:
        """The memory, and whether it is new: an exact repeat returns the one kept."""
        fact = clean(fact)
        if not fact:
            raise MemoryRefused("There is nothing to remember: the text is empty.")
        if len(fact) > MAX_TEXT:
            raise MemoryRefused(f"A memory is at most {MAX_TEXT} characters; say it shorter.")
        try:
            async with self.engine.begin() as db:
                if (kept := await _same(db, scope, fact)) is not None:
                    return kept, False
                new = await self._insert_below_cap(db, scope, fact)
                if new is None:
                    raise MemoryRefused(
                        f"Memory is full ({self.max_per_scope} memories here); "
                        "forget something first."
                    )
                return new, True
        except IntegrityError:  # the same fact added at the same moment elsewhere
            async with self.engine.connect() as db:
                kept = await _same(db, scope, fact)
            if kept is None:
                raise
            return kept, False

    async def _insert_below_cap(self, db: AsyncConnection, scope: str, fact: str) -> Memory | None:
        """Insert `fact` unless `scope` holds its cap already, in one statement, so two
        memories added at once cannot both take the last place: SQLite runs the statement
        under its write lock, and PostgreSQL first serialises the scope's adders with a
        transaction-scoped advisory lock (its count would not see the other's row)."""
        if db.dialect.name == "postgresql":
            await db.execute(
                text("SELECT pg_advisory_xact_lock(hashtextextended(:scope, 0))"),
                {"scope": f"memories:{scope}"},
            )
        now = datetime.now(UTC)
        held = select(func.count()).where(_kept(scope)).scalar_subquery()
        row = select(
            literal(scope), literal(fact), literal(fold(fact)), literal(now, UtcDateTime())
        ).where(held < self.max_per_scope)
        columns = [MEMORIES.c.scope, MEMORIES.c.text, MEMORIES.c.folded, MEMORIES.c.created_at]
        added = await db.execute(
            MEMORIES.insert().from_select(columns, row).returning(MEMORIES.c.id)
        )
        new_id = added.scalar()
        return None if new_id is None else Memory(int(new_id), scope, fact, now)

    async def forget(self, scope: str, what: int | str) -> list[Memory]:
        """Remove the memory numbered `what`, or those matching all of its words; what was
        removed (nothing if none matched)."""
        async with self.engine.begin() as db:
            if isinstance(what, int):
                chosen = select(MEMORIES).where(MEMORIES.c.scope == scope, MEMORIES.c.id == what)
                found = [Memory.of(row) for row in await db.execute(chosen)]
            else:
                if not words(what):
                    raise MemoryRefused("Say which memory to forget: its number, or its words.")
                found = await _matching(db, scope, what, every=True, limit=MAX_FORGET + 1)
                if len(found) > MAX_FORGET:
                    raise MemoryRefused(
                        f"More than {MAX_FORGET} memories match {what[:80]!r}; give more "
                        "words, or the number of the one to forget."
                    )
            await removed(db, [memory.id for memory in found])
        return sorted(found, key=lambda memory: memory.id)

    async def forget_all(self, scope: str) -> int:
        """Remove all of `scope`'s memories, its digests too; how many there were."""
        async with self.engine.begin() as db:
            ids = select(MEMORIES.c.id).where(MEMORIES.c.scope == scope)
            return await removed(db, list((await db.execute(ids)).scalars()))

    async def search(self, scope: str, query: str, limit: int = 10) -> list[Memory]:
        """The memories sharing any word with `query` (a word's prefix counts), best first."""
        if not words(query):
            return []
        async with self.engine.connect() as db:
            return await _matching(db, scope, query, every=False, limit=limit)

    async def some(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        """The memories of `scope` numbered `ids` that still exist, in no order."""
        if not ids:
            return []
        chosen = select(MEMORIES).where(MEMORIES.c.scope == scope, MEMORIES.c.id.in_(ids))
        async with self.engine.connect() as db:
            return [Memory.of(row) for row in await db.execute(chosen)]

    async def count(self, scope: str) -> int:
        """How many memories `scope` has (its digests too), for a list that shows only the
        newest."""
        counted = select(func.count()).where(MEMORIES.c.scope == scope)
        async with self.engine.connect() as db:
            return int((await db.execute(counted)).scalar_one())

    async def recent(self, scope: str, limit: int = 10, *, digests: bool = True) -> list[Memory]:
        """The newest first; without the digests unless `digests`."""
        newest = (
            select(MEMORIES)
            .where(MEMORIES.c.scope == scope if digests else _kept(scope))
            .order_by(MEMORIES.c.id.desc())
            .limit(limit)
        )
        async with self.engine.connect() as db:
            return [Memory.of(row) for row in await db.execute(newest)]

    async def all(self, scope: str) -> list[Memory]:
        """In the order they were added."""
        every = select(MEMORIES).where(MEMORIES.c.scope == scope).order_by(MEMORIES.c.id)
        async with self.engine.connect() as db:
            return [Memory.of(row) for row in await db.execute(every)]


def _kept(scope: str) -> Any:
    """What people asked `scope` to keep: its memories but the digests, which its cap does
    not count."""
    return (MEMORIES.c.scope == scope) & MEMORIES.c.day.is_(None)


async def removed(db: AsyncConnection, ids: Sequence[int]) -> int:
    """Delete the memories `ids` with their vectors and digests' sources, each table by
    itself, so that forgetting does not depend on the database enforcing foreign keys; how
    many memories were deleted."""
    deleted = 0
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        for table in (VECTORS, SOURCES):
            await db.execute(delete(table).where(table.c.memory_id.in_(chunk)))
        deleted += int(
            (await db.execute(delete(MEMORIES).where(MEMORIES.c.id.in_(chunk)))).rowcount
        )
    return deleted


async def _same(db: AsyncConnection, scope: str, fact: str) -> Memory | None:
    same = select(MEMORIES).where(MEMORIES.c.scope == scope, MEMORIES.c.text == fact)
    row = (await db.execute(same)).first()
    return Memory.of(row) if row is not None else None


def fts5_query(query: str, *, every: bool) -> str:
    """SQLite FTS5: each word a quoted string; `every`: all words, exactly, else any word
    or a word it begins (words of three letters or more)."""
    if every:
        return " AND ".join(f'"{w}"' for w in words(query))
    return " OR ".join(f'"{w}"*' if len(w) >= 3 else f'"{w}"' for w in words(query))


def tsquery(query: str, *, every: bool) -> str:
    """PostgreSQL `to_tsquery`: each word a quoted lexeme, the same rules as `fts5_query`."""
    if every:
        return " & ".join(f"'{w}'" for w in words(query))
    return " | ".join(f"'{w}':*" if len(w) >= 3 else f"'{w}'" for w in words(query))


async def _matching(
    db: AsyncConnection, scope: str, words_of: str, *, every: bool, limit: int
) -> list[Memory]:
    if db.dialect.name == "sqlite":
        query = text(
            "SELECT m.id, m.scope, m.text, m.created_at, m.day FROM memories_fts "
            "JOIN memories AS m ON m.id = memories_fts.rowid "
            "WHERE memories_fts MATCH :match AND m.scope = :scope "
            "ORDER BY bm25(memories_fts), m.id LIMIT :limit"
        )
        match = fts5_query(words_of, every=every)
    else:
        query = text(
            "SELECT id, scope, text, created_at, day FROM memories "
            "WHERE scope = :scope AND search @@ to_tsquery('simple', :match) "
            "ORDER BY ts_rank(search, to_tsquery('simple', :match)) DESC, id LIMIT :limit"
        )
        match = tsquery(words_of, every=every)
    typed = query.columns(*(MEMORIES.c[n] for n in ("id", "scope", "text", "created_at", "day")))
    rows = await db.execute(typed, {"match": match, "scope": scope, "limit": limit})
    return [Memory.of(row) for row in rows]
