"""The Prometheus alerts (`deploy/prometheus/alerts.yml`) ask for series Parley really exports.

Each rule's expression is parsed with a PromQL parser (the `promql-parser` dev dependency, the
grammar Prometheus itself reads), every metric it selects must be one `/metrics` can show
(`tests.support.metric_names`, made from the metric definitions) or Prometheus's own `up`, and
every label it matches on must be one that metric carries, with a run's `finish` one Parley
records. Each alert says what to do in docs/OPERATIONS.md, under a heading of its name.
"""

from __future__ import annotations

import re
from typing import Any

import promql_parser
import pytest

from bot.vocabulary.events import FinishReason
from tests.support.dockerfile import ROOT
from tests.support.metric_names import alert_rules, exported, selectors

OPERATIONS = ROOT / "docs" / "OPERATIONS.md"
# Made by Prometheus for every scrape, with the target's labels.
PROMETHEUS = {"up": {"job", "instance"}}
TARGET_LABELS = {"job", "instance", "namespace", "pod"}  # added to every series by a scrape
DURATION = re.compile(r"^\d+[smhd]$")


def rules() -> list[dict[str, Any]]:
    return alert_rules()


def problems(expr: str) -> list[str]:
    """What in `expr` Parley does not export: a metric, a label, a run's finish."""
    known = exported() | PROMETHEUS
    found = []
    finishes = {str(reason) for reason in FinishReason}
    for selector in selectors(expr):
        name = selector.name
        if name not in known:
            found.append(f"{name} is not a metric Parley exports")
            continue
        for matcher in selector.matchers.matchers:
            if matcher.name not in known[name] | TARGET_LABELS:
                found.append(f"{name} has no label {matcher.name}")
            if matcher.name == "finish":
                wrong = set(matcher.value.split("|")) - finishes
                found.extend(f"no run finishes as {value!r}" for value in sorted(wrong))
    return found


def test_every_rule_is_complete_and_parses() -> None:
    found = rules()
    assert len(found) >= 10
    names = [rule["alert"] for rule in found]
    assert len(names) == len(set(names))
    for rule in found:
        promql_parser.parse(rule["expr"])
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        assert rule["annotations"]["runbook"] == f"docs/OPERATIONS.md#{rule['alert'].lower()}"
        assert DURATION.match(rule.get("for", "0s")), rule["alert"]


@pytest.mark.parametrize("rule", rules(), ids=lambda rule: rule["alert"])
def test_every_metric_an_alert_asks_for_is_one_parley_exports(rule: dict[str, Any]) -> None:
    assert problems(rule["expr"]) == []


def test_a_metric_label_or_finish_parley_does_not_export_is_found() -> None:
    """The check above can fail."""
    assert problems("rate(parley_turnz_total[5m]) > 0") == [
        "parley_turnz_total is not a metric Parley exports"
    ]
    assert problems('parley_queue_depth{platform="telegram"} > 0') == [
        "parley_queue_depth has no label platform"
    ]
    assert problems('rate(parley_turns_total{finish=~"error|crashed"}[5m]) > 0') == [
        "no run finishes as 'crashed'"
    ]


def test_every_alert_says_what_to_do_in_the_operations_guide() -> None:
    text = OPERATIONS.read_text(encoding="utf-8")
    section = text.split("\n## Alerts\n", 1)[1].split("\n## ", 1)[0]
    headings = re.findall(r"^### (\w+)$", section, flags=re.MULTILINE)
    assert headings == [rule["alert"] for rule in rules()]
    for part in section.split("\n### ")[1:]:
        assert len(part.split("\n", 1)[1].strip()) > 100, part.split("\n", 1)[0]
