"""`make audit`: known vulnerabilities in the locked dependencies, Python's and the pages'.

Python: pip-audit (run by uvx at a pinned version, so it is not one of Parley's dependencies)
on the requirements `uv export` makes from uv.lock, every group included, without installing
anything. The pages' browser libraries: `npm audit` on web/package-lock.json.

Exit 1 when an advisory is found that `.ci/audit-ignore.txt` does not list (a line: the
advisory's id, then why it is ignored). A service that cannot be reached, or a package it
cannot tell about, is one line starting `audit: NOT AUDITED`, and exit 0, or 2 with
AUDIT_STRICT=1: an audit that did not run says so, and does not pass for a clean one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE = ROOT / ".ci" / "audit-ignore.txt"
PIP_AUDIT = "pip-audit==2.10.1"
TIMEOUT_S = 300


@dataclass
class Verdict:
    """What one audit found: advisories (one line each) and why something was not audited."""

    found: list[str] = field(default_factory=list)
    not_audited: list[str] = field(default_factory=list)


def ignored(text: str) -> dict[str, str]:
    """The ignore list: advisory id -> the reason given for it (a line without one is refused:
    an advisory is ignored for a reason someone wrote down)."""
    found = {}
    for number, written in enumerate(text.splitlines(), 1):
        line = written.split("#", 1)[0].strip()
        if not line:
            continue
        advisory, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"audit: {IGNORE.name} line {number}: {advisory} needs a reason")
        found[advisory] = reason.strip()
    return found


def one_line(text: str, limit: int = 200) -> str:
    """The last non-empty line of a tool's output, as the reason it failed."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:limit]


def pip_verdict(stdout: str, stderr: str, skip: dict[str, str]) -> Verdict:
    """pip-audit's JSON report as a verdict."""
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        return Verdict(not_audited=[f"pip-audit did not run: {one_line(stderr)}"])
    verdict, unknown = Verdict(), []
    dependencies = report.get("dependencies", [])
    for dependency in dependencies:
        if dependency.get("skip_reason"):
            unknown.append(dependency["name"])
        for vuln in dependency.get("vulns", []):
            if {vuln["id"], *vuln.get("aliases", [])} & set(skip):
                continue
            fixed = ", ".join(vuln.get("fix_versions", [])) or "no fixed version"
            verdict.found.append(
                f"{dependency['name']} {dependency['version']}: {vuln['id']} (fixed in {fixed})"
            )
    if unknown and len(unknown) == len(dependencies):
        verdict.not_audited.append(
            f"PyPI's vulnerability data did not answer for any of the {len(unknown)} Python "
            "packages (is its JSON API reachable from here?)"
        )
    elif unknown:
        verdict.not_audited.append(f"Python packages PyPI did not know: {', '.join(unknown)}")
    return verdict


def npm_verdict(stdout: str, stderr: str, skip: dict[str, str]) -> Verdict:
    """`npm audit --json`'s report as a verdict."""
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError:
        return Verdict(not_audited=[f"npm audit did not run: {one_line(stderr)}"])
    if "error" in report or "vulnerabilities" not in report:
        why = report.get("message") or report.get("error", {}).get("summary") or one_line(stderr)
        return Verdict(not_audited=[f"npm's audit service did not answer: {one_line(why)}"])
    verdict = Verdict()
    for name, vulnerability in sorted(report["vulnerabilities"].items()):
        for via in vulnerability.get("via", []):
            if not isinstance(via, dict):  # through another package, reported under its name
                continue
            advisory = _advisory(via)
            if advisory in skip:
                continue
            verdict.found.append(
                f"{name} ({vulnerability.get('range', '?')}): {advisory} {via.get('title', '')}"
                f" [{vulnerability.get('severity', '?')}]"
            )
    return verdict


def _advisory(via: dict[str, object]) -> str:
    """An npm advisory's id: its GHSA id, from its address, else npm's own number."""
    found = re.search(r"GHSA(-[0-9a-z]{4}){3}", str(via.get("url", "")))
    return found[0] if found else str(via.get("source", "?"))


def run(command: list[str], cwd: Path) -> tuple[str, str]:
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        return "", f"{command[0]} is not installed"
    except subprocess.TimeoutExpired:
        return "", f"no answer within {TIMEOUT_S} s"
    return done.stdout, done.stderr


def python_audit(skip: dict[str, str]) -> Verdict:
    exported = subprocess.run(
        ["uv", "export", "--frozen", "--all-groups", "--format", "requirements-txt",
         "--no-hashes", "--no-emit-project"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="audit-") as requirements:
        requirements.write(exported.stdout)
        requirements.flush()
        stdout, stderr = run(
            ["uvx", PIP_AUDIT, "--requirement", requirements.name, "--disable-pip",
             "--no-deps", "--format", "json", "--progress-spinner", "off"],
            ROOT,
        )  # fmt: skip
    return pip_verdict(stdout, stderr, skip)


def npm_audit(skip: dict[str, str]) -> Verdict:
    stdout, stderr = run(["npm", "audit", "--json", "--package-lock-only"], ROOT / "web")
    return npm_verdict(stdout, stderr, skip)


def report(verdicts: Iterable[tuple[str, Verdict]], strict: bool) -> int:
    """Print the verdicts; the exit status."""
    status = 0
    for what, verdict in verdicts:
        for line in verdict.found:
            print(f"audit: {what}: {line}")
        for line in verdict.not_audited:
            print(f"audit: NOT AUDITED ({what}): {line}")
        if verdict.found:
            status = 1
        elif verdict.not_audited and strict and status == 0:
            status = 2
        elif not verdict.not_audited:
            print(f"audit: {what}: no known vulnerability")
    return status


def main() -> int:
    skip = ignored(IGNORE.read_text(encoding="utf-8")) if IGNORE.exists() else {}
    verdicts = [("python", python_audit(skip)), ("npm", npm_audit(skip))]
    return report(verdicts, strict=os.environ.get("AUDIT_STRICT") == "1")


if __name__ == "__main__":
    sys.exit(main())
