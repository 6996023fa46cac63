"""Metrics added up across processes: what `/metrics` shows is the sum of every live
process's snapshot, counters and histogram buckets alike, read back as Prometheus would."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from bot.mailbox.backlog import Backlog
from bot.telemetry import metrics


def snapshot(tools: dict[str, int], waits: list[float]) -> str:
    registry = CollectorRegistry()
    calls = Counter("parley_tool_calls", "Tool calls", ["tool", "outcome"], registry=registry)
    pickup = Histogram("parley_pickup_seconds", "Pick-up", buckets=(0.1, 1), registry=registry)
    for tool, count in tools.items():
        calls.labels(tool, "ok").inc(count)
    for wait in waits:
        pickup.observe(wait)
    return generate_latest(registry).decode()


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text.decode())
        for s in family.samples
    }


def test_snapshots_of_several_processes_add_up() -> None:
    one = snapshot({"calculator": 2, "web_fetch": 1}, [0.05, 0.5])
    two = snapshot({"calculator": 3}, [0.05, 5.0])
    shown = samples(metrics.merged([one, two]))
    assert shown[("parley_tool_calls_total", (("outcome", "ok"), ("tool", "calculator")))] == 5
    assert shown[("parley_tool_calls_total", (("outcome", "ok"), ("tool", "web_fetch")))] == 1
    assert shown[("parley_pickup_seconds_bucket", (("le", "0.1"),))] == 2
    assert shown[("parley_pickup_seconds_bucket", (("le", "1.0"),))] == 3
    assert shown[("parley_pickup_seconds_bucket", (("le", "+Inf"),))] == 4
    assert shown[("parley_pickup_seconds_count", ())] == 4
    assert abs(shown[("parley_pickup_seconds_sum", ())] - 5.6) < 1e-9
    assert not any(name.endswith("_created") for name, _ in shown)
    assert metrics.merged([]) == b""


def test_the_backlog_is_shown_as_gauges_beside_the_snapshots() -> None:
    one = snapshot({"calculator": 1}, [])
    text = metrics.backlog_text(Backlog(envelopes=7, sessions=3, running=1))
    families = {
        family.name: family
        for family in text_string_to_metric_families(metrics.merged([one, text]).decode())
    }
    assert families["parley_queue_depth"].type == "gauge"
    shown = samples(metrics.merged([one, text]))
    assert shown[("parley_queue_depth", ())] == 7
    assert shown[("parley_sessions_waiting", ())] == 3
    assert shown[("parley_sessions_running", ())] == 1
    assert shown[("parley_tool_calls_total", (("outcome", "ok"), ("tool", "calculator")))] == 1
