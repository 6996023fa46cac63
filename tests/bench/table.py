"""The figures a benchmark reports against their targets, gathered into one table.

Each benchmark module prints its own detail and calls `report` for the figures that have a
target. When the suite runs it (`python -m tests.bench`), `PARLEY_BENCH_RESULTS` names a file
that every figure is appended to as one JSON line; run alone, a module only prints.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

RESULTS_VARIABLE = "PARLEY_BENCH_RESULTS"


@dataclass(frozen=True)
class Figure:
    """One measured figure. `limit` is the target: the figure passes when it is at most the
    limit, or at least it when `higher_is_better`; None reports a figure without a target."""

    name: str
    value: float
    unit: str
    limit: float | None = None
    higher_is_better: bool = False

    @property
    def target(self) -> str:
        if self.limit is None:
            return ""
        return f"{'≥' if self.higher_is_better else '<'} {self.limit:g} {self.unit}"

    @property
    def verdict(self) -> str:
        if self.limit is None:
            return ""
        passed = self.value >= self.limit if self.higher_is_better else self.value < self.limit
        return "pass" if passed else "miss"


def report(*figures: Figure) -> None:
    """Add `figures` to the suite's results, when a suite is collecting them."""
    path = os.environ.get(RESULTS_VARIABLE)
    if not path:
        return
    with Path(path).open("a", encoding="utf-8") as out:
        for figure in figures:
            out.write(json.dumps(asdict(figure)) + "\n")


def load(path: Path) -> list[Figure]:
    """The figures a suite run collected, in the order they were reported."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Figure(**json.loads(line)) for line in lines if line.strip()]


def render(figures: list[Figure]) -> str:
    """The table: figure, target, result, pass or miss."""
    rows = [("figure", "target", "result", "")]
    rows += [(f.name, f.target, f"{f.value:.4g} {f.unit}", f.verdict) for f in figures]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)
