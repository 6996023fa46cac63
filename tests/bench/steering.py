"""Steering: how soon a message sent while its person's turn runs reaches the model, with the
default settings (`steer`).

A real redis-server, `parley web` (in this process) and a `parley worker` process, the fake
model in this process. Each sample is a fresh conversation: its first message makes the model
ask for a sum, in a call held for `HELD_S`; a second message is sent a moment into it; the
call ends, the calculator runs, and the next call must carry the second message. The figure
is the time from the held call's end to that next call reaching the model: the tool batch
(the calculator, in the worker's tool process) plus the step that takes the message in.
Target: 100 ms. A message that waited for its own turn would instead reach the model only
after the whole answer.

Run with `make bench`, or `python -m tests.bench.steering`.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from aiohttp import web

from tests.bench.helpers import env_for
from tests.bench.processes import settle_collector, start_workers, stop
from tests.bench.table import Figure, report, samples
from tests.fakes.llm import FakeLLM, RecordedRequest, Reply, ToolCallSpec
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import web_settings
from worker.web import make_app

HELD_S = 0.4  # the first call's length
SECOND_AFTER_S = 0.1  # when the second message is sent, into the held call
SECOND = "no, take the other number"
TURNS = samples(10, 2)
FIGURES = ("steered message: the call's end → the call that takes it in: median",)


class Clock:
    """The moments the bench needs from the fake model: when the held call ended, when the
    call carrying the second message arrived."""

    def __init__(self) -> None:
        self.released = 0.0
        self.joined = 0.0

    def brain(self, request: RecordedRequest) -> Reply:
        if request.tool_results():
            if SECOND in str(request.body["messages"][-1]["content"]):
                self.joined = time.perf_counter()
            return Reply(text="Taken: the other number.")
        gate = asyncio.Event()
        asyncio.get_running_loop().call_later(HELD_S, self._release, gate)
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})], gate=gate)

    def _release(self, gate: asyncio.Event) -> None:
        self.released = time.perf_counter()
        gate.set()


async def sample(client: httpx.AsyncClient, clock: Clock) -> float:
    session = (await client.post("/api/sessions")).json()["id"]
    path = f"/api/sessions/{session}/messages"
    first = asyncio.create_task(client.post(path, json={"text": "add them up"}, timeout=60))
    await asyncio.sleep(SECOND_AFTER_S)
    second = await client.post(path, json={"text": SECOND}, timeout=60)
    answered = await first
    assert answered.status_code == second.status_code == 200, answered.text
    assert '"joined"' in answered.text and "Taken" in second.text, answered.text[-400:]
    return clock.joined - clock.released


async def main() -> None:
    clock = Clock()
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm:
            llm.responder = clock.brain
            env = env_for(server.url, tmp, llm)
            port = free_port()
            runner = web.AppRunner(await make_app(web_settings(env)))
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            settle_collector()
            workers, _ = await start_workers(1, env, server.url)
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                    await sample(client, clock)  # warm: the SDK's connection, the tool process
                    took = [await sample(client, clock) for _ in range(TURNS)]
            finally:
                await stop(workers)
                await runner.cleanup()
                server.stop()
    median = statistics.median(took) * 1000
    print(f"steered: {median:.0f} ms median, each {', '.join(f'{t * 1000:.0f}' for t in took)}")
    report(Figure(FIGURES[0], median, "ms", 100))


if __name__ == "__main__":
    asyncio.run(main())
