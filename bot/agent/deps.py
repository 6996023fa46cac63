"""What a run is given: the agent's parts, built once by the composition root, and what one
turn asks for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.agent.attachments import Attachments
from bot.agent.compaction import Compactor
from bot.agent.joining import Joining
from bot.agent.prompt import PromptBuilder
from bot.agent.replayed import RecordedCalls
from bot.config.settings import Settings
from bot.llm.base import Provider
from bot.llm.retry import RetryPolicy, Sleep
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.tools.policy import Policy
from bot.vocabulary.chat_settings import ChatRules
from bot.vocabulary.files import FileRef
from bot.vocabulary.run_config import RunConfig


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class AgentDeps:
    """Everything the loop needs, built once by the composition root."""

    settings: Settings
    provider: Provider
    model: str
    tools: ToolRegistry
    executor: ToolExecutor
    policy: Policy
    prompt: PromptBuilder
    compactor: Compactor
    retry: RetryPolicy
    sleep: Sleep = asyncio.sleep
    fallbacks: tuple[str, ...] = ()  # PARLEY_FALLBACK_MODELS, in order
    attachments: Attachments | None = None  # files tools made; None: none is sent
    clock: Callable[[], datetime] = _utcnow


@dataclass(frozen=True)
class TurnRequest:
    """A new user message (`text`), decisions on waiting calls (call id → approved), or
    neither: continue the turn saved in the state (after the worker running it died).
    `answers` are the results of waiting `ask_user` calls (call id → what the model reads);
    with a `text` too, they settle the waiting calls before the new message is taken in."""

    ctx: ToolContext
    text: str | None = None
    attachments: tuple[FileRef, ...] = ()  # the files sent with the text
    decisions: Mapping[str, bool] | None = None
    answers: Mapping[str, str] | None = None
    envelope_ids: tuple[str, ...] = ()
    deny_note: str = "Denied by the user."
    model: str | None = None
    memory: tuple[str, ...] = ()  # what the scope remembers, for the system prompt
    recalled: tuple[str, ...] = ()  # memories that stand out for `text`, to go with it
    replay: RecordedCalls | None = None  # a replay's: what its calls that change things answer
    allowed: tuple[str, ...] = ()  # tools the person always allows in this chat (grants)
    chat_rules: ChatRules = field(default_factory=ChatRules)  # what the chat's admins chose
    config: RunConfig = field(default_factory=RunConfig)  # how it is to run (an API run)
    joining: Joining | None = None  # the messages that join it as it runs (steering), if any
