"""The memories' vectors on SQLite and PostgreSQL: kept per memory with the model that made
them, read per scope and model only, listed for embedding when missing or another model's,
and gone with their memory however it goes."""

from __future__ import annotations

import pytest

from bot.store.database import Database
from bot.store.memory import Memories
from bot.store.memory_vectors import MemoryVectors, packed, unpacked

ANN, BOB = "tg:1", "tg:2"
E5, OTHER = "e5-small", "other-model"


@pytest.fixture
def memories(db: Database) -> Memories:
    return Memories(db.engine)


@pytest.fixture
def vectors(db: Database) -> MemoryVectors:
    return MemoryVectors(db.engine)


def test_a_vector_is_stored_as_little_endian_float32s() -> None:
    blob = packed([1.0, -0.5, 0.25])
    assert blob == bytes.fromhex("0000803f000000bf0000803e")
    assert list(unpacked(blob)) == [1.0, -0.5, 0.25]


async def test_vectors_are_read_by_scope_and_model_only(
    memories: Memories, vectors: MemoryVectors
) -> None:
    rex, _ = await memories.add(ANN, "Dog: Rex, a beagle adopted in 2019")
    tea, _ = await memories.add(ANN, "I drink green tea")
    bobs, _ = await memories.add(BOB, "My cat is called Tom")
    assert await vectors.put(rex.id, E5, [0.6, 0.8])
    assert await vectors.put(tea.id, OTHER, [1.0, 0.0])
    assert await vectors.put(bobs.id, E5, [0.0, 1.0])
    assert await vectors.of_scope(ANN, E5) == [(rex.id, packed([0.6, 0.8]))]
    assert await vectors.of_scope(BOB, E5) == [(bobs.id, packed([0.0, 1.0]))]
    assert await vectors.of_scope(BOB, OTHER) == []
    # tea's vector is another model's: it waits to be embedded again, as a new one would
    new, _ = await memories.add(ANN, "My sister is called Eve")
    assert [m.id for m in await vectors.waiting(E5)] == [tea.id, new.id]
    assert await vectors.put(tea.id, E5, [1.0, 0.0])  # replaces the other model's
    assert [m.id for m in await vectors.waiting(E5)] == [new.id]
    assert [m for m, _ in await vectors.of_scope(ANN, E5)] == [rex.id, tea.id]


async def test_a_vector_goes_with_its_memory(memories: Memories, vectors: MemoryVectors) -> None:
    rex, _ = await memories.add(ANN, "Dog: Rex, a beagle adopted in 2019")
    tea, _ = await memories.add(ANN, "I drink green tea")
    for memory in (rex, tea):
        assert await vectors.put(memory.id, E5, [1.0, 0.0])
    await memories.forget(ANN, rex.id)
    assert [m for m, _ in await vectors.of_scope(ANN, E5)] == [tea.id]
    await memories.forget_all(ANN)
    assert await vectors.of_scope(ANN, E5) == []
    # embedded after it was forgotten (a slow embedding): not kept
    assert not await vectors.put(rex.id, E5, [1.0, 0.0])
