"""The series Parley's `/metrics` can show, by sample name, each with its label names.

Taken from the metric definitions themselves (`bot.telemetry.metrics`), not from a list kept
by hand: a metric renamed or a label dropped there changes what the alert rules and the
autoscaler of `deploy/` may name. A counter shows as `NAME_total`, a histogram as
`NAME_bucket` (with `le`), `NAME_sum` and `NAME_count`; the backlog's gauges and the dead
letters' counter are made at each scrape (`backlog_text`, `dead_letters_text`), so they are read
from one.
"""

from __future__ import annotations

from typing import Any

import promql_parser
import yaml
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from bot.mailbox.backlog import Backlog
from bot.telemetry import metrics
from tests.support.dockerfile import ROOT

ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"

SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def exported() -> dict[str, set[str]]:
    """Every sample name `/metrics` can show, with the label names it carries."""
    found: dict[str, set[str]] = {}
    for metric in vars(metrics).values():
        if not isinstance(metric, MetricWrapperBase):
            continue
        # The wrapper's name, type and label names are what its samples are made of; the
        # client keeps them in these attributes and shows no sample until one is counted.
        for suffix in SUFFIXES[str(metric._type)]:
            labels = set(metric._labelnames) | ({"le"} if suffix == "_bucket" else set())
            found[metric._name + suffix] = labels
    made_at_scrape = metrics.backlog_text(Backlog()) + metrics.dead_letters_text(0)
    for family in text_string_to_metric_families(made_at_scrape):
        for sample in family.samples:
            found[sample.name] = set(sample.labels)
    return found


def sample(text: str, name: str, **labels: str) -> float:
    """The value of the sample `name` (with `labels`) in an exposition `text`; 0 if absent."""
    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and all(found.labels.get(k) == v for k, v in labels.items()):
                return float(found.value)
    return 0.0


def selectors(expr: str) -> list[promql_parser.VectorSelector]:
    """The series a PromQL expression selects (parsed as Prometheus reads it)."""
    found: list[promql_parser.VectorSelector] = []

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            found.append(node)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


def alert_rules() -> list[dict[str, Any]]:
    """The rules of `deploy/prometheus/alerts.yml`."""
    loaded = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    (group,) = loaded["groups"]
    found: list[dict[str, Any]] = group["rules"]
    return found
