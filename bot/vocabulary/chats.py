"""Which chat a session is in: a Telegram forum topic and a Slack thread are sessions of
their own inside a chat, and what belongs to a chat (its memories, the tools its people
allowed for good, its tasks) is shared by all of them."""

from __future__ import annotations

# How many `:`-parts of a session key name the chat (`tg:CHAT`, `slack:TEAM:CHANNEL`); the
# rest is a topic or a thread. A platform not listed has one session per chat.
CHAT_PARTS = {"tg": 2, "slack": 3}
HELPER_MARK = ":helper-"  # what marks a helper's session (`bot.vocabulary.helpers`)


def chat_of(session: str) -> str:
    """The key of the chat `session` is in (the session's own key, for a whole chat); a
    helper's session (`bot.vocabulary.helpers`) is in its parent's chat."""
    parts = session.split(HELPER_MARK, 1)[0].split(":")
    return ":".join(parts[: CHAT_PARTS.get(parts[0], len(parts))])
