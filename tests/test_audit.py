"""`make audit` (.ci/audit.py): an advisory fails it unless ignored with a reason, and an audit
that could not run says so in one line instead of passing for a clean one.

The reports are pip-audit's and npm's own JSON formats; the services themselves are not asked
here (the test would then depend on the network and on the day's advisories)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from tests.support.dockerfile import ROOT

SCRIPT = ROOT / ".ci" / "audit.py"


def audit() -> ModuleType:
    spec = importlib.util.spec_from_file_location("audit", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def pip_report(*dependencies: dict[str, Any]) -> str:
    return json.dumps({"dependencies": list(dependencies), "fixes": []})


VULNERABLE = {
    "name": "aiohttp",
    "version": "3.9.0",
    "vulns": [{"id": "PYSEC-2024-24", "fix_versions": ["3.9.2"], "aliases": ["CVE-2024-23334"]}],
}
CLEAN = {"name": "redis", "version": "5.3.1", "vulns": []}
UNKNOWN = {"name": "redis", "skip_reason": "Dependency not found on PyPI and could not be audited"}


def test_a_python_advisory_is_found_unless_ignored_by_id_or_alias() -> None:
    module = audit()
    found = module.pip_verdict(pip_report(VULNERABLE, CLEAN), "", {})
    assert found.found == ["aiohttp 3.9.0: PYSEC-2024-24 (fixed in 3.9.2)"]
    assert found.not_audited == []
    for advisory in ("PYSEC-2024-24", "CVE-2024-23334"):
        assert module.pip_verdict(pip_report(VULNERABLE), "", {advisory: "why"}).found == []


def test_python_packages_pypi_could_not_tell_about_are_not_audited() -> None:
    module = audit()
    nothing = module.pip_verdict(pip_report(UNKNOWN), "", {})
    assert nothing.found == [] and len(nothing.not_audited) == 1
    assert "did not answer for any of the 1 Python packages" in nothing.not_audited[0]
    some = module.pip_verdict(pip_report(CLEAN, {**UNKNOWN, "name": "private"}), "", {})
    assert some.not_audited == ["Python packages PyPI did not know: private"]
    crashed = module.pip_verdict("", "Traceback ...\nConnectionError: no route to host\n", {})
    assert crashed.not_audited == ["pip-audit did not run: ConnectionError: no route to host"]


NPM_FOUND = {
    "auditReportVersion": 2,
    "vulnerabilities": {
        "marked": {
            "name": "marked",
            "severity": "high",
            "range": "<4.0.10",
            "via": [
                {
                    "source": 1095054,
                    "title": "Inefficient Regular Expression Complexity in marked",
                    "url": "https://github.com/advisories/GHSA-5v2h-r2cx-5xgj",
                }
            ],
        },
        "wrapper": {"name": "wrapper", "severity": "high", "via": ["marked"]},
    },
    "metadata": {},
}


def test_an_npm_advisory_is_found_unless_ignored() -> None:
    module = audit()
    found = module.npm_verdict(json.dumps(NPM_FOUND), "", {})
    assert found.found == [
        "marked (<4.0.10): GHSA-5v2h-r2cx-5xgj Inefficient Regular Expression Complexity in "
        "marked [high]"
    ]
    ignore = {"GHSA-5v2h-r2cx-5xgj": "the pages never render untrusted markdown with it"}
    assert module.npm_verdict(json.dumps(NPM_FOUND), "", ignore).found == []
    clean = {"auditReportVersion": 2, "vulnerabilities": {}, "metadata": {}}
    assert module.npm_verdict(json.dumps(clean), "", {}) == module.Verdict()


def test_npms_audit_service_out_of_reach_is_one_line() -> None:
    module = audit()
    refused = {"message": "405 Method Not Allowed - POST https://registry.example/bulk",
               "statusCode": 405, "error": {"summary": "", "detail": ""}}  # fmt: skip
    verdict = module.npm_verdict(json.dumps(refused), "", {})
    assert verdict.found == []
    assert verdict.not_audited == [
        "npm's audit service did not answer: 405 Method Not Allowed - POST "
        "https://registry.example/bulk"
    ]


def test_the_exit_status_fails_on_advisories_and_on_no_audit_only_when_strict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = audit()
    found, unreachable = module.Verdict(found=["x 1: GHSA-1"]), module.Verdict(not_audited=["y"])
    assert module.report([("python", found), ("npm", unreachable)], strict=False) == 1
    assert module.report([("npm", unreachable)], strict=False) == 0
    assert module.report([("npm", unreachable)], strict=True) == 2
    assert module.report([("npm", module.Verdict())], strict=True) == 0
    said = capsys.readouterr().out.splitlines()
    assert "audit: NOT AUDITED (npm): y" in said and "audit: python: x 1: GHSA-1" in said
    assert said[-1] == "audit: npm: no known vulnerability"


def test_an_ignored_advisory_needs_a_reason() -> None:
    module = audit()
    text = "# comment\nGHSA-aaaa-bbbb-cccc  not reachable from the pages\n\n"
    assert module.ignored(text) == {"GHSA-aaaa-bbbb-cccc": "not reachable from the pages"}
    with pytest.raises(SystemExit, match="line 1: PYSEC-1 needs a reason"):
        module.ignored("PYSEC-1\n")
    assert module.ignored((ROOT / ".ci" / "audit-ignore.txt").read_text()) is not None


def test_ci_audits_before_it_tests() -> None:
    steps = (ROOT / ".ci" / "run").read_text().splitlines()
    assert steps.index("make audit") < steps.index("make test")
    shown = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "audit"], capture_output=True, text=True, timeout=60
    )
    assert "python3 .ci/audit.py" in shown.stdout
