"""An output schema's patterns are matched in linear time: a pattern that makes a
backtracking engine run for minutes gets its verdict at once and stalls nothing, and a
pattern only a backtracking engine could run is refused when the run is asked for."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from bot.agent.output import check
from bot.vocabulary import events as ev
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type
from tests.fakes.llm import FakeLLM, Reply

CATASTROPHIC = "^(a+)+$"  # Python's re takes about 2**n steps to refuse n a's and a '!'
WORD = {"type": "object", "properties": {"word": {"type": "string", "pattern": CATASTROPHIC}}}
KEYS = {"type": "object", "patternProperties": {CATASTROPHIC: {"type": "integer"}}}
NAMES = {"type": "object", "propertyNames": {"pattern": CATASTROPHIC}}
LONG = "a" * 90_000
SLOW = "a" * 40 + "!"  # a key Python's re would never finish refusing
STALL_BOUND_S = 10.0  # the longest pause of the event loop a busy machine explains


class Ticker:
    """A coroutine that wakes every 10 ms, keeping the longest pause between its wakes: the
    longest time the event loop could not run anything else."""

    def __init__(self) -> None:
        self.longest = 0.0

    async def run(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now


async def ticking() -> AsyncIterator[Ticker]:
    ticker = Ticker()
    task = asyncio.create_task(ticker.run())
    try:
        yield ticker
    finally:
        task.cancel()


@pytest.fixture
async def ticker() -> AsyncIterator[Ticker]:
    async for running in ticking():
        yield running


async def test_a_catastrophic_pattern_gets_its_verdict_without_stalling_the_loop(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """The reported case: 30 characters against `^(a+)+$` held a worker for 10 to 26 s; 32
    would hold it for minutes."""
    slow = "a" * 31 + "!"
    fake_llm.enqueue(
        Reply(text=json.dumps({"word": slow})),
        Reply(text=json.dumps({"word": LONG}), chunk_size=10_000),
    )
    agent = make_agent()  # built (its SDK imported) before the loop is watched
    async for ticker in ticking():
        config = RunConfig(output_schema=WORD)
        events = await collect(agent, SessionState(), "a word", config=config)
        longest = ticker.longest
    first, second = of_type(events, ev.Validated)
    assert not first.valid and first.repairing
    assert first.errors == [f"at $.word: {slow!r} does not match {CATASTROPHIC!r}"]
    assert second.valid
    assert completed(events).output == {"word": LONG}
    assert longest < STALL_BOUND_S


@pytest.mark.parametrize(
    ("schema", "good", "bad", "error"),
    [
        (WORD, {"word": LONG}, {"word": LONG + "!"}, "at $.word: 'aaaa"),
        (KEYS, {SLOW: "not checked", LONG: 1}, {LONG: "one"}, f"at $.{LONG}: 'one' is not"),
        (NAMES, {LONG: 1}, {LONG + "!": 1}, "at $: 'aaaa"),
    ],
)
async def test_every_pattern_keyword_is_matched_in_linear_time(
    schema: dict[str, Any], good: Any, bad: Any, error: str, ticker: Ticker
) -> None:
    """`pattern`, `patternProperties` and `propertyNames` on answers of 90,000 characters,
    checked in a thread as the agent checks them, while the loop goes on ticking."""
    accepted = await asyncio.to_thread(check, schema, json.dumps(good))
    refused = await asyncio.to_thread(check, schema, json.dumps(bad))
    assert accepted.valid and accepted.value == good
    assert not refused.valid and len(refused.errors) == 1
    assert refused.errors[0].startswith(error[:300])
    assert ticker.longest < STALL_BOUND_S


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "string", "pattern": "^(a)\\1$"}, "at pattern:"),
        ({"properties": {"a": {"pattern": "(?=a)b"}}}, "at properties/a/pattern:"),
        ({"patternProperties": {"(?<!x)y": {}}}, "at patternProperties:"),
        ({"$defs": {"d": {"pattern": "["}}}, "at $defs/d/pattern:"),
    ],
)
def test_a_pattern_only_a_backtracking_engine_runs_is_refused_when_the_run_is_asked_for(
    schema: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        RunConfig(output_schema=schema)
    (problem,) = caught.value.errors()
    assert problem["loc"] == ("output_schema",)
    assert where in problem["msg"] and "cannot be used" in problem["msg"]


def test_a_property_named_pattern_is_no_pattern() -> None:
    """Only the keyword is a regular expression, not a property that happens to be called so."""
    schema = {"properties": {"pattern": {"const": "(?=x)"}}}
    assert RunConfig(output_schema=schema).output_schema == schema
    assert check(schema, '{"pattern": "(?=x)"}').valid
