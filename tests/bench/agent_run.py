"""API runs end to end: `POST /api/agent/run` against real processes, timed from the request
to the whole answer.

A real redis-server, `parley web` and `parley worker` processes, and the fake model in its
own process answering at once (its demo brain: arithmetic becomes a calculator call, whose
result it reports, so each run is two model calls and one tool call). Figures, median and
95th percentile of many runs one after another:
- "run (JSON)": the whole run answered as JSON, the target being under 2 s;
- "run (SSE) first event" and "… completed": the same run streamed;
- "trace read": `GET /api/traces/{id}` of a finished run, and "sessions page":
  `GET /api/sessions`, non-streaming answers whose target is under 200 ms.

Run with `make bench`, or `python -m tests.bench.agent_run`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.bench.processes import (
    DEADLINE_S,
    environment,
    fake_model,
    last_announcement,
    serving,
    workers_ready,
)
from tests.bench.table import Figure, percentile, report, samples
from tests.support.redis_server import RedisServer, free_port

RUNS = samples(40, 4)
FIGURES = (
    "API run (JSON), end to end: p95",
    "API run (SSE): first event: p95",
    "API trace read: p95",
    "API sessions page: p95",
    "first process-isolated tool call after a worker is ready",
    "calculator round trip in a helper process: median",
)


def show(name: str, took: list[float], figure: str, limit: float | None) -> None:
    p95 = percentile(took, 0.95)
    aim = f"   (target < {limit:g} ms)" if limit else ""
    print(f"{name:28} median {statistics.median(took):7.1f} ms   p95 {p95:7.1f} ms{aim}")
    report(Figure(f"{figure}: p95", p95, "ms", limit))


async def timed_runs(client: httpx.AsyncClient) -> tuple[list[float], list[str]]:
    took, ids = [], []
    for n in range(RUNS):
        start = time.perf_counter()
        answer = await client.post("/api/agent/run", json={"task": f"what is {n}*7"}, timeout=60)
        took.append((time.perf_counter() - start) * 1000)
        run = answer.json()
        assert run["status"] == "completed" and str(n * 7) in run["text"], run
        ids.append(run["run_id"])
    return took, ids


async def timed_streams(client: httpx.AsyncClient) -> tuple[list[float], list[float]]:
    first, whole = [], []
    for n in range(RUNS):
        body = {"task": f"what is {n}+1", "stream": True}
        start = time.perf_counter()
        async with client.stream("POST", "/api/agent/run", json=body, timeout=60) as answer:
            seen_first = False
            async for line in answer.aiter_lines():
                if line.startswith("event:") and not seen_first:
                    first.append((time.perf_counter() - start) * 1000)
                    seen_first = True
        whole.append((time.perf_counter() - start) * 1000)
    return first, whole


async def calculator_ms(client: httpx.AsyncClient, run_id: str) -> float:
    """How long the run's calculator call took, from its trace (a helper process's round
    trip: arguments pickled over, evaluated, the result back). The record is written after
    the answer, so the trace is asked for until it is there."""
    deadline = time.monotonic() + DEADLINE_S
    while (answer := await client.get(f"/api/traces/{run_id}")).status_code != 200 or not (
        answer.json().get("nodes")
    ):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no trace of run {run_id}: {answer.text[:200]}")
        await asyncio.sleep(0.05)
    nodes = answer.json()["nodes"]
    call = next(n for n in nodes if n["kind"] == "tool_call" and n["name"] == "calculator")
    return float(call["ended_at"] - call["started_at"]) * 1000


async def tool_calls(client: httpx.AsyncClient, first: str, later: list[str]) -> None:
    """The first calculator call after the worker was ready, which its helper's warm-up is
    there to make as quick as the later ones, and the later ones' round trip."""
    cold = await calculator_ms(client, first)
    warm = [await calculator_ms(client, run) for run in later]
    later_ms = statistics.median(warm)
    print(f"calculator in a helper: first call {cold:.1f} ms, then median {later_ms:.1f} ms")
    report(
        Figure("first process-isolated tool call after a worker is ready", cold, "ms"),
        Figure("calculator round trip in a helper process: median", later_ms, "ms"),
    )


async def timed_reads(client: httpx.AsyncClient, path: str) -> list[float]:
    took = []
    for _ in range(RUNS):
        start = time.perf_counter()
        answer = await client.get(path)
        took.append((time.perf_counter() - start) * 1000)
        assert answer.status_code == 200, answer.text
    return took


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        fake, url = await fake_model()
        port = free_port()
        env = environment(server.url, tmp, url, PARLEY_HTTP_PORT=str(port))
        after = await last_announcement(server.url)
        processes = [
            await asyncio.create_subprocess_exec(sys.executable, "-m", "worker", role, env=env)
            for role in ("web", "worker")
        ]
        try:
            base_url = f"http://127.0.0.1:{port}"
            await serving(base_url, processes[0])
            await workers_ready(server.url, processes[1:], after)
            async with httpx.AsyncClient(base_url=base_url) as client:
                opening = await client.post(
                    "/api/agent/run", json={"task": "what is 6*7"}, timeout=60
                )
                await timed_runs(client)  # warm: the SDK's first connection, the database
                took, ids = await timed_runs(client)
                await tool_calls(client, opening.json()["run_id"], ids)
                first, whole = await timed_streams(client)
                print(f"{RUNS} API runs of two model calls and a tool call each, one at a time")
                show("run (JSON)", took, "API run (JSON), end to end", 2000)
                show("run (SSE) first event", first, "API run (SSE): first event", None)
                print(f"run (SSE) completed: median {statistics.median(whole):.1f} ms")
                read = await timed_reads(client, f"/api/traces/{ids[-1]}")
                show("trace read", read, "API trace read", 200)
                page = await timed_reads(client, "/api/sessions")
                show("sessions page", page, "API sessions page", 200)
        finally:
            for process in (*processes, fake):
                process.terminate()
                await process.wait()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
