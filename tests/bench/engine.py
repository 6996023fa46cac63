"""How fast the engine turns a message into the first visible text, on loopback.

The fake model APIs run in a separate process and answer at once, so the figures are Parley's
own cost plus the SDK's: building the prompt, the request, parsing the stream, the loop's
bookkeeping, as the context grows. Run with `make bench`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.agent import events as ev
from bot.agent.build import build_agent
from bot.agent.loop import TurnRequest
from bot.agent.state import SessionState
from bot.config import Settings
from bot.envelope import Sender
from bot.tools.base import ToolContext
from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY

TURNS = 200
MODELS = {"anthropic": "claude-bench", "openai": "gpt-bench"}


@asynccontextmanager
async def fake_server() -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.llm", stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    try:
        yield (await proc.stdout.readline()).decode().strip()
    finally:
        proc.terminate()
        await proc.wait()


async def measure(url: str, api: str, with_tool: bool) -> tuple[list[float], list[float]]:
    settings = Settings(
        model=MODELS[api],
        anthropic_api_key=ANTHROPIC_KEY,
        anthropic_base_url=url,
        openai_api_key=OPENAI_KEY,
        openai_base_url=url + "/v1",
    )
    agent = build_agent(settings)
    ctx = ToolContext("bench", Sender(id="bench"), settings)
    state = SessionState()
    first: list[float] = []
    whole: list[float] = []
    for n in range(TURNS):
        text = f"what is {n} * 2" if with_tool else f"message number {n}"
        started = time.perf_counter()
        async for event in agent.run(state, TurnRequest(ctx, text=text)):
            if isinstance(event, ev.TextDelta) and len(first) == n:
                first.append(time.perf_counter() - started)
        whole.append(time.perf_counter() - started)
    await agent.aclose()
    return first, whole


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:6.1f}"


async def main() -> None:
    print(f"engine on loopback, {TURNS} turns per case; medians in ms for the first and the")
    print("last 20 turns (the context grows by one turn each time)")
    print("case                         first text: early / late   whole turn: early / late")
    async with fake_server() as url:
        for api in ("anthropic", "openai"):
            for with_tool in (False, True):
                first, whole = await measure(url, api, with_tool)
                name = api + (" + calculator call" if with_tool else "")
                print(
                    f"{name:28} {ms(first[:20])} / {ms(first[-20:])}          "
                    f"{ms(whole[:20])} / {ms(whole[-20:])}"
                )


if __name__ == "__main__":
    asyncio.run(main())
