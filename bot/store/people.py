"""What people choose for themselves, kept across chats, platforms and `/new`."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import upsert
from bot.store.schema import PersonRow
from bot.zones import known_zone

PEOPLE: Table = PersonRow.__table__  # type: ignore[assignment]


class People:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def timezone(self, person: str) -> str | None:
        """The IANA zone `person` set, or None: then PARLEY_TIMEZONE applies. A zone this
        machine no longer knows counts as unset."""
        async with self.engine.connect() as db:
            zone = (
                await db.execute(select(PEOPLE.c.timezone).where(PEOPLE.c.id == person))
            ).scalar()
        if zone is None:
            return None
        try:
            known_zone(zone)
        except ValueError:
            return None
        return str(zone)

    async def set_timezone(self, person: str, zone: zoneinfo.ZoneInfo) -> None:
        now = datetime.now(UTC)
        async with self.engine.begin() as db:
            statement = upsert(db, PEOPLE).values(id=person, timezone=zone.key, updated_at=now)
            await db.execute(
                statement.on_conflict_do_update(
                    index_elements=[PEOPLE.c.id],
                    set_={"timezone": zone.key, "updated_at": now},
                )
            )
