"""Permission rules: first match wins; sensitive tools ask when nothing matches."""

from __future__ import annotations

from bot.config import PolicyRule
from bot.tools.base import ToolContext, tool
from bot.tools.builtin import calculator
from bot.tools.policy import Policy


@tool(sensitive=True)
async def shell(ctx: ToolContext, command: str) -> str:
    """Run a shell command."""
    return command


def test_defaults_follow_the_sensitive_flag() -> None:
    policy = Policy()
    assert policy.decide(calculator, "calculator", {"expression": "1"}) == "allow"
    assert policy.decide(shell, "shell", {"command": "ls"}) == "ask"
    assert policy.decide(None, "unknown", {}) == "allow"


def test_first_matching_rule_wins_with_argument_globs() -> None:
    policy = Policy(
        [
            PolicyRule(action="deny", tool="shell", args={"command": "rm *"}),
            PolicyRule(action="allow", tool="sh*", args={"command": "ls*"}),
            PolicyRule(action="ask", tool="calc*"),
            PolicyRule(action="allow", tool="*"),
        ]
    )
    assert policy.decide(shell, "shell", {"command": "rm -rf /"}) == "deny"
    assert policy.decide(shell, "shell", {"command": "ls -la"}) == "allow"
    assert policy.decide(shell, "shell", {"command": "cat x"}) == "allow"  # the catch-all
    assert policy.decide(calculator, "calculator", {"expression": "2"}) == "ask"


def test_argument_rule_needs_the_argument_and_matches_non_strings_as_json() -> None:
    policy = Policy([PolicyRule(action="deny", tool="*", args={"count": "1?"})])
    assert policy.decide(None, "t", {}) == "allow"
    assert policy.decide(None, "t", {"count": 12}) == "deny"
    assert policy.decide(None, "t", {"count": 2}) == "allow"


def test_session_rules_come_first() -> None:
    base = Policy([PolicyRule(action="deny", tool="shell")])
    assert base.decide(shell, "shell", {"command": "x"}) == "deny"
    assert (
        base.with_rules([PolicyRule(action="allow", tool="shell")]).decide(
            shell, "shell", {"command": "x"}
        )
        == "allow"
    )


def test_a_rule_may_forbid_remembering_its_approval() -> None:
    policy = Policy(
        [
            PolicyRule(action="ask", tool="shell", remember=False),
            PolicyRule(action="ask", tool="email"),
        ]
    )
    assert not policy.may_remember("shell", {"command": "ls"})
    assert policy.may_remember("email", {"to": "x"})
    assert policy.may_remember("anything_else", {})
    allowed = policy.with_rules([PolicyRule(action="allow", tool="shell")])
    assert allowed.decide(None, "shell", {}) == "allow"
