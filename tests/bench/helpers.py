"""Helpers in parallel: a turn whose model asks for 1, 3 or 8 helpers (`delegate`) in one
reply, timed from the person's message to the whole answer, with a model that takes 1 s to
answer each helper.

A real redis-server, `parley web` (in this process) and a `parley worker` process, and the
fake model in this process: a person's message makes it call `delegate` N times at once,
each helper's request is answered after `MODEL_S`, and the parent's request that carries the
helpers' answers is answered at once. So a turn is two quick model calls around the
helpers' part: in series that part would take N × `MODEL_S`, in parallel about `MODEL_S`.
Figures, medians of several turns:
- "turn with N helpers": for N = 1, 3 and 8, with the default settings (a turn runs 4
  helpers at once, PARLEY_DELEGATE_CONCURRENCY, so 8 take two rounds);
- "turn with 8 helpers, 8 at once": with PARLEY_DELEGATE_CONCURRENCY and
  PARLEY_TOOL_CONCURRENCY at 8;
- "3 helpers against 1": the ratio, whose target is 1.3;
- "plan of 3 independent steps": a `plan_execute` turn whose plan has 3 steps that need
  nothing from each other, which Parley runs as 3 helpers at once (the plan's model call, the
  helpers, the answer's).

Run with `make bench`, or `python -m tests.bench.helpers`.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from aiohttp import web

from bot.agent.plan import ANSWER, PLANNING
from tests.bench.processes import settle_collector, start_workers, stop
from tests.bench.table import Figure, report, samples
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, RecordedRequest, Reply, ToolCallSpec
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import web_settings
from worker.web import make_app

MODEL_S = 1.0  # each helper's model call
TURNS = samples(5, 2)
FIGURES = (
    "turn with 1 helper (1 s model call): median",
    "turn with 3 helpers: median",
    "turn with 8 helpers: median",
    "turn with 8 helpers, 8 at once: median",
    "3 helpers against 1",
    "turn with a plan of 3 independent steps (helpers): median",
)


def brain(request: RecordedRequest) -> Reply:
    """The person's message names how many helpers to start; a helper's first message is
    its task; the parent's request with the helpers' answers is answered at once."""
    first = str(request.body["messages"][0]["content"])
    if "job " in first and "helpers" not in first:  # a helper
        gate = asyncio.Event()
        asyncio.get_running_loop().call_later(MODEL_S, gate.set)
        return Reply(text="done: " + first.rsplit("job ", 1)[1].split(maxsplit=1)[0], gate=gate)
    if request.tool_results():
        return Reply(text=f"{len(request.tool_results())} helpers answered")
    if ANSWER in request.last_user_text():  # a plan's, after its steps' helpers answered
        answered = json.dumps(request.body["messages"]).count("done: ")
        return Reply(text=f"{answered} helpers answered")
    if PLANNING in request.last_user_text():  # a plan's steps: Parley starts their helpers
        count = int(first.split("please run ", 1)[1].split(maxsplit=1)[0])
        steps = [{"id": n + 1, "title": f"do job {n}", "depends_on": []} for n in range(count)]
        return Reply(text=json.dumps({"steps": steps}))
    count = int(first.rsplit("start ", 1)[1].split(maxsplit=1)[0])
    return Reply(
        tool_calls=[ToolCallSpec("delegate", {"task": f"do job {n} now"}) for n in range(count)]
    )


async def turn(client: httpx.AsyncClient, count: int, *, plan: bool = False) -> float:
    """One turn with `count` helpers: asked for by the model, or run for the steps of a plan
    (the person's words name no helper then, as a helper's task carries them)."""
    mode = {"mode": "plan_execute"} if plan else {}
    session = (await client.post("/api/sessions", json=mode)).json()["id"]
    text = f"please run {count} steps" if plan else f"please start {count} helpers"
    start = time.perf_counter()
    answer = await client.post(
        f"/api/sessions/{session}/messages", json={"text": text}, timeout=120
    )
    took = time.perf_counter() - start
    assert answer.status_code == 200, answer.text
    assert f"{count} helpers answered" in answer.text, answer.text[-500:]
    return took


async def timed(client: httpx.AsyncClient, count: int, *, plan: bool = False) -> float:
    took = [await turn(client, count, plan=plan) for _ in range(TURNS)]
    median = statistics.median(took)
    what = f"a plan of {count} steps" if plan else f"{count} helpers"
    print(f"{what}: median {median:.2f} s, each {', '.join(f'{t:.2f}' for t in took)}")
    return median


def env_for(redis_url: str, folder: str, llm: FakeLLM, **more: str) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder}/parley.db",
        "PARLEY_MODEL": "claude-bench",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": llm.anthropic_base_url,
        "PARLEY_LOG_LEVEL": "WARNING",
        "PARLEY_FILES_DIR": f"{folder}/files",
        **more,
    }


async def measured(
    base_url: str, env: dict[str, str], redis_url: str, counts: list[int], *, plan: int = 0
) -> list[float]:
    """The median turn with each of `counts` helpers, then with a plan of `plan` steps."""
    workers, _ = await start_workers(1, env, redis_url)
    try:
        async with httpx.AsyncClient(base_url=base_url) as client:
            await turn(client, 1)  # warm: the SDK's first connection, the database
            medians = [await timed(client, count) for count in counts]
            return medians + ([await timed(client, plan, plan=True)] if plan else [])
    finally:
        await stop(workers)


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm:
            llm.responder = brain
            port = free_port()
            env = env_for(server.url, tmp, llm)
            runner = web.AppRunner(await make_app(web_settings(env)))
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            settle_collector()
            base_url = f"http://127.0.0.1:{port}"
            try:
                one, three, eight, planned = await measured(
                    base_url, env, server.url, [1, 3, 8], plan=3
                )
                wide = env | {"PARLEY_DELEGATE_CONCURRENCY": "8", "PARLEY_TOOL_CONCURRENCY": "8"}
                (eight_at_once,) = await measured(base_url, wide, server.url, [8])
            finally:
                await runner.cleanup()
                server.stop()
    print(
        f"a turn with helpers of a {MODEL_S:g} s model call: 1 → {one:.2f} s, 3 → {three:.2f} s "
        f"({three / one:.2f}×), 8 → {eight:.2f} s (4 at once), {eight_at_once:.2f} s (8 at once); "
        f"a plan of 3 independent steps → {planned:.2f} s"
    )
    report(
        Figure("turn with 1 helper (1 s model call): median", one * 1000, "ms"),
        Figure("turn with 3 helpers: median", three * 1000, "ms"),
        Figure("turn with 8 helpers: median", eight * 1000, "ms"),
        Figure("turn with 8 helpers, 8 at once: median", eight_at_once * 1000, "ms"),
        Figure("3 helpers against 1", three / one, "×", 1.3),
        Figure("turn with a plan of 3 independent steps (helpers): median", planned * 1000, "ms"),
    )


if __name__ == "__main__":
    asyncio.run(main())
