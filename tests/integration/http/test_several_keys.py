"""Several Anthropic keys in one worker, through the real web app, worker and SDK against the
fake API: a run whose first key is rate limited is answered by the second at once, with no
retry and no fallback model, the key counted by its place; and no key reaches the log."""

from __future__ import annotations

import logging

import pytest

from bot.telemetry import metrics
from tests.fakes.llm import ANTHROPIC_KEY, Reply
from tests.support.stack import Stack

LIMITED = "sk-ant-limited-key-0001"
TWO_KEYS = {"ANTHROPIC_API_KEY": f"{LIMITED},{ANTHROPIC_KEY}", "PARLEY_LOG_LEVEL": "INFO"}


@pytest.mark.parametrize("stack", [TWO_KEYS], indirect=True)
async def test_a_rate_limited_key_hands_the_run_to_the_next_at_once(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    await stack.start_worker()
    stack.fake.limited[LIMITED] = 30
    stack.fake.responder = lambda request: Reply(text="Answered on the second key.")
    retries = metrics.MODEL_RETRIES._value.get()
    limited = metrics.PROVIDER_KEY_CALLS.labels("anthropic", "1", "rate_limited")
    answered = metrics.PROVIDER_KEY_CALLS.labels("anthropic", "2", "ok")
    before = (limited._value.get(), answered._value.get())
    caplog.set_level(logging.DEBUG)
    async with stack.client() as client:
        for _ in range(2):
            run = await client.post("/api/agent/run", json={"task": "Hi"}, timeout=60)
            assert run.status_code == 200, run.text
            assert run.json()["text"] == "Answered on the second key."
    assert stack.fake.keys_used == [LIMITED, ANTHROPIC_KEY, ANTHROPIC_KEY]  # then it rests
    assert metrics.MODEL_RETRIES._value.get() == retries
    assert (limited._value.get(), answered._value.get()) == (before[0] + 1, before[1] + 2)
    assert LIMITED not in caplog.text and ANTHROPIC_KEY not in caplog.text
