"""A local OpenTelemetry collector's OTLP/HTTP traces endpoint, as Parley's exporter meets it.

It decodes each `ExportTraceServiceRequest` with the `opentelemetry-proto` messages and
answers as a collector does: 200 with an `ExportTraceServiceResponse` for protobuf it could
read, 415 for another content type, 400 with a `google.rpc.Status` for a body that is no
such request, 401 without the headers it was told to require. Every span it took is kept,
flattened (`ReceivedSpan`), with the resource it came from and the request's headers, so a
test can check names, links, attributes and times as a tracing backend would show them.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from google.protobuf.message import DecodeError
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

PROTOBUF = "application/x-protobuf"
STATUS_CODES = {0: "UNSET", 1: "OK", 2: "ERROR"}


def value_of(value: AnyValue) -> Any:
    """An attribute's value as Python has it."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return getattr(value, kind) if kind else None


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


@dataclass
class ReceivedSpan:
    """A span as the collector decoded it; ids in hex, as backends show them."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status: str
    status_message: str
    events: list[tuple[str, dict[str, Any]]]
    links: list[tuple[str, str]]  # (trace id, span id)
    resource: dict[str, Any]
    scope: str


@dataclass
class FakeCollector:
    """`required_headers`: what a request must carry (an API key, say), else 401."""

    required_headers: dict[str, str] = field(default_factory=dict)
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: list[dict[str, str]] = field(default_factory=list)  # each request's headers
    refused: list[int] = field(default_factory=list)  # the statuses of requests refused
    base_url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self, port: int = 0) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/traces", self._traces)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.base_url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def named(self, name: str) -> list[ReceivedSpan]:
        return [span for span in self.spans if span.name == name]

    def of_trace(self, trace_id: str) -> list[ReceivedSpan]:
        return [span for span in self.spans if span.trace_id == trace_id]

    async def _traces(self, request: web.Request) -> web.Response:
        self.requests.append(dict(request.headers))
        for name, value in self.required_headers.items():
            if request.headers.get(name) != value:
                return self._refuse(401, 16, "missing or wrong credentials")
        if request.content_type != PROTOBUF:
            return self._refuse(415, 3, f"unsupported content type {request.content_type}")
        body = await request.read()
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest()
        try:
            export.ParseFromString(body)
        except DecodeError:
            return self._refuse(400, 3, "the body is not an ExportTraceServiceRequest")
        self._keep(export)
        answer = ExportTraceServiceResponse().SerializeToString()
        return web.Response(body=answer, content_type=PROTOBUF)

    def _refuse(self, status: int, code: int, message: str) -> web.Response:
        self.refused.append(status)
        body = Status(code=code, message=message).SerializeToString()
        return web.Response(status=status, body=body, content_type=PROTOBUF)

    def _keep(self, export: ExportTraceServiceRequest) -> None:
        for resource_spans in export.resource_spans:
            resource = attributes_of(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        ReceivedSpan(
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            name=span.name,
                            kind=span.kind,
                            start_ns=span.start_time_unix_nano,
                            end_ns=span.end_time_unix_nano,
                            attributes=attributes_of(span.attributes),
                            status=STATUS_CODES[span.status.code],
                            status_message=span.status.message,
                            events=[(e.name, attributes_of(e.attributes)) for e in span.events],
                            links=[(lk.trace_id.hex(), lk.span_id.hex()) for lk in span.links],
                            resource=resource,
                            scope=scope_spans.scope.name,
                        )
                    )
