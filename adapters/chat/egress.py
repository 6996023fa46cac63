"""A chat platform's egress, the same shape on every platform: a reply stream per turn, and
approval prompts that show their outcome when they expire without a press.

A platform subclasses `ChatEgress` with how to open its reply (`open`), how a remembered
prompt shows an outcome (`show_outcome`) and how to release its connections (`aclose`). Its
replies read the files tools made from `files`, the store every process shares.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from adapters.chat.pacing import PacedCalls
from adapters.chat.replies import ReplyStore
from bot.files.store import FileStore
from bot.redis.confirmations import Confirmation, Status
from bot.session.egress import ReplyStream
from bot.vocabulary.envelope import Envelope

Calls = TypeVar("Calls", bound=PacedCalls)


class ChatEgress(ABC, Generic[Calls]):
    """An `Egress` for a chat platform; see the module docstring."""

    def __init__(self, calls: Calls, store: ReplyStore, files: FileStore) -> None:
        self.calls = calls
        self.store = store
        self.files = files

    @abstractmethod
    def open(self, envelopes: Sequence[Envelope]) -> ReplyStream:
        """A reply to `envelopes`, keyed by the first one (see `StreamedReply`)."""

    @abstractmethod
    async def show_outcome(self, prompt: dict[str, Any], status: Status) -> None:
        """Make the prompt remembered as `prompt` say how it ended, without its buttons."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release the platform client's connections."""

    async def show_answers(self, prompt: dict[str, Any], confirmation: Confirmation) -> None:
        """Make an `ask_user` prompt remembered as `prompt` show where `confirmation` stands
        (its answers, how it ended); a platform without question prompts shows the outcome."""
        await self.show_outcome(prompt, confirmation.status)

    async def expired(self, confirmation: Confirmation) -> None:
        """A prompt that ended without a press (it expired; a question a typed reply
        answered) says so and loses its buttons, so nobody presses it in vain."""
        found = await self.store.load_prompt(confirmation.id)
        if found is None:
            return
        if confirmation.is_question:
            await self.show_answers(found, confirmation)
        else:
            await self.show_outcome(found, confirmation.status)
