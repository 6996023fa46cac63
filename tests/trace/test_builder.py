"""A trace built from a run's events: its nodes, links, numbers and score."""

from __future__ import annotations

import itertools

from bot.trace.builder import MAX_NODES, TEXT_PREVIEW, TraceBuilder
from bot.trace.graph import COLUMN, ROW, layout
from bot.trace.metrics import measure, score
from bot.vocabulary import events as ev
from bot.vocabulary.files import FileRef
from bot.vocabulary.usage import Usage


def built(*events: ev.AgentEvent) -> TraceBuilder:
    ticks = itertools.count()
    builder = TraceBuilder(clock=lambda: float(next(ticks)))
    for event in events:
        builder.see(event)
    return builder


def done(reason: str = "end_turn") -> ev.Completed:
    return ev.Completed(finish_reason=reason, iterations=2, usage=Usage(10, 5))


def start(call: str, name: str, **arguments: object) -> ev.ToolCallStart:
    return ev.ToolCallStart(call_id=call, name=name, arguments=dict(arguments))


def result(call: str, name: str, error: bool = False) -> ev.ToolCallResult:
    return ev.ToolCallResult(call_id=call, name=name, content="…", is_error=error)


def test_steps_tools_and_retries_are_linked_and_scored() -> None:
    trace = built(
        ev.Iteration(number=1),
        ev.TextDelta(text="Let me look."),
        start("a", "web_search", query="tea"),
        start("b", "web_fetch", url="https://example.com/" + "x" * 300),
        result("a", "web_search"),
        result("b", "web_fetch", error=True),
        ev.Iteration(number=2),
        ev.Retrying(attempt=1, delay=1.0, error="overloaded"),
        ev.TextDelta(text="Here."),
        done(),
    ).trace
    shown = [(n.id, n.parent, n.step, n.kind, n.name, n.status) for n in trace.nodes]
    assert shown == [
        (1, None, 1, "model_call", "model", "ok"),
        (2, 1, 1, "tool_call", "web_search", "ok"),
        (3, 1, 1, "tool_call", "web_fetch", "error"),
        (4, None, 2, "model_call", "model", "ok"),
        (5, 4, 2, "retry", "retry", "error"),
    ]
    edges = [(e.source, e.target, e.type) for e in trace.edges]
    assert edges == [(1, 2, "success"), (1, 3, "error"), (1, 4, "success"), (4, 5, "retry")]
    assert trace.nodes[0].latency_ms == 2000  # from the iteration (0 s) to its first tool call
    assert len(trace.nodes[2].detail["arguments"]) == 200  # a preview, never the whole
    metrics = measure(trace, latency_ms=2_000, tokens=15)
    assert (metrics.steps, metrics.succeeded, metrics.failed, metrics.retries) == (4, 3, 1, 1)
    assert metrics.tool_usage == {"web_search": 1, "web_fetch": 1}
    assert metrics.reliability == 70  # 100 × 3/4 − 5 for the retry


def test_a_stopped_run_and_a_waiting_one_say_so() -> None:
    stopped = built(ev.Iteration(number=1), start("a", "run_python"), done("cancelled")).trace
    assert [n.status for n in stopped.nodes] == ["cancelled", "cancelled"]
    waiting = built(
        ev.Iteration(number=1),
        start("a", "run_python", code="print(1)"),
        ev.ConfirmationRequired(
            calls=[ev.PendingCall(call_id="a", name="run_python", arguments={})]
        ),
        done("awaiting_confirmation"),
    ).trace
    assert [(n.kind, n.status) for n in waiting.nodes] == [
        ("model_call", "ok"), ("tool_call", "waiting"), ("confirmation", "waiting")
    ]  # fmt: skip
    failed = built(ev.Iteration(number=1), ev.Error(message="the provider failed"), done("error"))
    assert [(n.kind, n.status) for n in failed.trace.nodes] == [
        ("model_call", "error"), ("error", "error")
    ]  # fmt: skip
    assert measure(failed.trace, latency_ms=100, tokens=0).reliability == 0


def test_a_runaway_run_is_capped() -> None:
    events: list[ev.AgentEvent] = [ev.Iteration(number=1)]
    for n in range(MAX_NODES + 100):
        events += [start(str(n), "calculator"), result(str(n), "calculator")]
    trace = built(*events, done()).trace
    assert len(trace.nodes) == MAX_NODES and trace.dropped == 101


