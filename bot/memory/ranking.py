"""How recall ranks a scope's memories: by meaning (their vectors' nearness to the
question's) and by words (the database's full-text rank), fused into one order.

The two scores are not comparable (a cosine, a BM25 or `ts_rank`), so only the places count:
reciprocal rank fusion gives each memory the sum of 1/(K + its place) in each ranking it
is in. A memory high in both comes first; one found by a single ranking keeps its place
among the others; K (60, as usual for this fusion) keeps the first places from weighing
much more than the next few. A ranking may weigh less than another (`weights`).
"""

from __future__ import annotations

from collections.abc import Sequence

K = 60


def fused(
    *rankings: Sequence[int], k: int = K, weights: Sequence[float] | None = None
) -> list[int]:
    """The memory ids of `rankings` (each best first) in the fused order, each ranking's
    share scaled by its weight (1 each without `weights`); ties (the same places in the same
    rankings) go to the newer memory, the larger id."""
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for place, memory_id in enumerate(dict.fromkeys(ranking), start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + weight / (k + place)
    return sorted(scores, key=lambda memory_id: (-scores[memory_id], -memory_id))
