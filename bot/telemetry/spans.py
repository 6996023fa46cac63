"""A run's trace as OpenTelemetry spans, named and described by the GenAI semantic conventions,
so the tools teams already run (Jaeger, Tempo, Honeycomb, Langfuse, …) show Parley's runs.

Each run is one OpenTelemetry trace whose id is the run's own id (`parley.run.id`, the id
`/admin` and `/api/traces/{id}` know it by): a root `invoke_agent parley` span for the run,
a `chat {model}` span for each model call and an `execute_tool {name}` span for each tool
call, both children of the root, with the times the trace recorded. What happened inside a
model call (a retry, a fail-over, a compaction, a validation) is an event on its span.

A helper's run ends, and is exported, before its parent's: so its root names its parent
(`parley.parent.run.id`) and nests under the parent's `delegate` span by ids both sides can
derive, the parent's run id (which the helper's envelope carries) and the call's id (which
the helper's session key holds). The `delegate` span also links to the helper's root.

Span ids are derived from the run's id and the node's (a tool call's: its call's id), so a
run exported twice (a worker that died after exporting, say) gives the same spans. What
people wrote and what tools returned stays out unless the operator asks for it (`content`),
and then only as the trace keeps it: a bounded preview with the deployment's secrets taken
out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from bot.trace.builder import TEXT_PREVIEW, cut
from bot.vocabulary.chats import HELPER_MARK as MARK
from bot.vocabulary.helpers import call_part
from bot.vocabulary.runs import RunRecord
from bot.vocabulary.trace import TraceNode

AGENT = "parley"
SCOPE = InstrumentationScope("parley")
Attributes = dict[str, str | int | float | bool | Sequence[str]]
# The node details an event on a model call's span keeps: numbers and names, never content.
EVENT_DETAILS = ("attempt", "delay_s", "tokens_before", "tokens_after", "failed", "model",
                 "revision", "tools")  # fmt: skip


@dataclass(frozen=True)
class SpanOptions:
    """How runs become spans. `provider_of` names a model's provider as the conventions
    spell it (`anthropic`, `openai`); `secrets` are taken out of any text exported."""

    resource: Resource
    provider_of: Callable[[str], str]
    content: bool = False
    secrets: Sequence[str] = ()


def run_spans(
    record: RunRecord, outcome: str, failed: bool, options: SpanOptions
) -> list[ReadableSpan]:
    """The spans of `record`, root first. `outcome` is the run's status as the record keeps
    it (`completed`, `failed`, `timed_out`, …); `failed`: the run ended without its answer,
    which gives the root an error status."""
    mapper = _Mapper(record, options)
    root = mapper.root(outcome, failed)
    children = [
        mapper.node(node) for node in _nodes(record) if node.kind in ("model_call", "tool_call")
    ]
    return [root, *children]


def _nodes(record: RunRecord) -> list[TraceNode]:
    return record.trace.nodes if record.trace is not None else []


def span_id(run: str, node: int | str) -> int:
    """A span's id: eight bytes of a hash of its run and node (0, the run's root; a tool
    call's, `call:` and its id as a helper's session key holds it), never 0."""
    digest = hashlib.sha256(f"{run}/{node}".encode()).digest()
    return int.from_bytes(digest[:8], "big") or 1


def call_node(call_id: str) -> str:
    """The node of a tool call's span: what a helper it started can name from its own session
    key (`bot.vocabulary.helpers.helper_session`), without its parent's trace."""
    return f"call:{call_part(call_id)}"


def trace_id(run: str) -> int:
    """The run's OpenTelemetry trace id: its own id (32 hex digits), never 0."""
    return int(run, 16) or 1


def _ns(seconds: float) -> int:
    return round(seconds * 1_000_000_000)


