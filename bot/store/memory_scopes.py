"""Whose memories there are: every scope holding any, for operators to find them by.

Memories are only ever read scope by scope (`bot.store.memory`); an operator who answers a
privacy request, or looks after a group's memory, first needs to know which scopes hold
some. A scope is listed with what it holds, the memories people asked to keep and the days'
digests counted apart (a digest does not count towards the cap, `bot.store.digests`), the
time of its newest one, and whether its days are digested; the most recently written first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import distinct, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.digests import OFF
from bot.store.memory import MEMORIES


@dataclass(frozen=True)
class ScopeHolding:
    """What one scope holds."""

    scope: str
    memories: int  # what people asked to keep
    digests: int  # the days' digests
    newest_at: datetime  # when its newest memory or digest was written
    digests_off: bool  # its person, a chat's admin or an operator turned its digests off


class MemoryScopes:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def page(self, offset: int, limit: int) -> tuple[int, list[ScopeHolding]]:
        """How many scopes hold memories, and `limit` of them from `offset`, the one whose
        newest memory is newest first (ties by scope, so pages never overlap)."""
        held = (
            select(
                MEMORIES.c.scope,
                func.count().label("every"),
                func.count(MEMORIES.c.day).label("digests"),  # NULL for a kept memory
                func.max(MEMORIES.c.created_at).label("newest"),
            )
            .group_by(MEMORIES.c.scope)
            .subquery()
        )
        chosen = (
            select(held, OFF.c.scope.is_not(None).label("off"))
            .select_from(held.outerjoin(OFF, OFF.c.scope == held.c.scope))
            .order_by(held.c.newest.desc(), held.c.scope)
            .offset(offset)
            .limit(limit)
        )
        counted = select(func.count(distinct(MEMORIES.c.scope)))
        async with self.engine.connect() as db:
            total = int((await db.execute(counted)).scalar_one())
            rows = (await db.execute(chosen)).all() if total > offset else []
        return total, [
            ScopeHolding(
                scope=row.scope,
                memories=int(row.every) - int(row.digests),
                digests=int(row.digests),
                newest_at=row.newest,
                digests_off=bool(row.off),
            )
            for row in rows
        ]
