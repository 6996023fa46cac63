"""Cost: input tokens per turn over a long conversation, and how much the prompt cache reads.

One conversation of N turns (100 by default) with a real `parley worker` process and a real
redis-server; the fake Anthropic API in this process answers each message with a few
paragraphs (every tenth with a calculator call first) and writes the summaries compaction
asks for. The fake models Anthropic's prompt cache as documented (breakpoints, the 1,024-token
minimum, prefix matching with its 20-block lookback, `cache_read_input_tokens` and
`cache_creation_input_tokens`), so what it reports is what Parley's requests would get.

Two figures have targets: the input tokens of the largest model call, which compaction must
keep under the context window however long the conversation (the window is set to
16,384 tokens here, so that it is reached within the run), and the share of input tokens
read from the cache from the third turn on (at least 80%). Counts, not times: the machine's
load does not change them. `python -m tests.bench.cost [TURNS] [WINDOW]`; PARLEY_BENCH_QUICK=1
runs 12 turns.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arq.connections import RedisSettings, create_pool

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.envelope import Envelope, Sender
from tests.bench.memory import answered, start_worker, stop
from tests.bench.table import Figure, report
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec
from tests.fakes.llm.script import RecordedRequest
from tests.support.redis_server import RedisServer

QUICK = os.environ.get("PARLEY_BENCH_QUICK") == "1"
TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else (12 if QUICK else 100)
WINDOW = int(sys.argv[2]) if len(sys.argv) > 2 else 16_384
TURN_DEADLINE_S = 120.0  # a loaded machine is slow, not broken
SESSION = "bench:cost"
PARAGRAPH = (
    "Here is the next part of the plan, with the reasons for each step and what to check "
    "before going on. "
) * 6


def brain(request: RecordedRequest) -> Reply:
    """A few paragraphs per message; every tenth asks the calculator first; summaries when
    compaction asks for one."""
    if request.system_text().startswith("You condense"):
        return Reply(text="Notes: the person is planning a trip step by step. " * 8)
    if request.tool_results():
        return Reply(text="The calculator says so. " + PARAGRAPH)
    words = request.last_user_text().split("]", 1)[-1].split()
    turn = int(words[-1]) if words and words[-1].isdigit() else 0
    if turn % 10 == 9:
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": f"{turn} * 3"})])
    return Reply(text=f"Answer {turn}. " + PARAGRAPH * 2)


@dataclass(frozen=True)
class Turn:
    calls: int
    uncached: int  # input tokens neither read from nor written to the cache
    read: int
    written: int
    largest: int  # the input tokens of its largest model call

    @property
    def input(self) -> int:
        return self.uncached + self.read + self.written


def tally(requests: list[RecordedRequest]) -> Turn:
    usages = [r.usage for r in requests if r.usage is not None]
    return Turn(
        len(usages),
        sum(u.input_tokens for u in usages),
        sum(u.cache_read for u in usages),
        sum(u.cache_write for u in usages),
        max((u.input_tokens + u.cache_read + u.cache_write for u in usages), default=0),
    )


async def one_turn(mailbox: Mailbox, llm: FakeLLM, n: int) -> Turn:
    """Submit message `n` and wait for its turn to be committed (the inbox empty again)."""
    before = len(llm.requests)
    text = f"Tell me more about step {n}" + ("" if n % 10 != 9 else f", and what is {n} * 3? {n}")
    await mailbox.submit(
        Envelope(id=f"cost-{n}", session=SESSION, text=f"{text} {n}", sender=Sender(id="b:u"))
    )
    await answered(mailbox, SESSION)
    return tally(llm.requests[before:])


def show(turns: list[Turn]) -> None:
    print(f"{'turns':>9} {'calls':>5} {'input/turn':>10} {'max':>7} {'cached':>7}")
    for start in range(0, len(turns), 10):
        part = turns[start : start + 10]
        total = sum(t.input for t in part)
        print(
            f"{start + 1:4}-{start + len(part):<4} {sum(t.calls for t in part):5} "
            f"{statistics.mean(t.input for t in part):10.0f} {max(t.input for t in part):7} "
            f"{sum(t.read for t in part) / max(1, total):7.1%}"
        )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        pool = await create_pool(RedisSettings.from_dsn(server.url))
        try:
            async with FakeLLM() as llm:
                llm.responder = brain
                worker = await start_worker(
                    server.url, tmp, llm.anthropic_base_url, PARLEY_CONTEXT_WINDOW=str(WINDOW)
                )
                try:
                    mailbox = Mailbox(pool, pool)
                    turns = [await one_turn(mailbox, llm, n) for n in range(TURNS)]
                finally:
                    await stop(worker)
                rejected = len(llm.rejected)
        finally:
            await pool.aclose()
            server.stop()
    summarise(turns, rejected)


def summarise(turns: list[Turn], rejected: int) -> None:
    later = turns[2:]
    share = sum(t.read for t in later) / max(1, sum(t.input for t in later))
    peak = max(t.largest for t in turns)
    print(f"{TURNS} turns of one conversation, context window {WINDOW} tokens (Anthropic, fake)")
    show(turns)
    print(
        f"input tokens per turn: mean {statistics.mean(t.input for t in turns):.0f}, "
        f"last 10 turns {statistics.mean(t.input for t in turns[-10:]):.0f}; largest model "
        f"call {peak}; "
        f"read from cache from turn 3: {share:.1%}; requests refused: {rejected}"
    )
    report(
        Figure("cost: input tokens of the largest model call", peak, "tokens", float(WINDOW)),
        Figure("cost: input read from cache from turn 3", share * 100, "%", 80.0, True),
    )


if __name__ == "__main__":
    asyncio.run(main())
