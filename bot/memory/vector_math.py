"""The arithmetic of vectors, with numpy: imported by the first embedding or ranking that
needs it, never as a process starts (numpy costs a tenth of a second to import, and most
turns have no memory to rank)."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np

from bot.memory.embeddings import Vectors

# Crowding (hubness reduction, as cross-domain similarity local scaling does it): a memory's
# score by meaning is its cosine less half its mean cosine with its 10 nearest memories. On the
# recall benchmark it took recall@5 from 0.58 to 0.70 among 2,206 memories, and from 0.71 to
# 0.72 among the facts alone: what it moves back is mostly the notes alike that sit near
# every question (gift ideas, price checks, one template each).
CROWD = 10
CROWDING_WEIGHT = 0.5
BLOCK = 512  # rows of the cosines computed at once


def decoded(encoded: str, rows: int) -> Vectors:
    """`rows` vectors sent as base64 of little-endian float32s."""
    flat = np.frombuffer(base64.b64decode(encoded), dtype="<f4").astype(np.float32)
    return flat.reshape(rows, -1)


def unit(rows: Sequence[Sequence[float]]) -> Vectors:
    """Each row scaled to length 1 (a zero row stays zero), so a dot product is a cosine."""
    matrix = np.array(rows, dtype=np.float32)
    lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(lengths == 0, 1, lengths)).astype(np.float32)


def nearest(
    stored: Sequence[tuple[int, bytes]], asked: Vectors, limit: int, crowds: Vectors | None = None
) -> list[int]:
    """The ids of the `limit` stored vectors nearest `asked` (unit vectors: the dot product
    is the cosine), nearest first; with their `crowding`, each is first moved back by half of
    it, so a memory close to many others (a hub, near every question) does not come first
    for them all."""
    scores = _cosines(stored, asked)
    if crowds is not None:
        scores = scores - CROWDING_WEIGHT * crowds
    best = np.argsort(-scores, kind="stable")[:limit]
    return [stored[int(index)][0] for index in best]


def crowding(stored: Sequence[tuple[int, bytes]]) -> Vectors:
    """Each stored vector's mean cosine with its `CROWD` nearest others: how crowded the
    place it sits in is. A block of rows at a time, so 10,000 vectors take 20 MB at once
    rather than 400."""
    matrix = _matrix(stored)
    count = len(matrix)
    crowds = np.zeros(count, dtype=np.float32)
    if count <= CROWD:
        return crowds
    for start in range(0, count, BLOCK):
        block = matrix[start : start + BLOCK] @ matrix.T
        rows = np.arange(start, min(start + BLOCK, count))
        block[rows - start, rows] = -np.inf  # not itself
        crowds[start : start + BLOCK] = np.partition(block, count - CROWD, axis=1)[
            :, count - CROWD :
        ].mean(axis=1)
    return crowds


def outstanding(
    stored: Sequence[tuple[int, bytes]], asked: Vectors, limit: int, floor: float
) -> list[int]:
    """The ids of at most `limit` stored vectors that stand out as nearest `asked`, nearest
    first: their cosine lies `floor` standard deviations or more above the mean of all.
    A model's cosines crowd together (e5's between about 0.75 and 0.85 whatever the texts),
    so what sets a memory apart is its distance from the rest, not its cosine."""
    scores = _cosines(stored, asked)
    spread = float(scores.std())
    if spread == 0:
        return []
    standing = (scores - scores.mean()) / spread
    best = np.argsort(-scores, kind="stable")[:limit]
    return [stored[int(index)][0] for index in best if standing[index] >= floor]


def _cosines(stored: Sequence[tuple[int, bytes]], asked: Vectors) -> Vectors:
    scores: Vectors = _matrix(stored) @ asked.astype(np.float32)
    return scores


def _matrix(stored: Sequence[tuple[int, bytes]]) -> Vectors:
    flat = np.frombuffer(b"".join(blob for _, blob in stored), dtype="<f4")
    return flat.reshape(len(stored), -1)
