"""Prompt-cache emulation, so tests can see whether Parley's requests would hit the cache.

Tokens are estimated as a quarter of the canonical JSON length. Anthropic, as its prompt
caching documents: a `cache_control` breakpoint writes the prefix up to its block (tools →
system → messages) if it is at least the minimum length; a later request with the same model
reads the longest written prefix that ends at a block boundary up to 20 blocks before one of
its breakpoints. An entry lives 5 minutes (or an hour with `"ttl": "1h"`) from its last
write or read; `input_tokens` counts only what comes after the last read or written prefix.
OpenAI: prefixes of 1024+ tokens seen before are read automatically, in 128-token steps.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LOOKBACK = 20
TTL_S = {"5m": 300.0, "1h": 3600.0}


def tokens(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True)) // 4


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _ttl(block: dict[str, Any]) -> str | None:
    """The lifetime a block's breakpoint asks for, or None without one."""
    mark = block.get("cache_control")
    return str(mark.get("ttl", "5m")) if isinstance(mark, dict) else None


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    cache_read: int
    cache_write: int
    cache_write_1h: int = 0  # of `cache_write`, what was written for an hour


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[dict[str, Any], str | None]]:
    """Every block of the prompt in cache order, with the TTL of its breakpoint (or None)."""
    out: list[tuple[dict[str, Any], str | None]] = []
    for tool in body.get("tools", []):
        out.append(({"tool": _strip(tool)}, _ttl(tool)))
    system = body.get("system")
    if isinstance(system, str):
        out.append(({"system": system}, None))
    for block in system if isinstance(system, list) else []:
        out.append(({"system": _strip(block)}, _ttl(block)))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            out.append(({message.get("role", ""): _strip(block)}, _ttl(block)))
    return out


class PromptCache:
    """What each model's cache holds: prefix hash → when the entry lapses."""

    def __init__(self, min_tokens: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.min_tokens = min_tokens
        self.clock = clock
        self._written: dict[str, dict[str, float]] = {}
        self._seen: dict[str, set[str]] = {}

    def anthropic(self, model: str, body: dict[str, Any]) -> Usage:
        blocks = anthropic_blocks(body)
        hashes, totals = _prefixes([b for b, _ in blocks])
        now = self.clock()
        written = self._written.setdefault("anthropic:" + model, {})
        for lapsed in [h for h, until in written.items() if until <= now]:
            del written[lapsed]
        marks = [(i, ttl) for i, (_, ttl) in enumerate(blocks) if ttl is not None]
        read, read_at = 0, -1
        for mark, _ in marks:
            for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if hashes[j] in written:
                    if totals[j] > read:
                        read, read_at = totals[j], j
                    break
        if read_at >= 0:  # a read refreshes the entry it read
            written[hashes[read_at]] = max(written[hashes[read_at]], now + TTL_S["5m"])
        cached_to, hour_to = read, read
        for mark, ttl in marks:
            if totals[mark] >= self.min_tokens and totals[mark] > read:
                lifetime = TTL_S.get(ttl, TTL_S["5m"])
                written[hashes[mark]] = max(written.get(hashes[mark], 0.0), now + lifetime)
                cached_to = max(cached_to, totals[mark])
                if ttl == "1h":  # hour-long breakpoints come before the 5-minute ones
                    hour_to = max(hour_to, totals[mark])
        total = totals[-1] if totals else 0
        return Usage(total - cached_to, read, cached_to - read, hour_to - read)

    def openai(self, model: str, body: dict[str, Any]) -> Usage:
        parts: list[Any] = [{"tools": body.get("tools", [])}, *body.get("messages", [])]
        hashes, totals = _prefixes(parts)
        seen = self._seen.setdefault("openai:" + model, set())
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
