"""The lab: an evaluation of RUNS recorded runs replayed by real worker processes, and its
comparison drawn in Chromium.

A real redis-server, `parley web`, WORKERS `parley worker` processes and the fake model in
a process of its own (its demo brain: arithmetic becomes a calculator call, whose result it
reports, so a run is two model calls and a tool call), on a SQLite file, with
PARLEY_LAB_LANES=LANES. First RUNS API runs (`POST /api/agent/run`, "what is N*7"), LANES
at a time, as many as the lab replays at once, after a warm-up: their throughput (runs a
second, from the first request to the last answer) and the CPU they cost Parley's processes.
Then `POST /api/evaluations` of the same runs on another model, timed from the request until
every replay is recorded (seen in the SQLite file by this process, so that watching costs
Parley's processes nothing): the wall time, the replays a second and their ratio to the
runs' own (target ≥ 0.9: the replays go at the deployment's normal pace), the CPU per
replay, and how long the POST took to answer (every run's input read, then the replays
queued: the first is queued once all are planned). CPU is the web and worker processes'
and their children's (a worker's tool helper), from /proc, over the window: what
orchestrating costs, the POST's planning included; the model, Redis and this process are
left out.

Then the lab page in headless Chromium: navigation to the RUNS-row comparison drawn (the
page's `parley:evaluation` mark, a frame after the rows and the summary are in the document),
the median of LOADS loads, the first one (cold) shown apart (target < 1 s); and a click on a
row to its two traces drawn side by side (`parley:pair`). Run with `make bench`, or
`python -m tests.bench.lab`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.bench.dashboard import entry, poll
from tests.bench.footprint import tree_cpu
from tests.bench.processes import (
    DEADLINE_S,
    environment,
    fake_model,
    serving,
    start_workers,
    stop,
)
from tests.bench.table import Figure, report, samples
from tests.support.browser import chromium
from tests.support.redis_server import RedisServer, free_port

RUNS = samples(100, 10)
WARM_UP = samples(8, 2)
LANES = 4
WORKERS = 2
LOADS = samples(7, 2)
CLICKS = samples(10, 2)
CANDIDATE = "claude-bench-candidate"
FIGURES = (
    "lab: evaluation of 100 runs, wall time",
    "lab: recorded runs/s, 4 at a time",
    "lab: replays/s, 4 lanes",
    "lab: replays/s against the runs' own",
    "lab: orchestration CPU per recorded run",
    "lab: orchestration CPU per replay",
    "lab: POST /api/evaluations of 100 runs",
    "lab: 100-row comparison drawn: median",
    "lab: a row's two traces drawn: median",
)


@dataclass(frozen=True)
class Batch:
    """What a batch of runs took: how many, wall seconds, CPU seconds of Parley's processes."""

    runs: int
    seconds: float
    cpu: float

    @property
    def rate(self) -> float:
        return self.runs / self.seconds

    @property
    def cpu_ms(self) -> float:
        return self.cpu / self.runs * 1000


async def timed(pids: list[int], work: Callable[[], Awaitable[int]]) -> Batch:
    """`work` (which says how many runs it made), its wall time and its CPU."""
    cpu = sum(tree_cpu(pid) for pid in pids)
    started = time.perf_counter()
    runs = await work()
    seconds = time.perf_counter() - started
    return Batch(runs, seconds, sum(tree_cpu(pid) for pid in pids) - cpu)


async def api_runs(client: httpx.AsyncClient, first: int, count: int) -> list[str]:
    """`count` API runs, LANES at a time; their ids, in the order asked."""
    ids: list[str] = [""] * count
    queue = iter(range(count))

    async def one_client() -> None:
        for n in queue:
            task = f"what is {first + n}*7"
            answer = await client.post("/api/agent/run", json={"task": task}, timeout=DEADLINE_S)
            run = answer.json()
            assert run["status"] == "completed" and str((first + n) * 7) in run["text"], run
            ids[n] = run["run_id"]

    await asyncio.gather(*(one_client() for _ in range(LANES)))
    return ids