def test_the_score_weighs_failures_retries_violations_and_latency() -> None:
    assert score(5, 0, 0, 0, 1_000) == 100
    assert score(0, 0, 0, 0, 1_000) == 100  # nothing ended: nothing failed
    assert score(5, 0, 2, 0, 1_000) == 90
    assert score(5, 0, 0, 1, 1_000) == 90
    assert score(5, 0, 0, 0, 90_000) == 90  # halfway from 30 s to 150 s
    assert score(5, 0, 0, 0, 600_000) == 80
    assert score(1, 1, 20, 3, 600_000) == 0
    # a run that ended without its answer (looped, timed out, stopped…) loses half
    assert score(5, 0, 0, 0, 1_000, answered=False) == 50
    assert score(5, 0, 0, 0, 600_000, answered=False) == 30
    assert score(1, 1, 0, 0, 1_000, answered=False) == 0


def test_the_graph_places_steps_in_columns_and_their_nodes_below() -> None:
    trace = built(
        ev.Iteration(number=1), start("a", "calculator"), result("a", "calculator"),
        ev.Iteration(number=2), done(),
    ).trace  # fmt: skip
    drawn = layout(trace.model_dump())
    places = [(n["kind"], n["x"], n["y"]) for n in drawn["nodes"]]
    assert places == [
        ("model_call", COLUMN, 0), ("tool_call", COLUMN, ROW), ("model_call", 2 * COLUMN, 0)
    ]  # fmt: skip
    assert drawn["width"] == 3 * COLUMN and drawn["height"] == 2 * ROW
    assert drawn["edges"] == [e.model_dump() for e in trace.edges]


def test_a_resumed_run_goes_on_from_the_trace_its_dead_worker_saved() -> None:
    before = built(
        ev.Iteration(number=1),
        start("a", "slow_write"),
        start("b", "web_search"),
        start("c", "calculator"),
    )
    before.see(result("c", "calculator"))
    ticks = itertools.count(100)
    after = TraceBuilder.going_on(before.trace, clock=lambda: float(next(ticks)))
    resumed = (
        result("a", "slow_write", error=True),  # had started: reported as interrupted
        start("b", "web_search"),  # read-only: run again
        result("b", "web_search"),
        ev.Iteration(number=2),
        done(),
    )
    for event in resumed:
        after.see(event)
    nodes = [(n.id, n.kind, n.name, n.status, n.parent) for n in after.trace.nodes]
    assert nodes == [
        (1, "model_call", "model", "ok", None),
        (2, "tool_call", "slow_write", "error", 1),
        (3, "tool_call", "web_search", "cancelled", 1),  # cut off by the crash
        (4, "tool_call", "calculator", "ok", 1),
        (5, "tool_call", "web_search", "ok", 1),
        (6, "model_call", "model", "ok", None),
    ]
    edges = [(e.source, e.target, e.type) for e in after.trace.edges]
    assert edges == [(1, 4, "success"), (1, 2, "error"), (1, 5, "success"), (1, 6, "success")]
    assert [n.ended_at for n in before.trace.nodes][1:3] == [None, None]  # the saved one kept


def plan_of(revision: int, *steps: tuple[int, ev.PlanStatus]) -> ev.PlanUpdated:
    shown = [ev.PlanStep(id=n, title=f"step {n}", status=status) for n, status in steps]
    return ev.PlanUpdated(steps=shown, revision=revision)


def test_a_plan_is_one_node_per_revision_kept_up_to_date() -> None:
    trace = built(
        ev.Iteration(number=1),
        plan_of(0, (1, "running"), (2, "pending")),
        ev.Iteration(number=2),
        plan_of(0, (1, "failed"), (2, "pending")),
        ev.Iteration(number=3),
        plan_of(1, (1, "failed"), (2, "running")),
        ev.Validated(attempt=1, valid=False, errors=["at $: not JSON"], repairing=True),
        done(),
    ).trace
    kinds = [(n.kind, n.name, n.status, n.parent) for n in trace.nodes]
    assert kinds == [
        ("model_call", "model", "ok", None),
        ("plan", "plan", "ok", 1),
        ("model_call", "model", "ok", None),
        ("model_call", "model", "ok", None),
        ("plan", "plan revision 1", "ok", 4),
        ("validation", "output schema", "error", 4),
        ("repair", "repair", "ok", 4),
    ]
    first, revised = trace.nodes[1], trace.nodes[4]
    assert [s["status"] for s in first.detail["steps"]] == ["failed", "pending"]  # updated
    assert [s["status"] for s in revised.detail["steps"]] == ["failed", "running"]
    edges = [(e.source, e.target, e.type) for e in trace.edges]
    assert (4, 5, "retry") in edges and (4, 6, "error") in edges and (4, 7, "retry") in edges
    assert measure(trace, latency_ms=1_000, tokens=0).schema_violations == 1


