"""The benchmark suite's smoke run: every benchmark of `python -m tests.bench` runs with few
samples (`--quick`) against the real processes and fakes, and reports every figure it
promises. It checks that the benchmarks work, never that the machine was fast: a missed target
is not a failure here.

Each module is a test of its own, run the way the suite runs it (`tests.bench.__main__.run`:
its own process, its figures read back from its results file), so the pytest workers spread
them: most of a quick run is waiting (processes starting, a scheduler's lease running out),
which other tests overlap. The suite itself, from its command line to its Markdown table,
runs on two of the short ones."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.__main__ import Outcome, benchmark, discover, names, run
from tests.bench.table import Figure

ROOT = Path(__file__).resolve().parents[3]
MODULE_WITHIN_S = 240.0  # one module's quick run, on a busy machine
pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def _no_bench_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules' own sizes, whatever the developer's environment asks for."""
    for name in os.environ:
        if name.startswith("PARLEY_BENCH_"):
            monkeypatch.delenv(name)


# The modules that take longest, started first (see tests/conftest.py), with their seconds.
LONG = {"streaming": 45, "slack": 25, "telegram": 20, "startup": 20, "pickup": 20, "soak": 20,
        "engine": 20, "scheduler": 20, "throughput": 15}  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow(LONG[n])) if n in LONG else n for n in names()],
)
@pytest.mark.timeout(MODULE_WITHIN_S + 60)
def test_a_benchmark_runs_and_reports_its_figures(name: str, tmp_path: Path) -> None:
    outcome = run(benchmark(name), tmp_path, quick=True, timeout=MODULE_WITHIN_S, alone=False)
    said = (tmp_path / f"{name}.log").read_text(errors="replace")
    assert outcome.returncode == 0, said[-8000:]
    reported = {figure.name: figure for figure in outcome.figures}
    for promised in outcome.benchmark.expected:
        assert promised in reported, f"{promised!r} not reported:\n{said[-8000:]}"
        assert math.isfinite(reported[promised].value), reported[promised]
    assert [row.name for row in outcome.rows() if row.verdict == "missing"] == []


def test_the_suite_runs_its_modules_and_writes_their_table(tmp_path: Path) -> None:
    """`python -m tests.bench --quick --jobs 2 --table FILE NAME...`: each module's section in
    the output, and a value in the table for every figure each of them promises."""
    chosen = ["backlog", "traces"]
    table = tmp_path / "table.md"
    env = {
        name: value for name, value in os.environ.items() if not name.startswith("PARLEY_BENCH_")
    }
    command = ["-m", "tests.bench", "--quick", "--jobs", "2", "--table", str(table), *chosen]
    suite = subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=MODULE_WITHIN_S,
        check=False,
    )
    said = suite.stdout + suite.stderr
    assert suite.returncode == 0, said[-8000:]
    written = table.read_text()
    for chosen_benchmark in map(benchmark, chosen):
        assert f"=== {chosen_benchmark.name} ===" in said, chosen_benchmark.name
        assert chosen_benchmark.expected, chosen_benchmark.name
        for figure in chosen_benchmark.expected:
            row = next(line for line in written.splitlines() if line.startswith(f"| {figure} |"))
            value = row.split(" | ")[2].split()[0]  # "| name | target | value unit | verdict |"
            assert value != "—", f"not reported: {row}"
            assert math.isfinite(float(value)), row


def test_a_promised_figure_that_is_not_reported_is_a_missing_row(tmp_path: Path) -> None:
    """A module found by its `main`, whose run did not report all it promised, gives a row
    marked missing for that figure and one for the failed run."""
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "broken.py").write_text(
        'FIGURES = ("said", "never said")\n\n\ndef main() -> None: ...\n'
    )
    (folder / "helper.py").write_text("def other() -> None: ...\n")
    [broken] = discover(folder)
    assert (broken.name, broken.expected) == ("broken", ("said", "never said"))
    rows = Outcome(broken, 1, 0.5, [Figure("said", 3.0, "ms", 5.0)]).rows()
    assert [(row.name, row.verdict) for row in rows] == [
        ("said", "pass"),
        ("never said", "missing"),
        ("broken: exited with 1", "missing"),
    ]
