"""The benchmark suite: `python -m tests.bench [--quick] [--jobs N] [--table FILE] [NAME ...]`.

Every module of tests/bench that defines a top-level `main` is a benchmark (found by reading
the sources, so a module added later joins without being listed anywhere); they run in
alphabetical order, one after another (or `--jobs` at once, for the smoke run: figures taken
side by side mix their loads), each as its own `python -m tests.bench.NAME` process. Each
reports its figures with `tests.bench.table.report` into a results file of its own; the
suite then prints the machine it ran on and one table: figure, target, result, pass or miss.
A figure a module lists in `FIGURES` but did not report, or a module that failed, is a row
marked "missing", and the suite exits with 1: the smoke run (`--quick`, few samples) checks
that every benchmark works, never that a target was met.

`--table FILE` also writes the machine and the table as Markdown: into FILE between the lines
`<!-- bench-table -->` and `<!-- /bench-table -->` when it has them (docs/PERFORMANCE.md
does), else as the whole file.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.bench.machine import describe
from tests.bench.table import (
    QUICK_VARIABLE,
    RESULTS_VARIABLE,
    Figure,
    load,
    render,
    render_markdown,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BEGIN, END = "<!-- bench-table -->", "<!-- /bench-table -->"
RUNNING: set[subprocess.Popen[bytes]] = set()  # stopped with the suite (Ctrl-C)
PRINTING = threading.Lock()


@dataclass(frozen=True)
class Benchmark:
    """A module with a `main`, and the figure names it promises in `FIGURES` (if any)."""

    name: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """What one module's run left: its exit status, seconds taken, figures reported."""

    benchmark: Benchmark
    returncode: int
    seconds: float
    figures: list[Figure]

    def rows(self) -> list[Figure]:
        """Its figures, then a "missing" row for each promised one it did not report and
        one for a run that failed."""
        reported = {figure.name for figure in self.figures}
        missing = [
            Figure(name, math.nan, "") for name in self.benchmark.expected if name not in reported
        ]
        failed = []
        if self.returncode != 0:
            failed = [Figure(f"{self.benchmark.name}: exited with {self.returncode}", math.nan, "")]
        return [*self.figures, *missing, *failed]


def _expected(tree: ast.Module, name: str) -> tuple[str, ...]:
    """The `FIGURES` of a module: read from its source when it is a literal, else from the
    module imported in a process of its own; () when it has none."""
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "FIGURES":
            try:
                return tuple(str(figure) for figure in ast.literal_eval(node.value))
            except ValueError:
                return _imported_figures(name)
    return ()


def _imported_figures(name: str) -> tuple[str, ...]:
    code = f"import json, tests.bench.{name} as m; print(json.dumps([str(f) for f in m.FIGURES]))"
    said = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return tuple(json.loads(said.stdout.splitlines()[-1]))


def names(folder: Path = HERE) -> list[str]:
    """The modules of `folder` with a top-level `main`: the benchmarks' names, in order."""
    found = []
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        if any(isinstance(node, functions) and node.name == "main" for node in tree.body):
            found.append(path.stem)
    return found


def benchmark(name: str, folder: Path = HERE) -> Benchmark:
    """The benchmark `name` of `folder`, with the figures it promises."""
    tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
    return Benchmark(name, _expected(tree, name))


def discover(folder: Path = HERE) -> list[Benchmark]:
    """The modules of `folder` with a top-level `main`, by name."""
    return [benchmark(name, folder) for name in names(folder)]


def run(benchmark: Benchmark, folder: Path, quick: bool, timeout: float, alone: bool) -> Outcome:
    """Run one module as its own process. `alone`: its output goes straight to ours; else
    it is kept, and printed in one piece when it ends, so modules run at once do not mix."""
    results = folder / f"{benchmark.name}.jsonl"
    env = {**os.environ, RESULTS_VARIABLE: str(results)}
    if quick:
        env[QUICK_VARIABLE] = "1"
    if alone:
        print(f"\n=== {benchmark.name} ===", flush=True)
    started = time.monotonic()
    command = [sys.executable, "-m", f"tests.bench.{benchmark.name}"]
    with (folder / f"{benchmark.name}.log").open("w+b") as log:
        stdout, stderr = (None, None) if alone else (log, subprocess.STDOUT)
        # A session of its own, so a module stopped early takes its servers and workers along.
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, start_new_session=True, stdout=stdout, stderr=stderr
        )
        RUNNING.add(process)
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            print(f"{benchmark.name}: stopped after {timeout:g} s", flush=True)
            returncode = _stop(process)
        finally:
            RUNNING.discard(process)
        if not alone:
            log.seek(0)
            said = log.read().decode(errors="replace")
            with PRINTING:
                print(f"\n=== {benchmark.name} ===\n{said}", end="", flush=True)
    return Outcome(benchmark, returncode, time.monotonic() - started, load(results))


def _stop(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM to the module's whole process group, SIGKILL to what is left after 15 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(15)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return -1


def write_table(path: Path, machine: list[str], figures: list[Figure]) -> None:
    """The machine and the table as Markdown, between the markers of `path` if it has them."""
    block = "\n".join(f"- {line}" for line in machine) + "\n\n" + render_markdown(figures)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        path.write_text(f"{before}{BEGIN}\n{block}\n{END}{after}", encoding="utf-8")
    else:
        path.write_text(block + "\n", encoding="utf-8")


def _arguments(known: list[Benchmark]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "names", nargs="*", help=f"run only these: {', '.join(b.name for b in known)}"
    )
    parser.add_argument("--quick", action="store_true", help="few samples: the smoke run")
    parser.add_argument("--table", type=Path, help="also write the table to this Markdown file")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per module")
    parser.add_argument(
        "--jobs", type=int, default=1, help="modules run at once (their figures then mix loads)"
    )
    parser.add_argument("--list", action="store_true", help="name the benchmarks and stop")
    return parser.parse_args()


def run_all(chosen: list[Benchmark], folder: Path, arguments: argparse.Namespace) -> list[Outcome]:
    """Each benchmark, `--jobs` at a time, in the order given. Interrupted, the modules still
    running are stopped before the threads waiting on them are joined."""
    alone = arguments.jobs == 1
    pool = ThreadPoolExecutor(arguments.jobs)
    try:
        return list(
            pool.map(lambda b: run(b, folder, arguments.quick, arguments.timeout, alone), chosen)
        )
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for process in list(RUNNING):
            _stop(process)
        raise
    finally:
        pool.shutdown(wait=True)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM ends the suite as Ctrl-C does: the modules still running are stopped first
    (each runs in a session of its own, so a signal to ours would not reach them)."""
    raise SystemExit(128 + signum)


def main() -> int:
    signal.signal(signal.SIGTERM, _terminated)
    known = discover()
    arguments = _arguments(known)
    if arguments.list:
        print("\n".join(b.name for b in known))
        return 0
    unknown = set(arguments.names) - {b.name for b in known}
    if unknown:
        print(f"no such benchmark: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    chosen = [b for b in known if not arguments.names or b.name in arguments.names]
    machine = describe()
    print("\n".join(machine), flush=True)
    with tempfile.TemporaryDirectory(prefix="parley-bench-") as tmp:
        outcomes = run_all(chosen, Path(tmp), arguments)
    figures = [row for outcome in outcomes for row in outcome.rows()]
    took = ", ".join(f"{o.benchmark.name} {o.seconds:.0f} s" for o in outcomes)
    print("", *machine, f"(took: {took})", "", render(figures), sep="\n")
    if arguments.table is not None:
        write_table(arguments.table, machine, figures)
    return 1 if any(f.verdict == "missing" for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
