"""Helpers: child runs a turn starts with the `delegate` tool, each a session of its own.

A helper's session key is its parent's key, a `:helper-` mark and the id of the tool call
that started it, so the same call (a parent resumed after its worker died) finds the same
helper rather than starting another; its one envelope's id is the same call's, so a second
submission is the mailbox's duplicate. The key keeps the parent's chat (`chat_of` drops the
helper marks), so what belongs to the chat (its grants, memories, switched-off tools) is the
helper's too, and its depth is how many marks it carries.
"""

from __future__ import annotations

import hashlib
import re

from bot.vocabulary.chats import HELPER_MARK as MARK

TOOL = "delegate"  # the tool that starts a helper
PLATFORM = "http"  # a helper answers into its own stream, as an HTTP run does
SHOWN = 80  # characters of a helper's task where it is shown (its status line, its prompts)
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
MOST_ID = 48  # characters of a call id kept as they are in a key


def call_part(call_id: str) -> str:
    """`call_id` as it may stand in a key: its safe characters, hashed when it has others
    or is long, so two ids never map to one part."""
    if not call_id or _SAFE.search(call_id) or len(call_id) > MOST_ID:
        return hashlib.sha256(call_id.encode()).hexdigest()[:32]
    return call_id


def helper_session(parent: str, call_id: str) -> str:
    """The session of the helper that the tool call `call_id` of `parent` starts."""
    return f"{parent}{MARK}{call_part(call_id)}"


def helper_envelope_id(call_id: str) -> str:
    """The id of the one envelope a helper is given: the mailbox drops it when sent again."""
    return f"helper:{call_part(call_id)}"


def depth_of(session: str) -> int:
    """How many helpers deep `session` is: 0 for a person's own session."""
    return session.count(MARK)


def is_helper(session: str) -> bool:
    return MARK in session


def root_of(session: str) -> str:
    """The person's own session a helper (or a helper's helper) works for."""
    return session.split(MARK, 1)[0]


def task_line(task: str, most: int = SHOWN) -> str:
    """A helper's task as people see it: one line, at most `most` characters."""
    line = " ".join(task.split())
    return line if len(line) <= most else line[: most - 1].rstrip() + "…"
