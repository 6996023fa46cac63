"""A `parley worker` process with `OTEL_EXPORTER_OTLP_ENDPOINT` set exports each run as GenAI
spans to a collector: a run with a tool call arrives as one trace (the run, its two model
calls with their tokens, the tool call between them), a run that failed says so, no secret
is in any attribute, what is queued goes out when the worker stops, and a collector that is
down costs no reply."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from tests.fakes.llm import ANTHROPIC_KEY, Fail, Reply, ToolCallSpec
from tests.fakes.otlp import FakeCollector, ReceivedSpan
from tests.integration.http.test_traces import recorded
from tests.support.helper_brains import one_helper
from tests.support.redis_server import free_port
from tests.support.stack import Stack, send, texts
from tests.support.waiting import until

HEADER_KEY = "collector-key-5f0e4a439a57"
SECOND = 1_000_000_000


@pytest.fixture
async def collector() -> AsyncIterator[FakeCollector]:
    fake = FakeCollector(required_headers={"authorization": f"Bearer {HEADER_KEY}"})
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


def exporting_to(stack: Stack, collector: FakeCollector, **more: str) -> None:
    stack.env |= {
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.base_url,
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{HEADER_KEY}",
        **more,
    }


def secrets_in(spans: list[ReceivedSpan]) -> list[str]:
    shown = json.dumps([[s.attributes, s.status_message, s.events, s.resource] for s in spans])
    return [secret for secret in (ANTHROPIC_KEY, HEADER_KEY) if secret in shown]


@pytest.mark.e2e
async def test_a_run_with_a_tool_call_arrives_as_one_trace(
    stack: Stack, collector: FakeCollector
) -> None:
    exporting_to(stack, collector)  # and every other setting its default
    await stack.start_worker_process()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6 * 7"})],
              output_tokens=17),
        Reply(text=f"It is 40 characters long: {ANTHROPIC_KEY}", output_tokens=9),
    )  # fmt: skip
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "how long is your key?")
        run = await recorded(client, session, 1)
        shown = (await client.get(f"/api/traces/{run}")).json()["run"]
    assert "characters long" in texts(events)
    await until(lambda: len(collector.of_trace(run)) == 4, lambda: f"4 spans: {collector.spans}")
    root, *children = sorted(
        collector.of_trace(run), key=lambda s: (s.parent_span_id != "", s.start_ns)
    )
    assert root.name == "invoke_agent parley" and root.parent_span_id == ""
    assert [s.name for s in children] == [
        "chat claude-test", "execute_tool calculator", "chat claude-test",
    ]  # fmt: skip
    assert all(s.parent_span_id == root.span_id for s in children)
    attributes = root.attributes
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "parley"
    assert attributes["gen_ai.conversation.id"] == f"http:{session}"  # the session's key
    assert attributes["parley.run.id"] == run and attributes["parley.run.outcome"] == "completed"
    assert root.status != "ERROR" and root.resource["service.name"] == "parley"
    # each model call's tokens as the model's API reported them
    first, tool, second = children
    for span, request, output in zip((first, second), stack.fake.requests, (17, 9), strict=True):
        usage = request.usage
        assert usage is not None
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.provider.name"] == "anthropic"
        assert span.attributes["gen_ai.request.model"] == "claude-test"
        prompt = usage.input_tokens + usage.cache_read + usage.cache_write
        assert span.attributes["gen_ai.usage.input_tokens"] == prompt
        assert span.attributes["gen_ai.usage.output_tokens"] == output
    assert first.attributes["gen_ai.response.finish_reasons"] == ["tool_use"]
    assert second.attributes["gen_ai.response.finish_reasons"] == ["end_turn"]
    assert tool.attributes["gen_ai.tool.name"] == "calculator"
    assert tool.attributes["gen_ai.tool.call.id"].startswith("toolu_")
    assert tool.status != "ERROR"
    # the times the trace recorded, in the order they happened, inside the run's own
    assert first.start_ns <= first.end_ns <= tool.start_ns <= tool.end_ns <= second.start_ns
    started, finished = (datetime.fromisoformat(shown[f"{e}_at"]).timestamp() * SECOND
                         for e in ("started", "finished"))  # fmt: skip
    assert started - SECOND <= root.start_ns <= first.start_ns
    assert second.end_ns <= root.end_ns <= finished + SECOND
    # content is not exported by default, and no secret is anywhere
    assert not any("gen_ai.tool.call.arguments" in s.attributes for s in children)
    assert secrets_in(collector.spans) == []
    assert collector.refused == []


@pytest.mark.e2e
async def test_a_failed_run_is_an_error_and_what_is_queued_goes_out_when_the_worker_stops(
    stack: Stack, collector: FakeCollector
) -> None:
    # nothing is sent on a timer: only the worker's stop sends the spans
    exporting_to(stack, collector, OTEL_BSP_SCHEDULE_DELAY="600000",
                 OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true")  # fmt: skip
    worker = await stack.start_worker_process()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": f"len('{ANTHROPIC_KEY}')"})]),
        Fail(400, "invalid_request_error", "this request is refused"),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "how long is your key?")

        async def written() -> bool:  # the run is exported as its record is written
            return bool((await client.get(f"/api/sessions/{session}")).json().get("runs") == 1)

        await until(written, "the failed run recorded")
    assert any(event["type"] == "error" for event in events)
    assert collector.spans == []
    worker.send_signal(signal.SIGTERM)
    async with asyncio.timeout(60):
        assert await worker.wait() == 0
    (root,) = [s for s in collector.spans if s.parent_span_id == ""]
    assert root.attributes["gen_ai.conversation.id"] == f"http:{session}"
    spans = collector.of_trace(root.trace_id)
    assert len(spans) == 4, spans
    assert root.status == "ERROR" and root.attributes["parley.run.outcome"] == "failed"
    assert "this request is refused" in root.status_message
    failed_call = max(collector.named("chat claude-test"), key=lambda s: s.start_ns)
    assert failed_call.status == "ERROR"
    (tool,) = collector.named("execute_tool calculator")
    assert "[redacted]" in tool.attributes["gen_ai.tool.call.arguments"]  # content, asked for
    assert secrets_in(collector.spans) == []


@pytest.mark.e2e
async def test_a_collector_that_is_down_costs_no_reply_and_is_said_once(stack: Stack) -> None:
    stack.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{free_port()}"  # nobody
    stack.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "500"  # each batch given up on soon
    worker = await stack.start_worker_process()
    stack.fake.enqueue(Reply(text="First."), Reply(text="Second."))
    async with stack.client() as client:
        session = await stack.session(client)
        first = texts(await send(client, session, "one"))
        second = texts(await send(client, session, "two"))
        await recorded(client, session, 2)
    assert (first, second) == ("First.", "Second.")
    worker.send_signal(signal.SIGTERM)  # what is still queued is tried once more, in vain
    async with asyncio.timeout(60):
        assert await worker.wait() == 0
    log = (stack.tmp / "worker-0.log").read_text()
    assert log.count("could not export runs' traces") == 1, log


@pytest.mark.e2e
async def test_a_helpers_run_nests_under_the_delegate_call_that_started_it(
    stack: Stack, collector: FakeCollector
) -> None:
    exporting_to(stack, collector)
    await stack.start_worker_process()
    asked = "please ask a helper"
    stack.fake.responder = one_helper(
        asked, "multiply six by seven", ToolCallSpec("calculator", {"expression": "6 * 7"})
    )
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, asked)
        run = await recorded(client, session, 1)
    assert "helper: 42" in texts(events)
    await until(lambda: len(collector.of_trace(run)) == 8, lambda: f"8 spans: {collector.spans}")
    spans = collector.of_trace(run)
    roots = [s for s in spans if s.name == "invoke_agent parley"]
    (parent,) = [s for s in roots if s.parent_span_id == ""]
    (delegate,) = [s for s in spans if s.name == "execute_tool delegate"]
    (helper,) = [s for s in roots if s.parent_span_id == delegate.span_id]
    assert delegate.parent_span_id == parent.span_id
    assert helper.attributes["parley.parent.run.id"] == run
    assert helper.attributes["gen_ai.conversation.id"].startswith(f"http:{session}")
    assert delegate.attributes["parley.helper.run.id"] == helper.attributes["parley.run.id"]
    (calculator,) = [s for s in spans if s.name == "execute_tool calculator"]
    helper_calls = [
        s for s in spans if s.name == "chat claude-test" and s.parent_span_id == helper.span_id
    ]
    assert calculator.parent_span_id == helper.span_id and len(helper_calls) == 2
    assert delegate.start_ns <= helper.start_ns <= helper.end_ns <= delegate.end_ns
