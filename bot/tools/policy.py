"""Who may run what: `allow`, `deny` or `ask`, decided by the first matching rule.

A rule matches on a glob of the tool name and, optionally, globs of argument values
(`{"action": "deny", "tool": "shell", "args": {"command": "rm *"}}`). When no rule matches,
a tool marked sensitive asks and any other tool is allowed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any, Literal

from bot.config import PolicyRule
from bot.tools.base import Tool

Action = Literal["allow", "deny", "ask"]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def matches(rule: PolicyRule, name: str, arguments: Mapping[str, Any]) -> bool:
    if not fnmatchcase(name, rule.tool):
        return False
    return all(
        key in arguments and fnmatchcase(_as_text(arguments[key]), pattern)
        for key, pattern in rule.args.items()
    )


class Policy:
    def __init__(self, rules: Iterable[PolicyRule] = ()) -> None:
        self.rules = list(rules)

    def with_rules(self, first: Iterable[PolicyRule]) -> Policy:
        """This policy with `first` checked before its own rules (e.g. "always allow here")."""
        return Policy([*first, *self.rules])

    def decide(self, tool: Tool | None, name: str, arguments: Mapping[str, Any]) -> Action:
        rule = self._first(name, arguments)
        if rule is not None:
            return rule.action
        return "ask" if tool is not None and tool.sensitive else "allow"

    def may_remember(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether a person may allow this call for the rest of the session at once."""
        rule = self._first(name, arguments)
        return rule is None or rule.remember

    def _first(self, name: str, arguments: Mapping[str, Any]) -> PolicyRule | None:
        return next((rule for rule in self.rules if matches(rule, name, arguments)), None)
