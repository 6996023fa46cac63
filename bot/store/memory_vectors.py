"""The memories' vectors (`MemoryVectorRow`): written once a memory is embedded, read by
recall to rank a scope's memories by meaning.

A vector is stored as its unit-length float32s, little-endian, with the name of the model
that made it. Only vectors of the model configured now are read: after a change of model, a
memory not yet embedded again is found by its words alone until it is (`waiting` lists
them for the background pass). A vector goes with its memory (`bot.store.memory.removed`).
"""

from __future__ import annotations

import array
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.memory import MEMORIES, VECTORS, Memory
from bot.store.record_statements import insert_of


def packed(vector: Sequence[float]) -> bytes:
    """`vector` as stored: float32s, little-endian on every machine."""
    floats = array.array("f", vector)
    if sys.byteorder == "big":
        floats.byteswap()
    return floats.tobytes()


def unpacked(blob: bytes) -> array.array[float]:
    """A stored vector's float32s."""
    floats = array.array("f")
    floats.frombytes(blob)
    if sys.byteorder == "big":
        floats.byteswap()
    return floats


class MemoryVectors:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def put(self, memory_id: int, model: str, vector: Sequence[float]) -> bool:
        """Keep `memory_id`'s vector by `model`, in place of any other; False when the memory
        was forgotten meanwhile (its vector is not kept)."""
        values = {
            "memory_id": memory_id, "model": model, "vector": packed(vector),
            "embedded_at": datetime.now(UTC),
        }  # fmt: skip
        async with self.engine.begin() as db:
            statement = insert_of(db.dialect.name, VECTORS).values(values)
            try:
                await db.execute(
                    statement.on_conflict_do_update(index_elements=["memory_id"], set_=values)
                )
            except IntegrityError:  # no such memory (any more)
                return False
        return True

    async def waiting(self, model: str, limit: int = 100) -> list[Memory]:
        """Memories without a vector by `model` (none yet, or another model's), oldest first."""
        joined = MEMORIES.outerjoin(VECTORS, VECTORS.c.memory_id == MEMORIES.c.id)
        chosen = (
            select(*MEMORIES.c)
            .select_from(joined)
            .where(or_(VECTORS.c.memory_id.is_(None), VECTORS.c.model != model))
            .order_by(MEMORIES.c.id)
            .limit(limit)
        )
        async with self.engine.connect() as db:
            return [Memory.of(row) for row in await db.execute(chosen)]

    async def of_scope(self, scope: str, model: str) -> list[tuple[int, bytes]]:
        """Each memory of `scope` that `model` embedded: its id and stored vector."""
        joined = VECTORS.join(
            MEMORIES, and_(MEMORIES.c.id == VECTORS.c.memory_id, MEMORIES.c.scope == scope)
        )
        chosen = (
            select(VECTORS.c.memory_id, VECTORS.c.vector)
            .select_from(joined)
            .where(VECTORS.c.model == model)
            .order_by(VECTORS.c.memory_id)
        )
        async with self.engine.connect() as db:
            return [(int(row.memory_id), bytes(row.vector)) for row in await db.execute(chosen)]
