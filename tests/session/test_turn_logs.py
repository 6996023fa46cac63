"""A line logged inside a turn (a tool's failure, logged by the executor) names the session
and the run it belongs to, and never the secrets it quoted."""

from __future__ import annotations

import io
import json
import logging

from bot.telemetry import logs
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.runs import run_id
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply, ToolCallSpec
from tests.support.runner import runner_rig

SESSION = "http:logged"


async def test_a_tools_failure_is_logged_with_its_session_and_run(
    redis_url: str, database_url: str, fake_llm: FakeLLM
) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonLines())
    async with runner_rig(
        redis_url, database_url, fake_llm, tool_modules=["tests.support.tools"]
    ) as rig:
        handler.addFilter(logs.Scrub(logs.secrets_of(rig.runner.deps.settings)))
        fail = ToolCallSpec("fail_loudly", {"detail": f"the key is {ANTHROPIC_KEY}"})
        fake_llm.enqueue(Reply(tool_calls=[fail]), Reply(text="That failed."))
        envelope = Envelope(id="m1", session=SESSION, text="try it", sender=Sender(id="http:a"))
        await rig.mailbox.submit(envelope)
        logging.getLogger().addHandler(handler)
        try:
            await rig.runner.take_turns(SESSION)
        finally:
            logging.getLogger().removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    (failed,) = [line for line in lines if line["message"].startswith("tool fail_loudly failed")]
    assert failed["session"] == SESSION
    assert failed["run"] == failed["trace"] == run_id(SESSION, "m1")
    assert "something broke: the key is [redacted]" in failed["exception"]
    assert ANTHROPIC_KEY not in stream.getvalue()
