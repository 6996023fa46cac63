"""docs/SECURITY.md stays true: every test it cites as showing a defence exists under that
name in that file, and the README and the operations guide point to the page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECURITY = ROOT / "docs" / "SECURITY.md"
CITED = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def cited() -> list[tuple[str, str]]:
    return CITED.findall(SECURITY.read_text(encoding="utf-8"))


def defined_in(path: Path) -> set[str]:
    """The names of the test functions defined at the top of a test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {node.name for node in tree.body if isinstance(node, functions)}


def test_every_test_the_security_page_cites_exists() -> None:
    citations = cited()
    assert len(citations) >= 20, "the page cites fewer tests than it did"
    missing = [
        f"{path}::{name}"
        for path, name in citations
        if not (ROOT / path).is_file() or name not in defined_in(ROOT / path)
    ]
    assert missing == []


def test_the_page_cites_the_test_over_every_http_surface() -> None:
    assert (
        "tests/integration/http/test_reach.py",
        "test_every_http_surface_serves_exactly_whom_the_rule_says",
    ) in cited()


def test_the_readme_and_the_operations_guide_link_the_page() -> None:
    for page in (ROOT / "README.md", ROOT / "docs" / "OPERATIONS.md"):
        assert "SECURITY.md" in page.read_text(encoding="utf-8"), page.name
