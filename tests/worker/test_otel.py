"""The worker's export of runs over OTLP/HTTP, against a local collector: spans arrive whole
with their resource and the operator's headers, never hold the caller up, and a collector
that is down is said once in the log, not per batch."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import pytest

from bot.config.otel import otel_config
from bot.trace.builder import TraceBuilder
from bot.vocabulary import events as ev
from bot.vocabulary.runs import RunRecord, SessionInfo
from bot.vocabulary.usage import Usage
from tests.fakes.otlp import FakeCollector
from tests.support.redis_server import free_port
from tests.support.waiting import until
from worker.otel import FLUSH_WITHIN_MS, RunExporter, run_exporter

KEY = "otlp-api-key-123456789"


def record(n: int) -> RunRecord:
    builder = TraceBuilder()
    for event in (
        ev.Iteration(number=1, model="claude-test"),
        ev.ModelAnswered(model="claude-test", usage=Usage(10, 2), finish_reason="end_turn"),
        ev.Completed(finish_reason="end_turn", iterations=1, usage=Usage(10, 2)),
    ):
        builder.see(event)
    now = time.time()
    return RunRecord(
        where=SessionInfo(f"http:s{n}", "http"), envelope_ids=[f"m{n}"], trigger="message",
        sender="ann", model="claude-test", finish_reason="end_turn", iterations=1,
        usage=Usage(10, 2), started_at=now - 1, finished_at=now, trace=builder.trace,
    )  # fmt: skip


def exporter_to(url: str, **env: str) -> RunExporter:
    config = otel_config({"OTEL_EXPORTER_OTLP_ENDPOINT": url, **env})
    assert config is not None
    return run_exporter(config, [KEY])


async def test_spans_reach_the_collector_with_their_resource_and_headers() -> None:
    collector = FakeCollector(required_headers={"api-key": KEY})
    await collector.start()
    exporter = exporter_to(
        collector.base_url,
        OTEL_EXPORTER_OTLP_HEADERS=f"api-key={KEY}",
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test",
    )
    try:
        exporter.export(record(1), "completed", False)
        await asyncio.to_thread(exporter.processor.force_flush, 10_000)
        await until(lambda: len(collector.spans) == 2, "the run's two spans")
    finally:
        await asyncio.to_thread(exporter.shutdown)
        await collector.stop()
    root, chat = collector.spans
    assert root.name == "invoke_agent parley" and chat.name == "chat claude-test"
    assert chat.parent_span_id == root.span_id and root.parent_span_id == ""
    assert root.resource["service.name"] == "parley"
    assert root.resource["deployment.environment"] == "test"
    assert chat.attributes["gen_ai.usage.output_tokens"] == 2
    assert collector.refused == []


async def test_the_collector_refuses_what_a_collector_refuses() -> None:
    collector = FakeCollector(required_headers={"api-key": KEY})
    await collector.start()
    try:
        async with httpx.AsyncClient(base_url=collector.base_url) as client:
            url, key = "/v1/traces", {"api-key": KEY}
            assert (await client.post(url, content=b"{}")).status_code == 401
            json = {"Content-Type": "application/json", **key}
            assert (await client.post(url, content=b"{}", headers=json)).status_code == 415
            proto = {"Content-Type": "application/x-protobuf", **key}
            assert (await client.post(url, content=b"\xff\xff", headers=proto)).status_code == 400
    finally:
        await collector.stop()
    assert collector.refused == [401, 415, 400] and collector.spans == []


async def test_a_collector_that_is_down_costs_nothing_and_is_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exporter = exporter_to(f"http://127.0.0.1:{free_port()}", OTEL_EXPORTER_OTLP_TIMEOUT="500")
    caplog.set_level(logging.DEBUG)
    try:
        for n in range(3):
            started = time.monotonic()
            exporter.export(record(n), "completed", False)
            # queued, never sent by the caller: a send would wait out the refusals' retries,
            # the 500 ms the exporter is given
            assert time.monotonic() - started < 0.5
            await asyncio.to_thread(exporter.processor.force_flush, 5_000)
    finally:
        await asyncio.to_thread(exporter.shutdown)
    said = [r for r in caplog.records if "could not export" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert KEY not in caplog.text
    assert not [r for r in caplog.records if r.name.startswith("opentelemetry")]


async def test_a_worker_stopping_waits_for_a_collector_that_is_down_a_bounded_time() -> None:
    exporter = exporter_to(f"http://127.0.0.1:{free_port()}")  # the default 10 s per export
    for n in range(3):
        exporter.export(record(n), "completed", False)
    started = time.monotonic()
    await asyncio.to_thread(exporter.shutdown)
    assert time.monotonic() - started < FLUSH_WITHIN_MS / 1000 + 2
