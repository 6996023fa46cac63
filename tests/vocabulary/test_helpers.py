"""Helpers' session keys: the same call finds the same helper, in its parent's chat."""

from __future__ import annotations

from bot.vocabulary.chats import chat_of
from bot.vocabulary.helpers import (
    depth_of,
    helper_envelope_id,
    helper_session,
    is_helper,
    root_of,
)


def test_the_same_call_names_the_same_helper_and_two_calls_two() -> None:
    parent = "tg:42:7"
    assert helper_session(parent, "toolu_1") == helper_session(parent, "toolu_1")
    assert helper_session(parent, "toolu_1") != helper_session(parent, "toolu_2")
    assert helper_envelope_id("toolu_1") == "helper:toolu_1"


def test_a_helper_is_in_its_parent_s_chat_at_its_depth() -> None:
    for parent, chat in [
        ("tg:42:7", "tg:42"),
        ("slack:T:C:1.2", "slack:T:C"),
        ("http:ab", "http:ab"),
    ]:
        child = helper_session(parent, "call_9")
        grandchild = helper_session(child, "call_10")
        assert chat_of(child) == chat_of(grandchild) == chat
        assert (depth_of(parent), depth_of(child), depth_of(grandchild)) == (0, 1, 2)
        assert root_of(grandchild) == parent and is_helper(child) and not is_helper(parent)


def test_an_id_with_characters_a_key_should_not_hold_is_hashed() -> None:
    odd = helper_session("http:ab", "a:b}{c")
    assert odd.count(":") == 2 and "}" not in odd and "{" not in odd
    assert helper_session("http:ab", "x" * 100) != helper_session("http:ab", "x" * 99 + "y")
