"""Traces sealed at rest with `PARLEY_TRACE_KEY`: a `parley worker` process with the key
seals each run's trace in SQL, the web process with the key shows it as any other, and a web
process without the key, or with another one, answers 409 with a sentence that names the
setting, never a 500."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest
from aiohttp import web
from cryptography.fernet import Fernet
from sqlalchemy import select

from adapters.http.server import Runner
from bot.store.engine import make_engine
from bot.store.traces import RUNS
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.redis_server import free_port
from tests.support.stack import Stack, web_settings
from worker.web import make_app

KEY, OTHER = Fernet.generate_key().decode(), Fernet.generate_key().decode()


@contextlib.asynccontextmanager
async def web_with(stack: Stack, key: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """Another web process on the same Redis and database, with `key` (None: none)."""
    env = {name: value for name, value in stack.env.items() if name != "PARLEY_TRACE_KEY"}
    if key is not None:
        env["PARLEY_TRACE_KEY"] = key
    runner = Runner(await make_app(web_settings(env)), access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield client
    finally:
        await runner.cleanup()


async def stored_trace(stack: Stack, run_id: str) -> object:
    engine = make_engine(stack.env["DATABASE_URL"])
    try:
        async with engine.connect() as db:
            return (await db.execute(select(RUNS.c.trace).where(RUNS.c.id == run_id))).scalar()
    finally:
        await engine.dispose()


@pytest.mark.parametrize("stack", [{"PARLEY_TRACE_KEY": KEY}], indirect=True)
async def test_a_sealed_trace_is_read_with_its_key_and_refused_without(stack: Stack) -> None:
    await stack.start_worker_process()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "1234*5"})]),
        Reply(text="It is 6170."),
    )
    async with stack.client() as client:
        body = {"task": "1234*5?", "config": {"tools": ["calculator"]}}
        answer = (await client.post("/api/agent/run", json=body)).json()
        shown = await client.get(answer["trace"])
        graph = await client.get(f"{answer['trace']}/graph")
    assert shown.status_code == 200 and graph.status_code == 200, shown.text
    (call,) = [n for n in shown.json()["nodes"] if n["kind"] == "tool_call"]
    assert call["detail"]["result"] == "6170" and "1234*5" in call["detail"]["arguments"]
    assert answer["metrics"]["reliability"] == 100  # the answer's numbers, opened too

    stored = await stored_trace(stack, answer["run_id"])
    assert isinstance(stored, dict) and set(stored) == {"sealed"}
    assert "6170" not in str(stored) and "calculator" not in str(stored)

    for key, why in ((None, "is not given"), (OTHER, "none of the keys")):
        async with web_with(stack, key) as other:
            refused = await other.get(answer["trace"])
            listed = await other.get("/api/metrics/runs")
        assert refused.status_code == 409, refused.text
        said = refused.json()["error"]
        assert said.startswith("this run's trace is sealed") and why in said
        assert "PARLEY_TRACE_KEY" in said and KEY not in refused.text
        assert listed.status_code == 200 and listed.json()["total"] == 1  # numbers need no key
