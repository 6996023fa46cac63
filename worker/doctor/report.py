"""What `parley doctor` found, as one checklist: a line per check, the fix under a failure.

A check is ok, a warning (Parley runs, but not as the operator likely meant), failed (some
part of Parley will not work until it is fixed), or skipped (not configured here, or not
asked for). The command exits 1 when anything failed, so a deploy script or a Kubernetes
Job can gate on it. Every line goes through `Scrub` before it is printed: the checks phrase
what they found without secrets, and this is the net under them, for a secret quoted in an
error that a library raised.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

Status = Literal["ok", "warning", "failed", "skipped"]
LABELS: dict[Status, str] = {"ok": "ok", "warning": "WARN", "failed": "FAILED", "skipped": "skip"}
HIDDEN = "***"
MIN_SECRET = 6  # shorter values would blank out ordinary words
# Environment variables whose values are secrets whatever reads them (a tool's key, say).
SECRET_NAME = re.compile(r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)


@dataclass(frozen=True)
class Finding:
    """One line of the checklist: `found` says what is there, `fix` what to do about it."""

    check: str
    status: Status
    found: str
    fix: str | None = None


def ok(check: str, found: str) -> Finding:
    return Finding(check, "ok", found)


def warning(check: str, found: str, fix: str) -> Finding:
    return Finding(check, "warning", found, fix)


def failed(check: str, found: str, fix: str) -> Finding:
    return Finding(check, "failed", found, fix)


def skipped(check: str, why: str) -> Finding:
    return Finding(check, "skipped", why)


class Scrub:
    """Takes known secrets out of a text: the settings', the MCP servers', and the values
    of environment variables named like secrets."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets: set[str] = set()
        self.add(secrets)
        self.add(value for name, value in os.environ.items() if SECRET_NAME.search(name))

    def add(self, secrets: Iterable[str]) -> None:
        self.secrets |= {secret for secret in secrets if len(secret) >= MIN_SECRET}

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, HIDDEN)
        return text


def failures(findings: Sequence[Finding]) -> int:
    return sum(finding.status == "failed" for finding in findings)


def summary(findings: Sequence[Finding]) -> str:
    counts = dict.fromkeys(LABELS, 0)
    for finding in findings:
        counts[finding.status] += 1
    parts = [f"{counts['failed']} failed", f"{counts['warning']} warnings"]
    parts += [f"{counts['ok']} ok", f"{counts['skipped']} skipped"]
    return ", ".join(parts)


def render(findings: Sequence[Finding], scrub: Scrub) -> str:
    """The checklist as text: status, check and what was found; the fix on the next line."""
    width = max((len(finding.check) for finding in findings), default=0)
    lines = []
    for finding in findings:
        label = LABELS[finding.status]
        lines.append(f"{label:<7} {finding.check:<{width}}  {scrub(finding.found)}")
        if finding.fix:
            lines.append(f"{'':<7} {'':<{width}}  fix: {scrub(finding.fix)}")
    lines.append(f"parley doctor: {summary(findings)}")
    return "\n".join(lines)


def render_json(findings: Sequence[Finding], scrub: Scrub) -> str:
    """The checklist as one JSON object, for scripts."""
    rows = [
        {key: scrub(value) if isinstance(value, str) else value for key, value in asdict(f).items()}
        for f in findings
    ]
    return json.dumps({"ok": failures(findings) == 0, "checks": rows}, indent=2)
