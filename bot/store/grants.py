"""The tools a person allowed for good in a chat: a press of "Always allow" on an approval.

A grant is for one person in one chat (`bot.vocabulary.chats.chat_of`: a forum topic or a Slack
thread shares its chat's), so a group member's press never spares another member the question, and
a tool allowed in one chat is still asked about in the next. Grants outlive `/new` and
restarts; people see and revoke theirs with `/permissions`, operators through the API. The
operator's policy still comes first: a grant never overrides a `deny` (`Policy.with_rules`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import upsert
from bot.store.schema import GrantRow

GRANTS: Table = GrantRow.__table__  # type: ignore[assignment]
MAX_LISTED = 200  # of one chat's or one person's grants: far more than anyone makes


@dataclass(frozen=True)
class Grant:
    id: int
    person: str
    chat: str
    tool: str
    granted_by: str
    created_at: datetime

    @classmethod
    def of(cls, row: Any) -> Grant:
        return cls(row.id, row.person, row.chat, row.tool, row.granted_by, row.created_at)


class Grants:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def add(self, person: str, chat: str, tools: Iterable[str], by: str) -> None:
        """Allow `tools` for `person` in `chat`; a tool allowed already keeps its grant."""
        now = datetime.now(UTC)
        rows = [
            {"person": person, "chat": chat, "tool": tool, "granted_by": by, "created_at": now}
            for tool in sorted(set(tools))
        ]
        if not rows:
            return
        async with self.engine.begin() as db:
            statement = upsert(db, GRANTS).values(rows)
            await db.execute(
                statement.on_conflict_do_nothing(index_elements=["person", "chat", "tool"])
            )

    async def tools_of(self, person: str, chat: str) -> list[str]:
        """What `person` runs without being asked in `chat`."""
        allowed = (
            select(GRANTS.c.tool)
            .where(GRANTS.c.person == person, GRANTS.c.chat == chat)
            .order_by(GRANTS.c.tool)
        )
        async with self.engine.connect() as db:
            return [str(tool) for tool in (await db.execute(allowed)).scalars()]

    async def in_chat(self, chat: str, person: str | None = None) -> list[Grant]:
        """The grants in `chat` (only `person`'s, when named), oldest first."""
        chosen = select(GRANTS).where(GRANTS.c.chat == chat)
        if person is not None:
            chosen = chosen.where(GRANTS.c.person == person)
        return await self._listed(chosen)

    async def of_person(self, person: str) -> list[Grant]:
        """Everything `person` allowed, in every chat, oldest first."""
        return await self._listed(select(GRANTS).where(GRANTS.c.person == person))

    async def get(self, grant_id: int) -> Grant | None:
        async with self.engine.connect() as db:
            row = (await db.execute(select(GRANTS).where(GRANTS.c.id == grant_id))).first()
        return Grant.of(row) if row is not None else None

    async def revoke(
        self, grant_id: int, *, chat: str | None = None, person: str | None = None
    ) -> Grant | None:
        """Remove grant `grant_id` if it is in `chat` and `person`'s (when given); the grant
        removed, or None when there was none such (never here, or revoked already)."""
        chosen = delete(GRANTS).where(GRANTS.c.id == grant_id)
        if chat is not None:
            chosen = chosen.where(GRANTS.c.chat == chat)
        if person is not None:
            chosen = chosen.where(GRANTS.c.person == person)
        async with self.engine.begin() as db:
            row = (await db.execute(chosen.returning(*GRANTS.c))).first()
        return Grant.of(row) if row is not None else None

    async def _listed(self, chosen: Any) -> list[Grant]:
        ordered = chosen.order_by(GRANTS.c.id).limit(MAX_LISTED)
        async with self.engine.connect() as db:
            return [Grant.of(row) for row in await db.execute(ordered)]