def test_a_node_says_why_in_a_bounded_preview_without_secrets() -> None:
    """A failed call keeps its error, a good one the start of its result, a judged answer
    its text: each bounded, with the deployment's secrets taken out, also across the cut."""
    secret = "sk-test-0123456789abcdef"
    ticks = itertools.count()
    builder = TraceBuilder(clock=lambda: float(next(ticks)), secrets=[secret])
    huge = "row;" * 2_000_000  # eight megabytes of result
    straddling = "x" * (TEXT_PREVIEW - 5) + secret
    for event in (
        ev.Iteration(number=1),
        start("a", "web_fetch", url=f"https://example.com/?key={secret}"),
        start("b", "run_python", code="print(1)"),
        start("c", "read_file", path="big.csv"),
        start("d", "web_search", query="q"),
        ev.ToolCallResult(
            call_id="a", name="web_fetch", is_error=True,
            content=f"HTTP 403 from https://example.com/?key={secret}: forbidden",
        ),
        ev.ToolCallResult(call_id="b", name="run_python", content="1\n"),
        ev.ToolCallResult(call_id="c", name="read_file", content=huge),
        ev.ToolCallResult(call_id="d", name="web_search", content=straddling),
        ev.Validated(attempt=1, valid=False, errors=["'answer' is required"], repairing=True,
                     answer=f'{{"token": "{secret}"}}'),
        ev.Error(message=f"refused: {secret}"),
        done("error"),
    ):  # fmt: skip
        builder.see(event)
    nodes = {node.name: node for node in builder.trace.nodes}
    failed = nodes["web_fetch"].detail
    assert failed["error"] == "HTTP 403 from https://example.com/?key=[redacted]: forbidden"
    assert "result" not in failed and "[redacted]" in failed["arguments"]
    assert nodes["run_python"].detail["result"] == "1\n"
    kept = nodes["read_file"].detail["result"]
    assert len(kept) == TEXT_PREVIEW and kept.startswith("row;row;") and kept.endswith("…")
    assert secret[:8] not in nodes["web_search"].detail["result"]
    assert nodes["output schema"].detail["answer"] == '{"token": "[redacted]"}'
    assert nodes["error"].detail["message"] == "refused: [redacted]"
    assert secret not in builder.trace.model_dump_json()


def test_a_tool_call_keeps_the_files_it_sent() -> None:
    chart = FileRef(sha256="c" * 64, media_type="image/png", name="chart.png", size=2048)
    trace = built(
        ev.Iteration(number=1),
        start("a", "run_python", code="..."),
        result("a", "run_python"),
        ev.FileSent(call_id="a", file=chart, caption="A chart"),
        done(),
    ).trace
    [_, tool] = trace.nodes
    assert tool.detail["files"] == [
        {"name": "chart.png", "media_type": "image/png", "size": 2048, "sha256": "c" * 64}
    ]
    assert measure(trace, latency_ms=10, tokens=1).steps == 2  # a file is no step of its own


def test_a_delegate_call_names_its_helper_s_run() -> None:
    """A `delegate` call's node links to its helper's own trace, whether the helper
    answered or failed; another tool's result that happens to say "run …" links nothing."""
    ticks = itertools.count()
    builder = TraceBuilder(clock=lambda: float(next(ticks)))
    helper, other = "ab" * 16, "cd" * 16
    for event in (
        ev.Iteration(number=1),
        start("a", "delegate", task="look it up"),
        start("b", "delegate", task="and this"),
        start("c", "web_fetch", url="https://example.com"),
        ev.ToolCallResult(call_id="a", name="delegate", content=f"[helper run {helper}]\n42"),
        ev.ToolCallResult(
            call_id="b", name="delegate", is_error=True,
            content=f"The helper (run {other}) did not finish in time and was stopped.",
        ),
        ev.ToolCallResult(call_id="c", name="web_fetch", content=f"a run {helper} page"),
        done(),
    ):  # fmt: skip
        builder.see(event)
    linked = {n.name + n.detail["call"]: n.detail.get("helper_run") for n in builder.trace.nodes
              if n.kind == "tool_call"}  # fmt: skip
    assert linked == {"delegatea": helper, "delegateb": other, "web_fetchc": None}
