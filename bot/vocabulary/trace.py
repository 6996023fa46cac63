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


class Trace(BaseModel):
    """`dropped` counts the nodes past the cap a runaway run would otherwise grow by."""

    nodes: list[TraceNode] = Field(default_factory=list)
    edges: list[TraceEdge] = Field(default_factory=list)
    dropped: int = 0
    output: Any = None  # the answer's JSON, where the run had an output schema it matched
