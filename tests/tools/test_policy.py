"""Permission rules: first match wins; sensitive tools ask when nothing matches."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bot.config.settings import Settings
from bot.config.values import PolicyRule
from bot.tools.base import ToolContext, tool
from bot.tools.builtin import calculator
from bot.tools.policy import Caller, Policy
from bot.vocabulary.envelope import Sender


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


def test_session_rules_come_before_the_operators_ask_and_allow_rules() -> None:
    base = Policy([PolicyRule(action="ask", tool="calc*"), PolicyRule(action="deny", tool="sh*")])
    remembered = base.with_rules([PolicyRule(action="allow", tool="*")])
    assert remembered.decide(calculator, "calculator", {"expression": "1"}) == "allow"
    assert remembered.decide(shell, "shell", {"command": "x"}) == "deny"


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


def caller(person: str, chat_kind: str = "private", **settings: Any) -> Caller:
    """The caller as a worker's policy sees them: their sender stamped as a platform stamps
    it (`is_admin` from PARLEY_ADMINS), the policy built with the settings' users."""
    configured = Settings(_env_file=None, **settings)
    sender = Sender(id=person, is_admin=configured.is_admin(person))
    ctx = ToolContext("tg:1", sender, chat_kind=chat_kind)
    return Policy(configured.policy, configured.allowed_users).caller(ctx)


def test_roles_follow_admins_the_allowlist_and_guests() -> None:
    listed: dict[str, Any] = {"admins": ["tg:1"], "allowed_users": ["tg:2"], "allow_guests": True}
    assert caller("tg:1", **listed).role == "admin"
    assert caller("tg:2", **listed).role == "user"
    assert caller("tg:3", **listed).role == "guest"
    assert caller("tg:3").role == "user"  # no list: everyone is a user
    assert caller("tg:3", chat_kind="topic").chat == "group"
    assert Settings(_env_file=None, **listed).may_use("tg:3")
    assert not Settings(_env_file=None, allowed_users=["tg:2"]).may_use("tg:3")


def test_an_admin_is_whom_their_sender_says() -> None:
    """Where the message came in, the sender was stamped; the policy reads no admin list."""
    listed = Settings(_env_file=None, admins=["tg:1"], allowed_users=["tg:2"])
    policy = Policy(listed.policy, listed.allowed_users)  # as a worker builds it
    unstamped = ToolContext("tg:1", Sender(id="tg:1"))
    assert policy.caller(unstamped).role == "guest"  # PARLEY_ADMINS is read at intake only
    stamped = ToolContext("tg:1", Sender(id="tg:3", is_admin=True))
    assert policy.caller(stamped).role == "admin"
    allowed = policy.with_rules([PolicyRule(action="allow", tool="shell")])
    assert allowed.caller(unstamped).role == "guest"  # the users go with its rules
    assert Caller.of(unstamped).role == "user"  # no users named: everyone is one


def test_rules_match_on_role_person_and_chat() -> None:
    listed: dict[str, Any] = {"admins": ["tg:1"], "allowed_users": ["tg:2"], "allow_guests": True}
    policy = Policy(
        [
            PolicyRule(action="deny", tool="shell", role="guest"),
            PolicyRule(action="allow", tool="shell", role="admin", chat="private"),
            PolicyRule(action="deny", tool="shell", person="tg:9*"),
            PolicyRule(action="deny", tool="*", chat="group", args={"command": "rm*"}),
        ]
    )
    ls, rm = {"command": "ls"}, {"command": "rm x"}
    assert policy.decide(shell, "shell", ls, caller("tg:3", **listed)) == "deny"
    assert policy.decide(shell, "shell", ls, caller("tg:2", **listed)) == "ask"
    assert policy.decide(shell, "shell", ls, caller("tg:1", **listed)) == "allow"
    assert policy.decide(shell, "shell", ls, caller("tg:1", "group", **listed)) == "ask"
    assert policy.decide(shell, "shell", ls, caller("tg:91", **listed)) == "deny"
    assert policy.decide(shell, "shell", rm, caller("tg:2", "group", **listed)) == "deny"
    assert policy.decide(shell, "shell", ls) == "ask"  # an unknown caller matches no such rule


def test_always_allow_never_overrides_an_operators_denial() -> None:
    listed: dict[str, Any] = {"allowed_users": ["tg:2"], "allow_guests": True}
    policy = Policy([PolicyRule(action="deny", tool="shell", role="guest")]).with_rules(
        [PolicyRule(action="allow", tool="shell")]
    )
    assert policy.decide(shell, "shell", {"command": "ls"}, caller("tg:2", **listed)) == "allow"
    assert policy.decide(shell, "shell", {"command": "ls"}, caller("tg:3", **listed)) == "deny"


def test_a_mistyped_rule_is_refused() -> None:
    with pytest.raises(ValidationError):
        PolicyRule.model_validate({"action": "deny", "tool": "shell", "rol": "guest"})
    with pytest.raises(ValidationError):
        PolicyRule.model_validate({"action": "deny", "role": "owner"})


def test_a_paired_person_is_a_user_whatever_the_list() -> None:
    """Someone an admin paired (stamped `paired` where their message came in) is a user,
    though PARLEY_ALLOWED_USERS does not name them; the same id unstamped is a guest."""
    listed = Settings(_env_file=None, allowed_users=["tg:2"], allow_guests=True)
    policy = Policy(listed.policy, listed.allowed_users)
    assert policy.caller(ToolContext("tg:5", Sender(id="tg:5", paired=True))).role == "user"
    assert policy.caller(ToolContext("tg:5", Sender(id="tg:5"))).role == "guest"
