"""What a run ran with: its configuration whole, the deployment's settings filled in where
the run chose none, as the record keeps it (`runs.config`) and an operator compares runs by.

A run's `RunConfig` names only what it changed; two runs with none may still differ, since
the settings, the persona files, the skills and a chat's instructions change under them. So
the record keeps what was in force: the model asked for (the one that answered, a fallback
maybe, is the run's `model`), the mode, the tools offered (after a chat switched some off)
and a hash of them, the output schema, the limits, the sampling, and a hash of each part of
the system prompt that an operator changes (the bootstrap files, the skills' listing, the
standing instructions), with one of them all to group by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.vocabulary.run_config import Mode

HASH_LENGTH = 12  # hex characters: enough to tell a deployment's prompts and tool sets apart


def short_hash(parts: Iterable[str]) -> str:
    """A short, stable hash of `parts`, in order (each ended so that ("ab", "c") differs
    from ("a", "bc"))."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.hexdigest()[:HASH_LENGTH]


class PromptParts(BaseModel):
    """The hashes of the system prompt's parts an operator changes, and of them all."""

    model_config = ConfigDict(frozen=True)

    hash: str
    bootstrap: str  # AGENTS.md, SOUL.md, USER.md… as read
    skills: str  # the listing of the skills offered
    instructions: str  # the chat's standing instruction and the person's own

    @classmethod
    def of(cls, bootstrap: str, skills: str, instructions: str) -> PromptParts:
        parts = [short_hash([bootstrap]), short_hash([skills]), short_hash([instructions])]
        return cls(
            hash=short_hash(parts), bootstrap=parts[0], skills=parts[1], instructions=parts[2]
        )


class RanWith(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    mode: Mode
    tools: tuple[str, ...]  # offered, sorted
    tools_hash: str
    output_schema: dict[str, Any] | None = None
    timeout: float  # seconds
    token_budget: int | None = None
    max_steps: int | None = None
    reasoning: str
    temperature: float | None = None
    top_p: float | None = None
    retry_attempts: int
    prompt: PromptParts
