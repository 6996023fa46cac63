"""Crowding: a memory near many others (a hub) is moved back for every question, one alone
near the question is not; a scope's crowding is kept until its vectors change."""

from __future__ import annotations

import numpy as np

from bot.memory import vector_math
from bot.memory.crowds import Crowds
from bot.store.memory_vectors import packed

DIMENSIONS = 16


def stored_of(rows: list[np.ndarray]) -> list[tuple[int, bytes]]:
    return [
        (index + 1, packed(vector_math.unit([row.tolist()])[0].tolist()))
        for index, row in enumerate(rows)
    ]


def hub_and_loner() -> tuple[list[tuple[int, bytes]], np.ndarray]:
    """Memory 1 sits among twelve others alike (a hub); memory 2 alone, a little farther
    from the question than the hub."""
    rng = np.random.default_rng(7)
    centre = np.eye(DIMENSIONS)[0]
    question = vector_math.unit([centre + 0.9 * np.eye(DIMENSIONS)[1]])[0]
    hub = centre + 0.6 * np.eye(DIMENSIONS)[1]
    loner = np.eye(DIMENSIONS)[1] + 0.75 * centre
    alike = [centre + 0.2 * rng.standard_normal(DIMENSIONS) for _ in range(12)]
    return stored_of([hub, loner, *alike]), question


def test_a_hub_is_moved_back_and_a_memory_alone_is_not() -> None:
    stored, question = hub_and_loner()
    assert vector_math.nearest(stored, question, 2)[0] == 1  # by cosine alone, the hub
    crowds = vector_math.crowding(stored)
    assert crowds[0] > crowds[1]
    assert vector_math.nearest(stored, question, 2, crowds)[0] == 2


def test_few_vectors_are_not_crowded() -> None:
    stored = stored_of([np.eye(DIMENSIONS)[n] for n in range(vector_math.CROWD)])
    assert vector_math.crowding(stored).tolist() == [0.0] * vector_math.CROWD


def test_crowding_in_blocks_is_crowding_at_once() -> None:
    rng = np.random.default_rng(3)
    stored = stored_of([rng.standard_normal(DIMENSIONS) for _ in range(40)])
    at_once = vector_math.crowding(stored)
    vector_math.BLOCK, block = 7, vector_math.BLOCK
    try:
        assert np.allclose(vector_math.crowding(stored), at_once)
    finally:
        vector_math.BLOCK = block


async def test_a_scopes_crowding_is_kept_until_its_vectors_change() -> None:
    stored, _ = hub_and_loner()
    crowds = Crowds(size=1)
    first = await crowds.of("tg:1", "m", stored)
    assert await crowds.of("tg:1", "m", stored) is first
    assert await crowds.of("tg:1", "other model", stored) is not first
    fewer = await crowds.of("tg:1", "m", stored[:-1])
    assert len(fewer) == len(stored) - 1
    await crowds.of("tg:2", "m", stored)  # the oldest scope makes room
    assert await crowds.of("tg:1", "m", stored[:-1]) is not fewer
