"""The worker's OpenTelemetry export: each ended run's trace as OTLP spans
(`bot.telemetry.spans`), sent in the background to the endpoint the operator set.

A turn only hands its spans to the SDK's batch processor, whose own thread sends them: a
collector that is slow, down or refusing costs a reply nothing. A collector that cannot be
reached is said once in the log (and once again when it answers again), not per batch; the
exporter's own warnings, one per failed batch, are kept out. What is still queued is sent
when the worker stops, within a bounded time.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from bot.config.otel import OtelConfig
from bot.config.settings import ConfigError
from bot.llm.registry import resolve_model
from bot.telemetry.spans import SpanOptions, run_spans
from bot.vocabulary.runs import RunRecord

log = logging.getLogger(__name__)
FLUSH_WITHIN_MS = 5_000  # what a stopping worker gives the spans still queued


class ReportedOnce(SpanExporter):
    """An exporter that says in the log when its collector stops taking spans, and when it
    takes them again, rather than once per batch."""

    def __init__(self, inner: SpanExporter, shown_endpoint: str) -> None:
        self.inner = inner
        self.shown = shown_endpoint
        self.failing = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception:  # the exporter's bug must not end the processor's thread
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.FAILURE and not self.failing:
            self.failing = True
            log.warning(
                "could not export runs' traces to %s; spans are dropped until it answers "
                "(said once)", self.shown,
            )  # fmt: skip
        elif result is SpanExportResult.SUCCESS and self.failing:
            self.failing = False
            log.warning("runs' traces are exported to %s again", self.shown)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


class RunExporter:
    """`bot.session.record.RunExport` over OTLP/HTTP: spans queued at once, sent by the
    batch processor's thread."""

    def __init__(self, options: SpanOptions, exporter: SpanExporter) -> None:
        self.options = options
        self.processor = BatchSpanProcessor(exporter)

    def export(self, record: RunRecord, outcome: str, failed: bool) -> None:
        for span in run_spans(record, outcome, failed, self.options):
            self.processor.on_end(span)

    def shutdown(self) -> None:
        """Send what is queued, then stop the processor's thread; for at most
        `FLUSH_WITHIN_MS` (a collector that is down would otherwise hold a stopping worker
        for the exporter's retries, its timeout for each batch): what is not sent by then is
        dropped with the process."""
        stopping = threading.Thread(target=self._flush_and_stop, daemon=True)
        stopping.start()
        stopping.join(FLUSH_WITHIN_MS / 1000)

    def _flush_and_stop(self) -> None:
        self.processor.force_flush(FLUSH_WITHIN_MS)
        self.processor.shutdown()  # type: ignore[no-untyped-call]


def provider_of(model: str) -> str:
    """The model's provider as the GenAI conventions name it (`anthropic`, `openai`)."""
    try:
        return resolve_model(model).provider
    except ConfigError:
        return "unknown"


def resource(config: OtelConfig) -> Resource:
    """The service the spans come from: `OTEL_RESOURCE_ATTRIBUTES`, with the service's name
    (`OTEL_SERVICE_NAME`) and Parley's version over them."""
    version = importlib.metadata.version("parley")
    given = {**config.resource, "service.name": config.service_name}
    return Resource.create({"service.version": version, **given})


def run_exporter(config: OtelConfig, secrets: Sequence[str]) -> RunExporter:
    """The export `config` describes; `secrets` are kept out of any text it sends."""
    # One line per failed batch, and one per span dropped from a full queue (a collector
    # down for long): said once by ReportedOnce instead.
    logging.getLogger("opentelemetry.exporter").setLevel(logging.CRITICAL)
    logging.getLogger("opentelemetry.sdk._shared_internal").setLevel(logging.ERROR)
    options = SpanOptions(resource(config), provider_of, config.capture_content, secrets)
    otlp = OTLPSpanExporter(
        endpoint=config.endpoint, headers=dict(config.headers), timeout=config.timeout_s
    )
    log.info("runs' traces are exported to %s", config.shown_endpoint)
    return RunExporter(options, ReportedOnce(otlp, config.shown_endpoint))
