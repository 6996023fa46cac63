"""The older part of long contexts, in SQL, so a session's hot state in Redis stays small.

A context is sent whole to the model at every call, but only its recent turns change: the
state store keeps those in Redis and moves older whole turns here (`bot.session.states`), as
the exact JSON the state held, so a worker that loads the session cold rebuilds the very
context, byte for byte. Rows are keyed by session, `epoch` (one context: compaction, /new
or retention's cut starts another) and position. A row is written before Redis's marker
counts it, so a worker that dies between the two leaves rows nobody reads, which the next
write overwrites.

Every write carries the lease's fence number, and a row is replaced only by a write of the
same or a later holder: a worker that lost the session (paused, then woken) and writes late
never overwrites what its successor moved here. A delete is fenced the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Table, bindparam, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.record_statements import insert_of
from bot.store.schema import ContextRow

CONTEXT: Table = ContextRow.__table__  # type: ignore[assignment]


class ColdContextMissing(Exception):
    """Redis says the context begins with rows the database does not have (restored from
    an older backup, deleted by hand): the context cannot be rebuilt as it was."""


class ColdContext:
    """The older messages of sessions' contexts, read and written in order."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        insert = insert_of(engine.dialect.name, CONTEXT)
        self._put = insert.on_conflict_do_update(
            index_elements=["session_key", "epoch", "position"],
            set_={"body": insert.excluded.body, "fence": insert.excluded.fence},
            where=CONTEXT.c.fence <= insert.excluded.fence,
        )
        c = CONTEXT.c
        self._read = (
            select(c.position, c.body)
            .where(
                (c.session_key == bindparam("session"))
                & (c.epoch == bindparam("epoch"))
                & (c.position < bindparam("count"))
            )
            .order_by(c.position)
        )

    async def put(
        self, session: str, epoch: str, start: int, bodies: Sequence[str], fence: int
    ) -> None:
        """Keep `bodies` as the context's messages from position `start` on."""
        rows = [
            {"session_key": session, "epoch": epoch, "position": start + i, "fence": fence,
             "body": body}
            for i, body in enumerate(bodies)
        ]  # fmt: skip
        if rows:
            async with self.engine.begin() as db:
                await db.execute(self._put, rows)

    async def read(self, session: str, epoch: str, count: int) -> list[str]:
        """The context's first `count` messages, as written."""
        parameters = {"session": session, "epoch": epoch, "count": count}
        async with self.engine.connect() as db:
            rows = (await db.execute(self._read, parameters)).all()
        if [row.position for row in rows] != list(range(count)):
            raise ColdContextMissing(f"{session}: {len(rows)} of {count} older messages found")
        return [row.body for row in rows]

    async def drop_others(self, session: str, epoch: str, fence: int) -> None:
        """Delete the session's rows of other contexts than `epoch` (replaced), except any a
        later holder of the session wrote."""
        c = CONTEXT.c
        async with self.engine.begin() as db:
            await db.execute(
                delete(CONTEXT).where(
                    (c.session_key == session) & (c.epoch != epoch) & (c.fence <= fence)
                )
            )
