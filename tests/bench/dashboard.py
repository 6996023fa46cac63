"""The dashboard (`/admin`) as an operator meets it: a real `parley web` process over a seeded
SQLite database, opened in a real headless Chromium.

The database gets RUNS runs spread over the last day the way a worker records them (varied
platforms, models, outcomes, tools and retries), BIG of them with a trace of 100 nodes; copies
of the small ones (new ids, the same sessions, times and traces, written with one SQL
statement each) bring it to TOTAL, the 100,000 runs the targets are about.
Figures, each the median (and the worst) of several tries:
- "first load": navigation start to the runs' list and the five charts drawn (the page's
  `parley:ready` mark, taken a frame after both are in the document); the first, cold load
  (scripts not cached yet) is shown apart; and the same with the runs grouped by model
  (`?group=model`), the groups' table drawn too;
- "trace of 100 nodes": a click on a run to its graph drawn (the page's `parley:trace`
  measure, from the click to a frame after the SVG is in the document);
- over HTTP: `GET /api/traces/{id}` of a 100-node trace and `GET /api/metrics/runs` (the
  last day, a page of 25 as the dashboard asks), the charts' `GET /api/metrics/series`, and
  the runs grouped by model, `GET /api/metrics/groups` (which reads the window's rows for
  their tokens and cost, not in the window's index).

Targets: first load < 1 s, a 100-node trace < 500 ms, a trace read < 100 ms, the runs',
the series' and the groups' answers < 200 ms. Run with `make bench`, or
`python -m tests.bench.dashboard`.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bot.config.settings import Settings
from bot.store.database import open_database
from tests.bench.processes import serving
from tests.bench.table import Figure, report, samples
from tests.support.browser import chromium
from tests.support.redis_server import RedisServer, free_port
from tests.support.runs import Seed, record

RUNS = samples(2_000, 200)
TOTAL = samples(100_000, 1_000)
BIG = 12
LOADS = samples(7, 2)
CLICKS = samples(10, 2)
REQUESTS = samples(50, 3)
FIGURES = (
    "dashboard first load (ready): median",
    "dashboard first load grouped by model (ready): median",
    "dashboard 100-node trace drawn: median",
    "dashboard GET /api/traces/{id}: median",
    "dashboard GET /api/metrics/runs: median",
    "dashboard GET /api/metrics/series: median",
    "dashboard GET /api/metrics/groups: median",
)
DEADLINE_S = 60.0
ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = (("tg:{}", "telegram"), ("slack:T1:C{}", "slack"), ("http:{}", "http"))
TOOLS = ("calculator", "web_search", "web_fetch", "read_file", "remember")
ENDS = ("end_turn",) * 12 + ("error", "max_iterations", "cancelled")


def seeds(now: float) -> list[Seed]:
    """RUNS runs over the last day, newest last; the BIG newest have a 100-node trace."""
    rng = random.Random(7)
    made = []
    for n in range(RUNS):
        key, platform = PLATFORMS[n % 3]
        big = n >= RUNS - BIG
        finish = "end_turn" if big else rng.choice(ENDS)
        made.append(
            Seed(
                session="http:big" if big else key.format(n % 150), envelope=f"e{n}",
                platform="http" if big else platform,
                title="a big trace" if big else f"conversation {n % 150}",
                model=rng.choice(("claude-test", "gpt-test")),
                trigger="scheduled" if n % 17 == 0 else "message",
                finish=finish, error="provider failed" if finish == "error" else None,
                started_at=now - 86_000 + n * 86_000 / RUNS, latency_s=rng.uniform(0.3, 20),
                tools=("calculator",) * 98 if big else rng.sample(TOOLS, rng.randint(0, 3)),
                retries=0 if big else rng.choice((0, 0, 0, 1, 2)),
            )
        )  # fmt: skip
    return made


async def seed(database_url: str) -> list[str]:
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        big = (await record(database.history, *seeds(time.time())))[-BIG:]
    finally:
        await database.aclose()
    copy_runs(Path(database_url.split("///", 1)[1]), big)
    return big


def copy_runs(path: Path, big: list[str]) -> None:
    """Copies of the recorded runs but the big ones, until the file holds TOTAL runs; an id
    keeps its length, with an "x" (never in a recorded id) and the copy's number."""
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        others = ", ".join(column for column in columns if column != "id")
        small = RUNS - BIG
        marks = ", ".join("?" * len(big))
        for copy in range(1, -(-(TOTAL - RUNS) // small) + 1):
            room = TOTAL - RUNS - (copy - 1) * small
            db.execute(
                f"INSERT INTO runs (id, {others}) SELECT substr(id, 1, length(id) - 5) || "
                f"printf('x%04d', ?), {others} FROM runs WHERE id NOT IN ({marks}) "
                "AND id NOT LIKE '%x%' LIMIT ?",
                (copy, *big, min(room, small)),
            )


def web_env(redis_url: str, database_url: str, port: int) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "PARLEY_HTTP_HOST": "127.0.0.1",
        "PARLEY_HTTP_PORT": str(port),
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": "not-used-by-the-web-process",
        "PARLEY_LOG_LEVEL": "WARNING",
    }


def entry(browser: WebDriver, name: str, kind: str) -> float | None:
    """The latest performance entry `name` of `kind`: a mark's time since navigation start,
    or a measure's duration, in ms."""
    script = (
        "const e = performance.getEntriesByName(arguments[0], arguments[1]).at(-1);"
        "return e ? (e.entryType === 'mark' ? e.startTime : e.duration) : null;"
    )
    found = browser.execute_script(script, name, kind)
    return None if found is None else float(found)


def poll(browser: WebDriver, probe: Any, what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while not (found := probe()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not seen; the page shows {browser.title!r}")
        time.sleep(0.01)
    return found


def first_loads(browser: WebDriver, url: str) -> list[tuple[float, float, float]]:
    """(runs, charts, ready) marks of LOADS fresh navigations; the first one cold."""
    taken = []
    for _ in range(LOADS):
        browser.get(url)
        ready = poll(browser, lambda: entry(browser, "parley:ready", "mark"), "the first load")
        runs = entry(browser, "parley:runs", "mark") or 0.0
        charts = entry(browser, "parley:charts", "mark") or 0.0
        taken.append((runs, charts, ready))
    return taken


def trace_draws(browser: WebDriver, url: str, ids: list[str]) -> tuple[list[float], int]:
    """The click-to-drawn times of CLICKS 100-node traces, and the nodes the last one drew."""
    browser.get(url + "?q=a+big+trace")
    poll(browser, lambda: entry(browser, "parley:ready", "mark"), "the list of big traces")
    took = []
    for n in range(CLICKS):
        run = ids[n % len(ids)]
        browser.find_element(By.CSS_SELECTOR, f'#runs tr[data-id="{run}"]').click()
        poll(
            browser,
            lambda r=run: browser.execute_script("return document.body.dataset.trace") == r,
            "a trace drawn",
        )
        took.append(poll(browser, lambda: entry(browser, "parley:trace", "measure"), "measure"))
    nodes = len(browser.find_elements(By.CSS_SELECTOR, "#graph g.node"))
    return took, nodes


async def http_times(base_url: str, run: str) -> dict[str, list[float]]:
    paths = {
        "GET /api/traces/{id}": f"/api/traces/{run}",
        "GET /api/metrics/runs": "/api/metrics/runs?limit=25",
        "GET /api/metrics/series": "/api/metrics/series",
        "GET /api/metrics/groups": "/api/metrics/groups",
    }
    took: dict[str, list[float]] = {name: [] for name in paths}
    async with httpx.AsyncClient(base_url=base_url) as client:
        for _ in range(REQUESTS):
            for name, path in paths.items():
                start = time.perf_counter()
                answer = await client.get(path)
                took[name].append((time.perf_counter() - start) * 1000)
                assert answer.status_code == 200, answer.text
    return took


def show(name: str, took: list[float], target: float, figure: str = "") -> None:
    verdict = "ok" if statistics.median(took) < target else "OVER"
    print(
        f"{name:26} median {statistics.median(took):7.1f} ms   worst {max(took):7.1f} ms"
        f"   target < {target:.0f} ms  {verdict}"
    )
    if figure:
        report(Figure(f"dashboard {figure}: median", statistics.median(took), "ms", target))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        database_url = f"sqlite+aiosqlite:///{tmp}/parley.db"
        started = time.monotonic()
        big = await seed(database_url)
        print(
            f"seeded {TOTAL} runs ({RUNS} recorded, {BIG} of 100 nodes) "
            f"in {time.monotonic() - started:.1f} s"
        )
        redis = RedisServer(Path(tmp))
        redis.start()
        port = free_port()
        web = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "worker", "web", env=web_env(redis.url, database_url, port)
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            await serving(base_url, web)
            with chromium(1400, 1000) as browser:
                loads = await asyncio.to_thread(first_loads, browser, base_url + "/admin")
                grouped = await asyncio.to_thread(
                    first_loads, browser, base_url + "/admin?group=model"
                )
                draws, nodes = await asyncio.to_thread(
                    trace_draws, browser, base_url + "/admin", big
                )
            requests = await http_times(base_url, big[0])
        finally:
            web.terminate()
            await web.wait()
            redis.stop()
    cold, warm = loads[0], loads[1:]
    print(
        f"first load, cold: runs {cold[0]:.0f} ms, charts {cold[1]:.0f} ms, ready {cold[2]:.0f} ms"
    )
    show("first load: runs drawn", [w[0] for w in warm], 1000)
    show("first load: charts drawn", [w[1] for w in warm], 1000)
    show("first load: both (ready)", [w[2] for w in warm], 1000, "first load (ready)")
    show(
        "first load, grouped (ready)",
        [w[2] for w in grouped[1:]],
        1000,
        "first load grouped by model (ready)",
    )
    show(f"trace of {nodes} nodes", draws, 500, "100-node trace drawn")
    limits = {"traces/{id}": 100, "metrics/runs": 200, "metrics/series": 200, "metrics/groups": 200}
    for name, limit in limits.items():
        path = f"GET /api/{name}"
        show(path, requests[path], limit, path)


if __name__ == "__main__":
    asyncio.run(main())
