"""The benchmark suite's smoke run: `python -m tests.bench --quick` runs every benchmark with
few samples against the real processes and fakes, and its table has a value for every figure
each module promises. It checks that the benchmarks work, never that the machine was fast: a
missed target is not a failure here. Four modules run at once: most of a quick run is waiting
(processes starting, a scheduler's lease running out), which they overlap."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.__main__ import Outcome, discover
from tests.bench.table import Figure

ROOT = Path(__file__).resolve().parents[3]
SUITE_WITHIN_S = 540.0  # every module's quick run, four at a time, on a busy machine
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(SUITE_WITHIN_S + 60)]


def test_every_benchmark_runs_and_reports_its_figures(tmp_path: Path) -> None:
    table = tmp_path / "table.md"
    env = {
        name: value for name, value in os.environ.items() if not name.startswith("PARLEY_BENCH_")
    }
    suite = subprocess.Popen(
        [sys.executable, "-m", "tests.bench", "--quick", "--jobs", "4", "--table", str(table)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        said, _ = suite.communicate(timeout=SUITE_WITHIN_S)
    except subprocess.TimeoutExpired:
        suite.terminate()  # the suite stops its modules, and what they started, on SIGTERM
        said = suite.communicate(timeout=60)[0]
        pytest.fail(f"the quick suite took over {SUITE_WITHIN_S:g} s:\n{said[-8000:]}")
    assert suite.returncode == 0, said[-8000:]
    written = table.read_text()
    for benchmark in discover():
        assert f"=== {benchmark.name} ===" in said, benchmark.name
        for name in benchmark.expected:
            row = next(line for line in written.splitlines() if line.startswith(f"| {name} |"))
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
