"""The arithmetic of vectors, with numpy: imported by the first embedding or ranking that
needs it, never as a process starts (numpy costs a tenth of a second to import, and most
turns have no memory to rank)."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np

from bot.memory.embeddings import Vectors


def decoded(encoded: str, rows: int) -> Vectors:
    """`rows` vectors sent as base64 of little-endian float32s."""
    flat = np.frombuffer(base64.b64decode(encoded), dtype="<f4").astype(np.float32)
    return flat.reshape(rows, -1)


def unit(rows: Sequence[Sequence[float]]) -> Vectors:
    """Each row scaled to length 1 (a zero row stays zero), so a dot product is a cosine."""
    matrix = np.array(rows, dtype=np.float32)
    lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(lengths == 0, 1, lengths)).astype(np.float32)


def nearest(stored: Sequence[tuple[int, bytes]], asked: Vectors, limit: int) -> list[int]:
    """The ids of the `limit` stored vectors nearest `asked` (unit vectors: the dot product
    is the cosine), nearest first."""
    scores = _cosines(stored, asked)
    best = np.argsort(-scores, kind="stable")[:limit]
    return [stored[int(index)][0] for index in best]


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
    matrix = np.frombuffer(b"".join(blob for _, blob in stored), dtype="<f4")
    scores: Vectors = matrix.reshape(len(stored), -1) @ asked.astype(np.float32)
    return scores
