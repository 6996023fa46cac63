"""Replies of a chosen length at a chosen pace, for the benchmarks of the demo brain.

A message `N words` is answered with `reply_text(N)` (markdown: a bold opening line, then
paragraphs of numbered words) at once, in a few large chunks, like an instant model;
`N words at R tokens/s` streams the same text at about R tokens a second (a token is about
four characters, so each chunk carries four tokens). Both sides derive the text from N alone,
so a benchmark can check what the platform finally shows against what the model sent.
"""

from __future__ import annotations

import re

from tests.fakes.llm.script import Reply

ASKED = re.compile(r"\b(\d{1,6}) words(?: at (\d{1,5}) tokens/s)?$")
CHARS_PER_TOKEN = 4
TOKENS_PER_CHUNK = 4
INSTANT_CHUNK = 1024  # characters: an instant reply arrives in a handful of deltas
PARAGRAPH = 60  # words


def reply_text(words: int) -> str:
    """The markdown of a reply of `words` words after its bold opening line."""
    numbered = [f"word{i}" for i in range(words)]
    paragraphs = [" ".join(numbered[i : i + PARAGRAPH]) for i in range(0, words, PARAGRAPH)]
    return "\n\n".join([f"Here are **{words} words**.", *paragraphs])


def visible_text(words: int) -> str:
    """What a reader sees of `reply_text(words)`: the same text without the bold marks."""
    return reply_text(words).replace("**", "")


def words_reply(asked: str) -> Reply | None:
    """The reply to a message asking for words, or None when `asked` does not."""
    found = ASKED.search(asked)
    if found is None:
        return None
    text = reply_text(int(found.group(1)))
    rate = int(found.group(2) or 0)
    if rate == 0:
        return Reply(text=text, chunk_size=INSTANT_CHUNK)
    chunk = CHARS_PER_TOKEN * TOKENS_PER_CHUNK
    return Reply(text=text, chunk_size=chunk, delay=TOKENS_PER_CHUNK / rate)
