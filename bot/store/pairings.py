"""The people an admin let in by their pairing code: who, on which platform, approved by whom.

SQL is the one truth about who is paired, read by a primary-key lookup (`is_paired`) on each
message of someone the settings do not let in already, or let in only as a guest. That costs
one indexed query where a cache would need invalidating in every web process when an admin
unpairs someone: an unpairing takes effect on the person's next message everywhere, and
nothing in Redis can disagree with the record (a Redis that lost its data loses no pairing).
People the settings make users, and everyone under `open` with no list, never reach the
query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import upsert
from bot.store.schema import PairedRow

PAIRED: Table = PairedRow.__table__  # type: ignore[assignment]
MAX_LISTED = 1000  # people listed at once: an operator's page, not a dump


@dataclass(frozen=True)
class Paired:
    person: str
    platform: str
    approved_by: str
    approved_at: datetime

    @classmethod
    def of(cls, row: Any) -> Paired:
        return cls(row.person, row.platform, row.approved_by, row.approved_at)


class PairedPeople:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def add(self, person: str, platform: str, by: str) -> Paired:
        """Pair `person`; pairing someone paired already records the newer approval."""
        row = {"person": person, "platform": platform, "approved_by": by}
        now = datetime.now(UTC)
        async with self.engine.begin() as db:
            statement = upsert(db, PAIRED).values(**row, approved_at=now)
            await db.execute(
                statement.on_conflict_do_update(
                    index_elements=["person"], set_={"approved_by": by, "approved_at": now}
                )
            )
        return Paired(person, platform, by, now)

    async def remove(self, person: str) -> bool:
        """Unpair `person`; False if they were not paired."""
        async with self.engine.begin() as db:
            gone = await db.execute(delete(PAIRED).where(PAIRED.c.person == person))
        return bool(gone.rowcount)

    async def is_paired(self, person: str) -> bool:
        """Whether `person` is paired: one lookup by the primary key (see the docstring)."""
        async with self.engine.connect() as db:
            found = await db.execute(select(PAIRED.c.person).where(PAIRED.c.person == person))
            return found.first() is not None

    async def all(self) -> list[Paired]:
        """Everyone paired, the earliest approved first."""
        listed = select(PAIRED).order_by(PAIRED.c.approved_at, PAIRED.c.person).limit(MAX_LISTED)
        async with self.engine.connect() as db:
            return [Paired.of(row) for row in await db.execute(listed)]
