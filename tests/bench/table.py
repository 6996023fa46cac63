"""The figures a benchmark reports against their targets, gathered into one table.

Each benchmark module prints its own detail and calls `report` for the figures that have a
target. When the suite runs it (`python -m tests.bench`), `PARLEY_BENCH_RESULTS` names a file
that every figure is appended to as one JSON line; run alone, a module only prints. A module
lists the names it reports in `FIGURES`, so the suite can tell a figure that went missing.
`PARLEY_BENCH_QUICK=1` asks for the smoke run's few samples (`quick`, `samples`): it checks
that a benchmark works, never that the machine was fast.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

RESULTS_VARIABLE = "PARLEY_BENCH_RESULTS"
QUICK_VARIABLE = "PARLEY_BENCH_QUICK"


def quick() -> bool:
    """Whether this is the smoke run: as few samples as still exercise each step."""
    return os.environ.get(QUICK_VARIABLE, "") not in ("", "0")


def samples(full: int, smoke: int) -> int:
    """`full` samples, or `smoke` in the smoke run."""
    return smoke if quick() else full


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
        if math.isnan(self.value):
            return "missing"
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


def percentile(values: list[float], share: float) -> float:
    """The value `share` (0..1) of the way up `values`, interpolated between neighbours
    (`statistics.quantiles`' inclusive method); with one value, that value."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _result(figure: Figure) -> str:
    return "—" if math.isnan(figure.value) else f"{figure.value:.4g} {figure.unit}".rstrip()


def _rows(figures: list[Figure]) -> list[tuple[str, str, str, str]]:
    return [(f.name, f.target, _result(f), f.verdict) for f in figures]


def render_markdown(figures: list[Figure]) -> str:
    """The same table as Markdown, the way docs/PERFORMANCE.md holds it."""
    lines = ["| figure | target | result | |", "|---|---|---|---|"]
    for row in _rows(figures):
        cells = [cell.replace("|", "\\|") for cell in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render(figures: list[Figure]) -> str:
    """The table: figure, target, result, pass or miss."""
    rows = [("figure", "target", "result", "")]
    rows += _rows(figures)
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)
