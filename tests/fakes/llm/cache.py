"""Prompt-cache emulation, so tests can see whether Parley's requests would hit the cache.

Tokens are estimated as a quarter of the canonical JSON length. Anthropic: a `cache_control`
breakpoint writes the prefix up to its block (tools → system → messages) if it is at least the
minimum length; a later request reads the longest written prefix that ends at a block boundary
up to 20 blocks before one of its breakpoints. OpenAI: prefixes of 1024+ tokens seen before are
read automatically, in 128-token steps.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

LOOKBACK = 20


def tokens(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True)) // 4


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    cache_read: int
    cache_write: int


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """Every block of the prompt in cache order, with whether it carries a breakpoint."""
    out: list[tuple[dict[str, Any], bool]] = []
    for tool in body.get("tools", []):
        out.append(({"tool": _strip(tool)}, "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str):
        out.append(({"system": system}, False))
    for block in system if isinstance(system, list) else []:
        out.append(({"system": _strip(block)}, "cache_control" in block))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            out.append(({message.get("role", ""): _strip(block)}, "cache_control" in block))
    return out


class PromptCache:
    def __init__(self, min_tokens: int) -> None:
        self.min_tokens = min_tokens
        self._written: dict[str, set[str]] = {}

    def anthropic(self, model: str, body: dict[str, Any]) -> Usage:
        blocks = anthropic_blocks(body)
        hashes, totals = _prefixes([b for b, _ in blocks])
        written = self._written.setdefault("anthropic:" + model, set())
        marks = [i for i, (_, mark) in enumerate(blocks) if mark]
        read = 0
        for mark in marks:
            for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if hashes[j] in written:
                    read = max(read, totals[j])
                    break
        cached_to = read
        for mark in marks:
            if totals[mark] >= self.min_tokens:
                written.add(hashes[mark])
                cached_to = max(cached_to, totals[mark])
        total = totals[-1] if totals else 0
        return Usage(total - cached_to, read, cached_to - read)

    def openai(self, model: str, body: dict[str, Any]) -> Usage:
        parts: list[Any] = [{"tools": body.get("tools", [])}, *body.get("messages", [])]
        hashes, totals = _prefixes(parts)
        seen = self._written.setdefault("openai:" + model, set())
        read = max((t for h, t in zip(hashes, totals, strict=True) if h in seen), default=0)
        read = read // 128 * 128 if read >= 1024 else 0
        seen.update(hashes)
        return Usage(totals[-1] - read, read, 0)


def _prefixes(parts: list[Any]) -> tuple[list[str], list[int]]:
    digest = hashlib.sha256()
    hashes: list[str] = []
    totals: list[int] = []
    running = 0
    for part in parts:
        text = json.dumps(part, sort_keys=True)
        digest.update(text.encode())
        hashes.append(digest.copy().hexdigest())
        running += len(text) // 4
        totals.append(running)
    return hashes, totals
