"""The benchmark suite's own machinery, on two short modules: `python -m tests.bench` from its
command line to its Markdown table, and a promised figure a module did not report.

Every module's quick run (`make bench-smoke`: few samples, against the real processes and
fakes) is not part of `make test`: together they are three CPU-minutes of processes starting,
a fifth of the suite's, and `make bench` runs each of them in full before and after a change
to what they measure. mypy checks their code with the rest of the tests.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.__main__ import Outcome, benchmark, discover
from tests.bench.table import Figure

ROOT = Path(__file__).resolve().parents[3]
MODULE_WITHIN_S = 240.0  # one module's quick run, on a busy machine
pytestmark = pytest.mark.e2e


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
