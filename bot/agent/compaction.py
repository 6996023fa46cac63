"""Keeping the context under budget: fold older turns into a summary written by the model.

The budget is a share of the window of the model the call goes to, which also writes the
summary: the chat's own model (`/model`), or the fallback a failed call is handed to
(`bot.agent.model_call`), whose window may be smaller than the default model's
(`bot.llm.registry.context_window`), and which answers when the model before it did not.

Cuts happen only at turn starts (a user message without tool results), so a tool call and its
result always stay together. If the model cannot summarise, the older turns are dropped; if
the turns that remain are still too large, the oldest tool outputs among them are blanked.
A person may ask for it too (`/compact`, `force`): then all but the last `keep_turns` turns
are folded whatever the budget, and nothing is dropped without a summary, since they asked
for one rather than for room.
A summary is dated by the oldest message it folds (an earlier summary's date included), not
by when it was written: what it says was said then, and retention goes by that date
(`bot.session.retention`, and the record's `created_at`).

A message holds its files by reference, a few hundred bytes, but the model reads the files
themselves, so each counts for what the model is sent (`file_tokens`): an image about
`IMAGE_TOKENS` (a 1568×1024 image is about 2,100 at Anthropic's w×h/750), a text file its
text, a PDF an estimate from its size (its pages' text and images). The summary names the
files the turns it folds held.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.llm.base import ModelRequest, Provider, SystemPart
from bot.llm.errors import ProviderError
from bot.llm.events import Reset, TextDelta
from bot.llm.retry import RetryPolicy, Sleep, stream_with_retries
from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import (
    WIRE_FIELDS,
    DocumentBlock,
    ImageBlock,
    Message,
    PerMessage,
    TextBlock,
    Thought,
    ToolResultBlock,
    ToolUseBlock,
)

SUMMARY_PREFIX = "Summary of the earlier conversation (older messages were condensed):\n"
SUMMARISER = (
    "You condense chat transcripts. Write a summary that lets the assistant continue the "
    "conversation: facts learned, decisions made, names, numbers, the user's preferences and "
    "any open task. Write it as notes in the conversation's language, no preamble."
)
BLANKED = "[tool output removed to save space]"
TOOL_TEXT_LIMIT = 2000
IMAGE_TOKENS = 1600
PDF_BYTES_A_TOKEN = 16  # rough: a PDF's bytes hold its text compressed and its images
MAX_SHOWN_TOKENS = 50_000  # a text file is cut at 200,000 characters (`bot.llm.media`)


def estimate_tokens(messages: Sequence[Message], sizes: PerMessage[int] | None = None) -> int:
    """About four characters a token: cheap, and close enough to steer a budget. With
    `sizes` kept from the previous call, only the messages added since are measured."""
    if sizes is None:
        return sum(map(_wire_size, messages)) // 4
    return sum(sizes.values(messages)) // 4


def context_sizes() -> PerMessage[int]:
    """The sizes `estimate_tokens` keeps for one conversation."""
    return PerMessage(_wire_size)


def _wire_size(message: Message) -> int:
    """A message's size as the model reads it: its files at what they cost, its thinking
    not at all (an API reads a turn's thinking only while that turn goes on)."""
    files = sum(file_tokens(block.file) for block in message.attached) * 4
    thoughts = sum(len(b.model_dump_json()) for b in message.content if isinstance(b, Thought))
    return len(message.model_dump_json(include=WIRE_FIELDS)) + files - thoughts


def file_tokens(ref: FileRef) -> int:
    """About what the model reads of a file, in tokens (see the module doc)."""
    if ref.is_image:
        return IMAGE_TOKENS
    if ref.is_pdf:
        return max(IMAGE_TOKENS, ref.size // PDF_BYTES_A_TOKEN)
    return min(ref.size // 4, MAX_SHOWN_TOKENS)


def estimate_text_tokens(*texts: str) -> int:
    return sum(len(t) for t in texts) // 4


def overhead_tokens(request: ModelRequest) -> int:
    """About how many tokens a request's system prompt and tools take: its texts and its
    tools' JSON list (`ToolSpec.encoded_size`, each measured once), four characters a token."""
    tools = request.tools
    listed = 2 + sum(spec.encoded_size for spec in tools) + 2 * max(len(tools) - 1, 0)
    return (sum(len(part.text) for part in request.system) + listed) // 4


@dataclass(frozen=True)
class Compaction:
    messages: list[Message]
    tokens_before: int
    tokens_after: int
    summarized: bool
    folded: int


class Compactor:
    """Folds a context for the model its call goes to: the budget is a share (`threshold`)
    of that model's window (`window`, by model name), and that model writes the summary. A
    chat switched to a model with a smaller window than the default's (`/model`), or a call
    handed to a fallback, is folded for the window it is sent to, not the default's."""

    def __init__(
        self,
        provider: Provider,
        retry: RetryPolicy,
        sleep: Sleep,
        *,
        window: Callable[[str], int],
        threshold: float,
        keep_turns: int,
        max_tokens: int,
    ) -> None:
        self.provider = provider
        self.retry = retry
        self.sleep = sleep
        self.window = window
        self.threshold = threshold
        self.keep_turns = keep_turns
        self.max_tokens = max_tokens

    def budget(self, model: str) -> int:
        """The tokens a context sent to `model` may take before it is folded."""
        return int(self.window(model) * self.threshold)

    def needed(
        self,
        messages: Sequence[Message],
        overhead: int,
        model: str,
        sizes: PerMessage[int] | None = None,
    ) -> bool:
        return overhead + estimate_tokens(messages, sizes) > self.budget(model)

    async def compact(
        self, messages: list[Message], overhead: int, model: str, *, force: bool = False
    ) -> Compaction | None:
        """A smaller context when `messages` plus `overhead` tokens exceed `model`'s budget.

        With `force`, whatever the budget: None when there is nothing to fold (no turn before
        the kept ones but an earlier summary), and the context unchanged (`summarized` False,
        nothing `folded`) when the model could not summarise it."""
        budget = self.budget(model)
        before = overhead + estimate_tokens(messages)
        if before <= budget and not force:
            return None
        cut = self._cut(messages, overhead, budget, force=force)
        older, kept = messages[:cut], [m.model_copy(deep=True) for m in messages[cut:]]
        if force and all(message.summary for message in older):
            return None
        summarized = False
        if older:
            summary = await self._summarise(older, model, budget)
            if summary:
                kept.insert(
                    0,
                    Message(
                        role="user",
                        summary=True,
                        content=[TextBlock(text=SUMMARY_PREFIX + summary)],
                        at=min(message.at for message in older),  # said when they were
                    ),
                )
                summarized = True
            elif force:
                return Compaction(messages, before, before, summarized=False, folded=0)
        _blank_old_tool_output(kept, budget - overhead)
        after = overhead + estimate_tokens(kept)
        return Compaction(kept, before, after, summarized, len(older))

    def _cut(
        self, messages: Sequence[Message], overhead: int, budget: int, *, force: bool = False
    ) -> int:
        """Where the kept turns begin: at most `keep_turns`, within half the budget. Forced,
        the first turn is one of them too: a conversation of `keep_turns` keeps them all."""
        starts = [i for i, m in enumerate(messages) if m.starts_turn and (i > 0 or force)]
        if not starts:
            return 0
        room = budget // 2 - overhead
        candidates = starts[-self.keep_turns :]
        for start in candidates:
            if estimate_tokens(messages[start:]) <= room:
                return start
        return candidates[-1]

    async def _summarise(self, older: Sequence[Message], model: str, budget: int) -> str | None:
        transcript = _transcript(older, limit_tokens=max(budget // 2, 1000))
        request = ModelRequest(
            model=model,
            system=[SystemPart(SUMMARISER)],
            messages=[Message(role="user", content=[TextBlock(text=transcript)])],
            max_tokens=min(self.max_tokens, 2048),
        )
        parts: list[str] = []
        try:
            async for event in stream_with_retries(self.provider, request, self.retry, self.sleep):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, Reset):
                    parts.clear()
        except ProviderError:
            return None
        return "".join(parts).strip() or None


def _transcript(messages: Sequence[Message], *, limit_tokens: int) -> str:
    lines: list[str] = []
    for message in messages:
        who = "Summary so far" if message.summary else message.role.capitalize()
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                lines.append(f"{who}: {block.text}")
            elif isinstance(block, ToolUseBlock):
                lines.append(f"Assistant called {block.name}({json.dumps(block.input)})")
            elif isinstance(block, ToolResultBlock):
                lines.append(f"Tool result: {block.content[:TOOL_TEXT_LIMIT]}")
            elif isinstance(block, ImageBlock | DocumentBlock):
                ref = block.file
                lines.append(f"{who} sent a file: {ref.name or 'unnamed'} ({ref.media_type})")
    text = "\n".join(lines)
    limit_chars = limit_tokens * 4
    return text if len(text) <= limit_chars else "[…]\n" + text[-limit_chars:]


def _blank_old_tool_output(messages: list[Message], room: int) -> None:
    """Replace tool outputs, oldest first, until the messages fit in `room` tokens."""
    for message in messages[:-1]:
        if estimate_tokens(messages) <= room:
            return
        for index, block in enumerate(message.content):
            if isinstance(block, ToolResultBlock) and block.content != BLANKED:
                message.content[index] = block.model_copy(update={"content": BLANKED})