class _Mapper:
    def __init__(self, record: RunRecord, options: SpanOptions) -> None:
        self.record = record
        self.options = options
        self.run = record.id
        # A helper's run is part of its parent's trace, under the `delegate` call that
        # started it; any other run is a trace of its own.
        self.parent: SpanContext | None = None
        self.trace = trace_id(self.run)
        if record.parent_run and MARK in record.where.session:
            self.trace = trace_id(record.parent_run)
            delegate = "call:" + record.where.session.rsplit(MARK, 1)[1]
            self.parent = SpanContext(self.trace, span_id(record.parent_run, delegate), False,
                                      TraceFlags(TraceFlags.SAMPLED))  # fmt: skip
        self.events: dict[int, list[TraceNode]] = {}
        self.calls: dict[str, int] = {}  # each call's last node (a resumed run ran it again)
        for node in _nodes(record):
            if node.kind == "tool_call" and isinstance(call := node.detail.get("call"), str):
                self.calls[call] = node.id
            if node.kind not in ("model_call", "tool_call"):
                self.events.setdefault(node.parent or 0, []).append(node)

    def context(self, node: int | str) -> SpanContext:
        return SpanContext(
            self.trace, span_id(self.run, node), False, TraceFlags(TraceFlags.SAMPLED)
        )

    def node_id(self, node: TraceNode) -> int | str:
        """A tool call's span is named by its call (a helper finds it so), others by node."""
        call = node.detail.get("call")
        if node.kind == "tool_call" and isinstance(call, str) and self.calls[call] == node.id:
            return call_node(call)
        return node.id

    def text(self, value: Any) -> str:
        return cut(str(value), TEXT_PREVIEW, self.options.secrets)

    def span(
        self, name: str, node: int | str, parent: SpanContext | None, times: tuple[float, float],
        attributes: Attributes, status: Status, **more: Any,
    ) -> ReadableSpan:  # fmt: skip
        return ReadableSpan(
            name=name, context=self.context(node), parent=parent, resource=self.options.resource,
            attributes=attributes, kind=more.pop("kind", SpanKind.INTERNAL),
            instrumentation_scope=SCOPE, status=status, start_time=_ns(times[0]),
            end_time=_ns(max(times)), **more,
        )  # fmt: skip

    def root(self, outcome: str, failed: bool) -> ReadableSpan:
        record = self.record
        usage = record.usage
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT,
            "gen_ai.conversation.id": record.where.session,
            "gen_ai.provider.name": self.options.provider_of(record.model),
            "gen_ai.request.model": record.model,
            "gen_ai.usage.input_tokens": usage.prompt_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "parley.run.id": self.run,
            "parley.run.outcome": outcome,
            "parley.run.finish_reason": record.finish_reason,
            "parley.run.trigger": record.trigger,
            "parley.run.iterations": record.iterations,
            "parley.platform": record.where.platform,
        }
        attributes |= _cache(usage.cache_read_tokens, usage.cache_write_tokens)
        if record.trace is not None and record.trace.dropped:
            attributes["parley.trace.dropped_nodes"] = record.trace.dropped
        status = Status(StatusCode.OK)
        if failed:
            why = self.text(record.error) if record.error else outcome
            status = Status(StatusCode.ERROR, why)
            attributes["error.type"] = outcome
        times = (record.started_at, record.finished_at)
        span_events = self.span_events(0)
        if record.parent_run:
            attributes["parley.parent.run.id"] = record.parent_run
        return self.span(f"invoke_agent {AGENT}", 0, self.parent, times, attributes, status,
                         events=span_events)  # fmt: skip

    def node(self, node: TraceNode) -> ReadableSpan:
        times = (node.started_at, node.ended_at or node.started_at)
        if node.kind == "model_call":
            name, attributes, status = self.chat(node)
            kind = SpanKind.CLIENT
        else:
            name, attributes, status = self.tool(node)
            kind = SpanKind.INTERNAL
        attributes["parley.step"] = node.step
        return self.span(name, self.node_id(node), self.context(0), times, attributes, status,
                         kind=kind, events=self.span_events(node.id),
                         links=self.links(node))  # fmt: skip

    def chat(self, node: TraceNode) -> tuple[str, Attributes, Status]:
        detail = node.detail
        model = str(detail.get("model") or self.record.model)
        provider = self.options.provider_of(model)
        attributes: Attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.system": provider,  # the name the conventions used before provider.name
            "gen_ai.request.model": model,
            "gen_ai.conversation.id": self.record.where.session,
        }
        usage = detail.get("usage")
        if isinstance(usage, Mapping):
            read, write = (
                int(usage.get("cache_read_tokens", 0)),
                int(usage.get("cache_write_tokens", 0)),
            )
            attributes["gen_ai.usage.input_tokens"] = (
                int(usage.get("input_tokens", 0)) + read + write
            )
            attributes["gen_ai.usage.output_tokens"] = int(usage.get("output_tokens", 0))
            attributes |= _cache(read, write)
        if finish := detail.get("finish_reason"):  # the model answered (not cut off, not failed)
            attributes["gen_ai.response.model"] = model
            attributes["gen_ai.response.finish_reasons"] = [str(finish)]
        status = Status(StatusCode.UNSET)
        if node.status == "error":
            errors = [
                e.detail.get("message") for e in self.events.get(node.id, []) if e.kind == "error"
            ]
            why = self.text(errors[-1]) if errors and errors[-1] else "the model call failed"
            status = Status(StatusCode.ERROR, why)
            attributes["error.type"] = "provider_error"
        elif node.status == "cancelled":
            attributes["parley.status"] = "cancelled"
        return f"chat {model}", attributes, status

    def tool(self, node: TraceNode) -> tuple[str, Attributes, Status]:
        detail = node.detail
        attributes: Attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": node.name,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": str(detail.get("call", "")),
            "parley.tool.cached": bool(detail.get("cached", False)),
        }
        if self.options.content:
            attributes["gen_ai.tool.call.arguments"] = self.text(detail.get("arguments", ""))
            if "result" in detail:
                attributes["gen_ai.tool.call.result"] = self.text(detail["result"])
        status = Status(StatusCode.UNSET)
        if node.status == "error":
            why = self.text(detail.get("error", "")) if self.options.content else "the tool failed"
            status = Status(StatusCode.ERROR, why)
            attributes["error.type"] = "tool_error"
        elif node.status != "ok":
            attributes["parley.status"] = node.status  # cancelled, or waiting for a person
        if helper := detail.get("helper_run"):
            attributes["parley.helper.run.id"] = str(helper)
        return f"execute_tool {node.name}", attributes, status

    def links(self, node: TraceNode) -> list[Link]:
        """A `delegate` call's link to the root of its helper's run, in this trace."""
        helper = node.detail.get("helper_run")
        if not isinstance(helper, str):
            return []
        try:
            context = SpanContext(self.trace, span_id(helper, 0), False,
                                  TraceFlags(TraceFlags.SAMPLED))  # fmt: skip
        except ValueError:
            return []
        return [Link(context, {"parley.link": "helper_run"})]

    def span_events(self, parent: int) -> list[Event]:
        """What happened inside a span: a retry, a fail-over, a compaction, … with its
        numbers, and its message only where content is exported."""
        found = []
        for node in self.events.get(parent, []):
            attributes: Attributes = {"parley.status": node.status}
            for key in EVENT_DETAILS:
                value = node.detail.get(key)
                if isinstance(value, str | int | float | bool):
                    attributes[f"parley.{key}"] = value
                elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                    attributes[f"parley.{key}"] = list(value)
            for key in ("error", "message"):
                if self.options.content and isinstance(node.detail.get(key), str):
                    attributes[f"parley.{key}"] = self.text(node.detail[key])
            found.append(Event(f"parley.{node.kind}", attributes, _ns(node.started_at)))
        return found


def _cache(read: int, write: int) -> Attributes:
    """The cache's tokens where the provider reported any."""
    found: Attributes = {}
    if read:
        found["gen_ai.usage.cache_read.input_tokens"] = read
    if write:
        found["gen_ai.usage.cache_creation.input_tokens"] = write
    return found