def replays_recorded(database: Path, evaluation: str) -> int:
    """The evaluation's replays in the record: runs of its lanes' sessions."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
        found = db.execute(
            "SELECT count(*) FROM runs WHERE session_key LIKE ?", (f"lab:{evaluation}:%",)
        )
        return int(found.fetchone()[0])


async def evaluated(client: httpx.AsyncClient, database: Path, ids: list[str]) -> tuple[str, float]:
    """An evaluation of `ids` on the candidate, once every replay of it is recorded, and the
    ms its POST took to answer (the replays planned and queued)."""
    body = {"runs": ids, "config": {"model": CANDIDATE}, "label": "bench"}
    asked = time.perf_counter()
    started = await client.post("/api/evaluations", json=body, timeout=DEADLINE_S)
    assert started.status_code == 202, started.text
    planned = (time.perf_counter() - asked) * 1000
    evaluation = str(started.json()["id"])
    deadline = time.monotonic() + 10 * DEADLINE_S
    while await asyncio.to_thread(replays_recorded, database, evaluation) < len(ids):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the evaluation's replays were not all recorded: {evaluation}")
        await asyncio.sleep(0.01)
    return evaluation, planned


def checked(found: dict[str, Any]) -> None:
    """Every replay ended as its run did, with the same answer: the lab compared like
    with like."""
    rows = found["rows"]
    assert found["status"] == "done" and len(rows) == RUNS, found["status"]
    assert all(row["after"] and row["after"]["outcome"] == "completed" for row in rows)
    assert found["summary"]["same_answers"] == RUNS, found["summary"]


def page_loads(browser: WebDriver, url: str) -> list[float]:
    """The `parley:evaluation` mark of LOADS fresh navigations; the first one cold."""
    taken = []
    for _ in range(LOADS):
        browser.get(url)
        taken.append(poll(browser, lambda: entry(browser, "parley:evaluation", "mark"), "drawn"))
        rows = len(browser.find_elements(By.CSS_SELECTOR, "#compare-rows tr"))
        assert rows == RUNS, f"{rows} rows drawn"
    return taken


def pair_draws(browser: WebDriver, runs: list[str]) -> list[float]:
    """A click on each of CLICKS rows to its two traces drawn (`parley:pair`)."""
    took = []
    for n in range(CLICKS):
        run = runs[n % len(runs)]
        browser.find_element(By.CSS_SELECTOR, f'#compare-rows tr[data-run="{run}"]').click()
        poll(
            browser,
            lambda r=run: browser.execute_script("return document.body.dataset.pair") == r,
            "two traces drawn",
        )
        took.append(poll(browser, lambda: entry(browser, "parley:pair", "measure"), "measure"))
    return took


def show(
    runs: Batch, replays: Batch, planned: float, loads: list[float], pairs: list[float]
) -> None:
    ratio = replays.rate / runs.rate
    print(f"{RUNS} API runs, {LANES} at a time: {runs.seconds:.2f} s, {runs.rate:.1f} runs/s,")
    print(f"  orchestration CPU {runs.cpu_ms:.1f} ms a run")
    print(f"their evaluation, {LANES} lanes, {WORKERS} workers: {replays.seconds:.2f} s,")
    print(f"  {replays.rate:.1f} replays/s ({ratio:.2f} × the runs' own, target ≥ 0.9),")
    print(f"  orchestration CPU {replays.cpu_ms:.1f} ms a replay;")
    print(f"  of the wall time, POST /api/evaluations (planned and queued) {planned:.0f} ms")
    cold, warm = loads[0], loads[1:] or loads
    median = statistics.median(warm)
    print(f"comparison of {RUNS} rows drawn: cold {cold:.0f} ms, then median {median:.0f} ms,")
    print(f"  worst {max(warm):.0f} ms (target < 1000 ms)")
    print(f"a row's two traces drawn: median {statistics.median(pairs):.1f} ms")
    report(
        Figure("lab: evaluation of 100 runs, wall time", replays.seconds, "s"),
        Figure("lab: recorded runs/s, 4 at a time", runs.rate, "runs/s"),
        Figure("lab: replays/s, 4 lanes", replays.rate, "replays/s"),
        Figure("lab: replays/s against the runs' own", ratio, "×", 0.9, higher_is_better=True),
        Figure("lab: orchestration CPU per recorded run", runs.cpu_ms, "ms"),
        Figure("lab: orchestration CPU per replay", replays.cpu_ms, "ms"),
        Figure("lab: POST /api/evaluations of 100 runs", planned, "ms"),
        Figure("lab: 100-row comparison drawn: median", median, "ms", 1000),
        Figure("lab: a row's two traces drawn: median", statistics.median(pairs), "ms", 500),
    )


async def measured(base_url: str, database: Path, pids: list[int]) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        await api_runs(client, 10_000, WARM_UP)  # the SDK's connections, the database
        ids: list[str] = []

        async def recorded() -> int:
            ids.extend(await api_runs(client, 0, RUNS))
            return len(ids)

        runs = await timed(pids, recorded)
        evaluation: list[tuple[str, float]] = []

        async def replayed() -> int:
            evaluation.append(await evaluated(client, database, ids))
            return len(ids)

        replays = await timed(pids, replayed)
        [(evaluation_id, planned)] = evaluation
        found = (await client.get(f"/api/evaluations/{evaluation_id}")).json()
    checked(found)
    with chromium(1400, 1000) as browser:
        url = f"{base_url}/admin/lab?evaluation={evaluation_id}"
        loads = await asyncio.to_thread(page_loads, browser, url)
        pairs = await asyncio.to_thread(pair_draws, browser, ids)
    show(runs, replays, planned, loads, pairs)


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        fake, url = await fake_model()
        port = free_port()
        env = environment(
            server.url, tmp, url, PARLEY_HTTP_PORT=str(port), PARLEY_LAB_LANES=str(LANES)
        )
        web = await asyncio.create_subprocess_exec(sys.executable, "-m", "worker", "web", env=env)
        workers: list[asyncio.subprocess.Process] = []
        try:
            base_url = f"http://127.0.0.1:{port}"
            await serving(base_url, web)
            workers, _ = await start_workers(WORKERS, env, server.url)
            pids = [web.pid, *(worker.pid for worker in workers)]
            await measured(base_url, Path(tmp) / "parley.db", pids)
        finally:
            await stop([web, *workers, fake])
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
