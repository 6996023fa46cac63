"""A worker given its secrets only as files (`ANTHROPIC_API_KEY_FILE`, `REDIS_URL_FILE`, as
Docker or Kubernetes secrets are mounted) runs a turn with the key it read, and the key shows
nowhere: not in its log (at the default level, and at DEBUG, where the SDKs say the most:
unredacted, that log holds the key many times) and not in the run's trace, though the model
put it in a tool call's arguments and in its answer."""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm import ANTHROPIC_KEY, Reply, ToolCallSpec
from tests.integration.http.test_traces import recorded
from tests.support.stack import Stack, send, texts

REDACTED = "[redacted]"


def only_as_files(stack: Stack) -> None:
    """The worker's environment with the model's key and the Redis URL in files (mode 0400,
    as Kubernetes mounts them), not in variables."""
    for variable in ("ANTHROPIC_API_KEY", "REDIS_URL"):
        secret = stack.tmp / "secrets" / variable.lower()
        secret.parent.mkdir(exist_ok=True)
        secret.write_text(stack.env.pop(variable) + "\n")
        secret.chmod(0o400)
        stack.env[f"{variable}_FILE"] = str(secret)


@pytest.mark.e2e
@pytest.mark.parametrize("level", ["WARNING", "DEBUG"], ids=["default-log-level", "debug"])
async def test_a_key_from_a_file_is_used_and_never_shown(stack: Stack, level: str) -> None:
    only_as_files(stack)
    if level == "WARNING":
        del stack.env["PARLEY_LOG_LEVEL"]  # the default
    else:
        stack.env["PARLEY_LOG_LEVEL"] = level
    await stack.start_worker_process()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": f"len('{ANTHROPIC_KEY}')"})]),
        Reply(text=f"The key I was given is {ANTHROPIC_KEY}."),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "what key were you given?")
        run = await recorded(client, session, 1)
        trace = (await client.get(f"/api/traces/{run}")).json()
    # the fake model answers only a request with the right key: the turn ran with the file's
    assert ANTHROPIC_KEY in texts(events)
    assert len(stack.fake.requests) == 2
    assert trace["run"]["status"] == "completed"
    shown = json.dumps(trace)
    assert ANTHROPIC_KEY not in shown
    assert REDACTED in shown  # it was there, and was taken out
    await stack.stop()
    log = (stack.tmp / "worker-0.log").read_text()
    assert ANTHROPIC_KEY not in log
    if level == "DEBUG":
        assert "anthropic" in log.lower()  # the SDK's requests were logged, without the key
