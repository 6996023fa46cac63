"""A chat platform's egress, the same shape on every platform: a reply stream per turn, and
approval prompts that show their outcome when they expire without a press, and are recalled
to their person once a while before that (`remind`).

A platform subclasses `ChatEgress` with how to open its reply (`open`), how a remembered
prompt shows an outcome (`show_outcome`), how a reminder is posted beside it
(`post_reminder`) and how to release its connections (`aclose`). Its
replies read the files tools made from `files`, the store every process shares.
"""

from __future__ import annotations

import time
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


def reminder_text(confirmation: Confirmation) -> str:
    """What the reminder says after the person's name."""
    minutes = max(1, round((confirmation.expires_at - time.time()) / 60))
    what = "question" if confirmation.is_question else "approval request"
    return f"this {what} is still waiting for you; it expires in {minutes} min. ⏰"


class ChatEgress(ABC, Generic[Calls]):
    """An `Egress` for a chat platform; see the module docstring."""

    def __init__(self, calls: Calls, store: ReplyStore, files: FileStore) -> None:
        self.calls = calls
        self.store = store
        self.files = files

    @abstractmethod
    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> ReplyStream:
        """A reply to `envelopes`, keyed by the first one (see `StreamedReply`); `fresh`:
        nothing was posted for it yet (`Egress.open`)."""

    @abstractmethod
    async def show_outcome(self, prompt: dict[str, Any], status: Status) -> None:
        """Make the prompt remembered as `prompt` say how it ended, without its buttons."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release the platform client's connections."""

    @abstractmethod
    async def post_reminder(
        self, prompt: dict[str, Any], confirmation: Confirmation, text: str
    ) -> None:
        """Post `text` beside the prompt remembered as `prompt`, naming the person who is
        to answer it so that they are notified."""

    async def remind(self, confirmation: Confirmation) -> None:
        """A prompt that still waits gets a short note beside it that names its person."""
        found = await self.store.load_prompt(confirmation.id)
        if found is not None:
            await self.post_reminder(found, confirmation, reminder_text(confirmation))

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
