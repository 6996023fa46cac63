"""Who may run what: `allow`, `deny` or `ask`, decided by the first matching rule.

A rule matches on a glob of the tool name and, optionally, globs of argument values
(`{"action": "deny", "tool": "shell", "args": {"command": "rm *"}}`), the caller's role and
id, and the kind of chat (`{"action": "deny", "tool": "run_python", "role": "guest"}`). When
no rule matches, a tool marked sensitive asks and any other tool is allowed. A rule that
names a role, a person or a kind of chat never matches a call whose caller is not known.

A caller's role comes from their `Sender`, whose `is_admin` was stamped where the message
came in (the platform, from PARLEY_ADMINS; the scheduler, when a task fires), and from the
list of users the policy is built with (PARLEY_ALLOWED_USERS), or from `paired` on the
`Sender` (a person an admin paired is a user): the policy never reads the settings per
call, and the tools' context carries none.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from bot.config.values import PolicyRule
from bot.tools.base import Tool, ToolContext

Action = Literal["allow", "deny", "ask"]
Role = Literal["admin", "user", "guest"]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Caller:
    """Who a call is for, as rules see them."""

    role: Role
    person: str
    chat: Literal["private", "group"]

    @classmethod
    def of(cls, ctx: ToolContext, users: Collection[str] = ()) -> Caller:
        """`users`: the people who are users rather than guests; everyone while empty."""
        person = ctx.user.id
        role: Role = "guest"
        if ctx.user.is_admin:
            role = "admin"
        elif ctx.user.paired or not users or person in users:
            role = "user"
        return cls(role, person, "private" if ctx.chat_kind == "private" else "group")


def _fits(rule: PolicyRule, caller: Caller | None) -> bool:
    if caller is None:
        return rule.role == "*" and rule.person == "*" and rule.chat == "*"
    return (
        rule.role in ("*", caller.role)
        and fnmatchcase(caller.person, rule.person)
        and rule.chat in ("*", caller.chat)
    )


def matches(
    rule: PolicyRule, name: str, arguments: Mapping[str, Any], caller: Caller | None = None
) -> bool:
    if not fnmatchcase(name, rule.tool) or not _fits(rule, caller):
        return False
    return all(
        key in arguments and fnmatchcase(_as_text(arguments[key]), pattern)
        for key, pattern in rule.args.items()
    )


class Policy:
    def __init__(self, rules: Iterable[PolicyRule] = (), users: Collection[str] = ()) -> None:
        """`rules`: PARLEY_POLICY; `users`: PARLEY_ALLOWED_USERS (see `Caller.of`)."""
        self.rules = list(rules)
        self.users = frozenset(users)

    def caller(self, ctx: ToolContext) -> Caller:
        """Who the calls of `ctx` are for, as this policy's rules see them."""
        return Caller.of(ctx, self.users)

    def with_rules(self, first: Iterable[PolicyRule]) -> Policy:
        """This policy with `first` checked before its own rules (e.g. "always allow here"),
        except its denials: what the operator forbids, a press of "always allow" never allows
        (for a guest in a chat where a user allowed a tool, say)."""
        denials = [rule for rule in self.rules if rule.action == "deny"]
        rest = [rule for rule in self.rules if rule.action != "deny"]
        return Policy([*denials, *first, *rest], self.users)

    def decide(
        self,
        tool: Tool | None,
        name: str,
        arguments: Mapping[str, Any],
        caller: Caller | None = None,
    ) -> Action:
        rule = self._first(name, arguments, caller)
        if rule is not None:
            return rule.action
        return "ask" if tool is not None and tool.sensitive else "allow"

    def may_remember(
        self, name: str, arguments: Mapping[str, Any], caller: Caller | None = None
    ) -> bool:
        """Whether a person may allow this call for the rest of the session at once."""
        rule = self._first(name, arguments, caller)
        return rule is None or rule.remember

    def timeout(
        self, name: str, arguments: Mapping[str, Any], caller: Caller | None = None
    ) -> float | None:
        """How long an approval of this call waits, if its rule says (`timeout`)."""
        rule = self._first(name, arguments, caller)
        return rule.timeout if rule is not None else None

    def _first(
        self, name: str, arguments: Mapping[str, Any], caller: Caller | None
    ) -> PolicyRule | None:
        return next((r for r in self.rules if matches(r, name, arguments, caller)), None)
