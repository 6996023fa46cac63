"""The shape of a trace: nodes (a model call, a tool call, a retry, …) with parent links,
step numbers and times, and typed edges between them.

`kind` is a string, so new kinds need no migration: `model_call`, `tool_call`, `retry`,
`error`, `compaction`, `confirmation`, `plan` (a `plan_execute` run's plan, one node per
revision), `validation` (the answer checked against its output schema) and `repair` (the
answer asked for again).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Status = Literal["ok", "error", "cancelled", "waiting"]
EdgeType = Literal["success", "error", "retry"]


class TraceNode(BaseModel):
    id: int
    parent: int | None = None
    step: int
    kind: str
    name: str
    status: Status = "ok"
    started_at: float
    ended_at: float | None = None
    detail: dict[str, Any] = Field(default_factory=dict)

    @property
    def latency_ms(self) -> int:
        return round(((self.ended_at or self.started_at) - self.started_at) * 1000)


class TraceEdge(BaseModel):
    source: int
    target: int
    type: EdgeType = "success"


# Where a run's time went (`Trace.states`): waiting for the model's first token (or all of a
# call that streamed no text), streaming its text, running tools, and waiting for a person's
# decision (before the run a decision resumed); the rest (compaction, planning's bookkeeping,
# the loop's own work) is `other`.
STATES = ("calling", "streaming", "tools", "person", "other")


class Trace(BaseModel):
    """`dropped` counts the nodes past the cap a runaway run would otherwise grow by; `states`
    the milliseconds spent in each of `STATES` (those it spent time in)."""

    nodes: list[TraceNode] = Field(default_factory=list)
    edges: list[TraceEdge] = Field(default_factory=list)
    dropped: int = 0
    states: dict[str, int] = Field(default_factory=dict)
    output: Any = None  # the answer's JSON, where the run had an output schema it matched
