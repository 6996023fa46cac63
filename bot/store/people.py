"""What people choose for themselves, kept across chats, platforms and `/new`."""

from __future__ import annotations

import contextlib
import zoneinfo
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.config.zones import known_zone
from bot.store.history import upsert
from bot.store.schema import PersonRow
from bot.vocabulary.preferences import Name, Preferences

PEOPLE: Table = PersonRow.__table__  # type: ignore[assignment]


class People:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def preferences(self, person: str) -> Preferences:
        """All of `person`'s preferences in one read; unset ones are None. A zone this
        machine no longer knows counts as unset."""
        chosen = select(
            PEOPLE.c.timezone, PEOPLE.c.language, PEOPLE.c.model, PEOPLE.c.instruction
        ).where(PEOPLE.c.id == person)
        async with self.engine.connect() as db:
            row = (await db.execute(chosen)).first()
        if row is None:
            return Preferences()
        return preferences_of(row.timezone, row.language, row.model, row.instruction)

    async def timezone(self, person: str) -> str | None:
        """The IANA zone `person` set, or None: then PARLEY_TIMEZONE applies."""
        return (await self.preferences(person)).timezone

    async def zones(self, people: Iterable[str]) -> dict[str, zoneinfo.ZoneInfo]:
        """The zones those of `people` who set a known one chose, in one read."""
        chosen = select(PEOPLE.c.id, PEOPLE.c.timezone).where(
            PEOPLE.c.id.in_(sorted(set(people))), PEOPLE.c.timezone.is_not(None)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(chosen)).all()
        zones = {}
        for person, name in rows:
            with contextlib.suppress(ValueError):
                zones[person] = known_zone(name)
        return zones

    async def set(self, person: str, changes: Mapping[Name, str | None]) -> Preferences:
        """Set (or, with None, clear) the preferences in `changes`, already cleaned
        (`bot.people.preferences.clean`); what `person` prefers now."""
        if changes:
            now = datetime.now(UTC)
            values: dict[str, object] = {str(name): value for name, value in changes.items()}
            values["updated_at"] = now
            async with self.engine.begin() as db:
                statement = upsert(db, PEOPLE).values(id=person, **values)
                await db.execute(
                    statement.on_conflict_do_update(index_elements=[PEOPLE.c.id], set_=values)
                )
        return await self.preferences(person)

    async def set_timezone(self, person: str, zone: zoneinfo.ZoneInfo) -> None:
        await self.set(person, {"timezone": zone.key})


def preferences_of(
    zone: str | None, language: str | None, model: str | None, instruction: str | None
) -> Preferences:
    """A person's row as their preferences: a zone this machine no longer knows is unset."""
    try:
        known_zone(zone or "")
    except ValueError:
        zone = None
    return Preferences(zone, language, model, instruction)
