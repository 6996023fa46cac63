"""Building a run's trace from its events as they pass, the way `RunWatch` builds its record.

Each Iteration opens a model call, whose step is the iteration's number; the tool calls,
retries and errors of that step are its children. A model call ends where its stream did
(`ModelAnswered`, which gives its node the call's tokens and stop reason), or else at its
first tool call, at the next iteration, or at the end of the run. Edges say how one
thing led to the next: a step to the next step, a model call to the tools it asked for
(`success`, or `error` when the tool failed), a failed attempt to its retry (`retry`).
The work per event is a few attribute writes, and the nodes are capped.

A node says why as well as what: a tool call keeps the start of its result, or its error,
and the files it sent the person (`files`: name, type, size, hash), a `delegate` call the run
of its helper (`helper_run`, whose own trace it is); a validation the start of the answer it
judged and its compliance score. Each text is cut to a preview before it
is kept and has the deployment's secrets taken out, so a trace is bounded whatever a tool
returns and shows an operator nothing the logs would not. Beside the nodes, the trace counts
where the run's time went (`bot.trace.states`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from bot.trace.states import StateClock
from bot.vocabulary import events as ev
from bot.vocabulary.helpers import TOOL as HELPER_TOOL
from bot.vocabulary.trace import EdgeType, Status, Trace, TraceEdge, TraceNode

MAX_NODES = 500
PREVIEW = 200  # characters of a tool call's arguments kept in its node
TEXT_PREVIEW = 500  # characters of a result, an error or an answer kept in its node
REDACTED = "[redacted]"
HELPER_RUN = re.compile(r"\brun ([0-9a-f]{32})\b")  # as a `delegate` result names its helper's


def cut(text: str, limit: int, secrets: Sequence[str] = ()) -> str:
    """At most `limit` characters of `text`, without the secrets. Only a window a little
    longer than the limit is read, so a result of many megabytes costs no more than a short
    one, and a secret that straddles the cut is still taken out whole."""
    window = text[: limit + max(map(len, secrets), default=0)]
    for secret in secrets:
        window = window.replace(secret, REDACTED)
    return window if len(window) <= limit and len(text) <= limit else window[: limit - 1] + "…"


def preview(arguments: dict[str, Any], secrets: Sequence[str] = ()) -> str:
    """The arguments as a short, single-line text: enough to recognise the call, never a
    whole file or program."""
    return cut(", ".join(f"{key}={value!r}" for key, value in arguments.items()), PREVIEW, secrets)


class TraceBuilder:
    """`secrets` are the deployment's (`bot.telemetry.logs.secrets_of`), taken out of every text a
    node keeps."""

    def __init__(self, clock: Callable[[], float] = time.time, secrets: Sequence[str] = ()) -> None:
        self.clock = clock
        self.secrets = tuple(secrets)
        self.trace = Trace()
        self.states = StateClock(self.trace)  # where the run's time went
        self._model: TraceNode | None = None  # the model call of the current step
        self._last_step: TraceNode | None = None
        self._tools: dict[str, TraceNode] = {}
        self._plan: TraceNode | None = None  # the plan as last revised
        self._step = 0

    @classmethod
    def going_on(
        cls, earlier: Trace, clock: Callable[[], float] = time.time, secrets: Sequence[str] = ()
    ) -> TraceBuilder:
        """A builder that goes on from the trace a dead worker saved with its turn. A tool
        call it left running ends with what the resumed run reports of it (interrupted, or
        run again); anything else it left running was cancelled; the next step follows its
        last."""
        builder = cls(clock, secrets)
        builder.trace = earlier.model_copy(deep=True)
        builder.states = StateClock(builder.trace)
        now = clock()
        for node in builder.trace.nodes:
            call = node.detail.get("call")
            if node.ended_at is None and node.kind == "tool_call" and isinstance(call, str):
                builder._tools[call] = node
            elif node.ended_at is None:
                node.ended_at, node.status = now, "cancelled"
        calls = [node for node in builder.trace.nodes if node.kind == "model_call"]
        if calls:
            builder._model = builder._last_step = calls[-1]
            builder._step = calls[-1].step
        return builder

    def see(self, event: ev.AgentEvent) -> None:
        now = self.clock()
        self.states.see(event, now)
        if isinstance(event, ev.Iteration):
            self._next_step(event.number, event.model, now)
        elif isinstance(event, ev.ModelAnswered):
            self._answered(event, now)
        elif isinstance(event, ev.FailedOver | ev.FileSent):
            self._aside(event, now)
        elif isinstance(event, ev.ToolCallStart):
            self._end_model(now)
            self._tool_started(event, now)
        elif isinstance(event, ev.ToolCallResult):
            self._tool_ended(event, now)
        elif isinstance(event, ev.Retrying):
            error = self._text(event.error)
            detail = {"attempt": event.attempt, "delay_s": event.delay, "error": error}
            self._child("retry", "retry", now, "error", detail, edge="retry")
        elif isinstance(event, ev.Error):
            detail = {"message": self._text(event.cause or event.message)}
            self._child("error", "error", now, "error", detail, edge="error")
        elif isinstance(event, ev.Compacted):
            detail = {"tokens_before": event.tokens_before, "tokens_after": event.tokens_after}
            self._child("compaction", "compaction", now, "ok", detail)
        elif isinstance(event, ev.ConfirmationRequired):
            names = [call.name for call in event.calls]
            self._child("confirmation", "confirmation", now, "waiting", {"tools": names})
        elif isinstance(event, ev.Validated):
            self._validated(event, now)
        elif isinstance(event, ev.PlanUpdated):
            self._planned(event, now)
        elif isinstance(event, ev.Completed):
            self._finish(event, now)

    def _next_step(self, number: int, model: str, now: float) -> None:
        self._end_model(now)
        self._step = number
        detail = {"model": model} if model else None
        node = self._add("model_call", "model", now, status="ok", detail=detail, ended=None)
        if node is not None and self._last_step is not None:
            self._edge(self._last_step, node, "success")
        self._model = node
        self._last_step = node or self._last_step

    def _aside(self, event: ev.FailedOver | ev.FileSent, now: float) -> None:
        """What adds to a node already there: a call's new model, a tool call's file."""
        if isinstance(event, ev.FailedOver):
            self._failed_over(event, now)
        else:
            self._file_sent(event)

    def _answered(self, event: ev.ModelAnswered, now: float) -> None:
        """The call ended: its node keeps the model that made it, its tokens and its stop
        reason (what an exported `chat` span reports)."""
        node = self._model
        if node is None or node.ended_at is not None:
            return
        node.ended_at = now
        usage = event.usage
        node.detail["model"] = event.model or node.detail.get("model", "")
        node.detail["usage"] = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        }
        if event.finish_reason is not None:
            node.detail["finish_reason"] = event.finish_reason

    def _failed_over(self, event: ev.FailedOver, now: float) -> None:
        """The call's model gave up: a node says why, and the call names its new model."""
        detail = {"failed": event.failed, "model": event.model, "error": self._text(event.error)}
        self._child(
            "failover", f"{event.failed} → {event.model}", now, "error", detail, edge="retry"
        )
        if self._model is not None:
            self._model.detail["model"] = event.model

    def _tool_started(self, event: ev.ToolCallStart, now: float) -> None:
        if (earlier := self._tools.get(event.call_id)) is not None:  # run again on a resume
            earlier.ended_at, earlier.status = now, "cancelled"
        detail = {"arguments": preview(event.arguments, self.secrets), "call": event.call_id}
        node = self._add("tool_call", event.name, now, detail=detail, ended=None)
        if node is not None:
            self._tools[event.call_id] = node
            if self._model is not None:
                node.parent = self._model.id

    def _tool_ended(self, event: ev.ToolCallResult, now: float) -> None:
        node = self._tools.pop(event.call_id, None)
        if node is None:
            return
        node.ended_at = now
        node.status = "error" if event.is_error else "ok"
        node.detail["cached"] = event.cached
        node.detail["error" if event.is_error else "result"] = self._text(event.content)
        if node.name == HELPER_TOOL and (named := HELPER_RUN.search(event.content)):
            node.detail["helper_run"] = named[1]  # the helper's own trace: /api/traces/{id}
        if self._model is not None:
            self._edge(self._model, node, "error" if event.is_error else "success")

    def _file_sent(self, event: ev.FileSent) -> None:
        """The file goes on the node of the call that sent it (the latest, after a resume)."""
        for node in reversed(self.trace.nodes):
            if node.kind == "tool_call" and node.detail.get("call") == event.call_id:
                ref = event.file
                sent = {"name": ref.name, "media_type": ref.media_type, "size": ref.size,
                        "sha256": ref.sha256}  # fmt: skip
                node.detail.setdefault("files", []).append(sent)
                return

    def _child(
        self, kind: str, name: str, now: float, status: Status, detail: dict[str, Any],
        edge: EdgeType = "success",
    ) -> None:  # fmt: skip
        node = self._add(kind, name, now, status=status, detail=detail, ended=now)
        if node is not None and self._model is not None:
            node.parent = self._model.id
            self._edge(self._model, node, edge)

    def _validated(self, event: ev.Validated, now: float) -> None:
        detail = {
            "attempt": event.attempt,
            "errors": event.errors,
            "compliance": event.compliance,
            "answer": self._text(event.answer),
        }
        status: Status = "ok" if event.valid else "error"
        edge: EdgeType = "success" if event.valid else "error"
        self._child("validation", "output schema", now, status, detail, edge=edge)
        if event.repairing:
            self._child("repair", "repair", now, "ok", {"attempt": event.attempt}, edge="retry")

    def _text(self, text: str) -> str:
        return cut(text, TEXT_PREVIEW, self.secrets)

    def _planned(self, event: ev.PlanUpdated, now: float) -> None:
        """A plan node per revision, showing where each of its steps stands."""
        steps = [{"id": s.id, "title": s.title, "status": s.status} for s in event.steps]
        if self._plan is not None and self._plan.detail.get("revision") == event.revision:
            self._plan.detail["steps"] = steps
            self._plan.ended_at = now
            return
        name = "plan" if event.revision == 0 else f"plan revision {event.revision}"
        detail = {"revision": event.revision, "steps": steps}
        self._plan = self._add("plan", name, now, detail=detail, ended=now)
        if self._plan is not None and self._model is not None:
            self._plan.parent = self._model.id
            self._edge(self._model, self._plan, "success" if event.revision == 0 else "retry")

    def _end_model(self, now: float) -> None:
        if self._model is not None and self._model.ended_at is None:
            self._model.ended_at = now

    def _finish(self, done: ev.Completed, now: float) -> None:
        self._end_model(now)
        self.trace.output = done.output
        waiting = done.finish_reason == ev.FinishReason.AWAITING_CONFIRMATION
        for node in self._tools.values():  # waiting for a person, or cut off
            node.ended_at, node.status = now, "waiting" if waiting else "cancelled"
        self._tools.clear()
        stopped = done.finish_reason in (ev.FinishReason.CANCELLED, ev.FinishReason.TIMED_OUT)
        if stopped and self._last_step is not None:
            self._last_step.status = "cancelled"
        if done.finish_reason == ev.FinishReason.ERROR and self._model is not None:
            self._model.status = "error"

    def _add(
        self, kind: str, name: str, now: float, *, status: Status = "ok",
        detail: dict[str, Any] | None = None, ended: float | None,
    ) -> TraceNode | None:  # fmt: skip
        trace = self.trace
        if len(trace.nodes) >= MAX_NODES:
            trace.dropped += 1
            return None
        node = TraceNode(
            id=len(trace.nodes) + 1, step=self._step, kind=kind, name=name, status=status,
            started_at=now, ended_at=ended, detail=detail or {},
        )  # fmt: skip
        trace.nodes.append(node)
        return node

    def _edge(self, source: TraceNode, target: TraceNode, kind: EdgeType) -> None:
        self.trace.edges.append(TraceEdge(source=source.id, target=target.id, type=kind))
