"""A trace laid out to be drawn as it is: steps left to right, each model call on top of its
column and what it led to below it, so a browser only places boxes and lines."""

from __future__ import annotations

from typing import Any

COLUMN = 260  # px between steps
ROW = 110  # px between the nodes of a step


def layout(trace: dict[str, Any]) -> dict[str, Any]:
    """`trace` (as stored: nodes, edges, dropped) with an `x` and `y` on every node."""
    rows: dict[int, int] = {}
    placed = []
    for node in sorted(trace.get("nodes", []), key=lambda n: (n["step"], n["id"])):
        row = rows.get(node["step"], 0)
        rows[node["step"]] = row + 1
        started, ended = node["started_at"], node.get("ended_at") or node["started_at"]
        placed.append(
            {
                **node,
                "latency_ms": round((ended - started) * 1000),
                "x": node["step"] * COLUMN,
                "y": row * ROW,
            }
        )
    width = (max(rows) + 1) * COLUMN if rows else 0
    height = max(rows.values(), default=0) * ROW
    return {
        "nodes": placed,
        "edges": trace.get("edges", []),
        "width": width,
        "height": height,
        "dropped": trace.get("dropped", 0),
    }
