"""👀 on a person's message while it waits for its answer (PARLEY_TELEGRAM_REACTIONS).

The web process reacts once the message is queued; the worker takes the reaction away when
the turn that answers it ends. The two race: a quick answer can land before the web
process's setMessageReaction does, which would leave 👀 on an answered message for good. So
the message's state is kept in Redis (`parley:tg:reaction:{envelope id}`) and each side
swaps it in one step (SET … GET): the web process marks `setting` before it submits and
`set` once its call returned; the worker marks `done`. Whoever comes second clears the
reaction: the worker when it finds `set`, the web process when it finds `done`. Every call
is paced by the shared budget of its chat, and a failed one is logged, never in the way of
the message or its answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from aiogram.methods import SetMessageReaction
from aiogram.types import ReactionTypeEmoji
from redis.asyncio import Redis

from adapters.places.telegram import Place
from adapters.telegram.client import TelegramCalls
from bot.redis import keys
from bot.vocabulary.envelope import Envelope

log = logging.getLogger(__name__)
QUEUED = "👀"
TAKEN_IN = "✍"  # a message that joined the running turn (Telegram's standard reactions)
KEEP = 86_400  # a message unanswered for a day keeps its 👀; the marker goes


class StatusReactions:
    """The 👀 of the messages of one bot, on both sides of the mailbox."""

    def __init__(self, calls: TelegramCalls, redis: Redis) -> None:
        self.calls = calls
        self.redis = redis
        self._background: set[asyncio.Task[None]] = set()

    def queued_later(self, envelope_id: str, chat_id: int, message_id: int) -> None:
        """`queued`, beside the chat's next updates rather than before them (its call waits
        for the chat's budget)."""
        task = asyncio.create_task(self.queued(envelope_id, chat_id, message_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def stop(self) -> None:
        """The web process is shutting down: reactions on their way are let go."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def marking(self, envelope_id: str) -> None:
        """Before the message is submitted: a worker that answers it before 👀 is even set
        then leaves clearing it to `queued`."""
        with _harmless("marked"):
            await self.redis.set(keys.tg_reaction(envelope_id), "setting", ex=KEEP)

    async def unmark(self, envelope_id: str) -> None:
        """The message was not queued after all (refused): nothing to show."""
        with _harmless("unmarked"):
            await self.redis.delete(keys.tg_reaction(envelope_id))

    async def queued(self, envelope_id: str, chat_id: int, message_id: int) -> None:
        """The message waits in its session's mailbox: 👀 on it, unless its answer came first."""
        with _harmless("set"):
            await self._queued(envelope_id, chat_id, message_id)

    async def answered(self, envelopes: Sequence[Envelope]) -> None:
        """The turn that answers `envelopes` ended: their messages' 👀 go."""
        for envelope in envelopes:
            with _harmless("removed"):
                await self._answered(envelope)

    async def taken_in(self, envelopes: Sequence[Envelope], ids: Sequence[str]) -> None:
        """Those of `envelopes` named by `ids` joined the running turn: their 👀 becomes ✍
        (the turn is writing with them in mind) where the 👀 is on; `answered` takes it away
        at the turn's end as it would the 👀. One whose 👀 is still on its way keeps it."""
        for envelope in envelopes:
            if envelope.id in ids:
                with _harmless("changed"):
                    await self._taken_in(envelope)

    async def _taken_in(self, envelope: Envelope) -> None:
        place = Place.from_reply_to(envelope.reply_to) if envelope.reply_to else None
        if envelope.kind != "message" or place is None or place.message_id is None:
            return
        if await self.redis.get(keys.tg_reaction(envelope.id)) in (b"set", "set"):
            await self._react(place.chat_id, place.message_id, TAKEN_IN)

    async def _queued(self, envelope_id: str, chat_id: int, message_id: int) -> None:
        name = keys.tg_reaction(envelope_id)
        reacted = await self._react(chat_id, message_id, QUEUED)
        before = await self.redis.set(name, "set" if reacted else "failed", ex=KEEP, get=True)
        if before in (b"done", "done"):  # the answer landed while the reaction was on its way
            await self.redis.delete(name)
            if reacted:
                await self._react(chat_id, message_id, None)

    async def _answered(self, envelope: Envelope) -> None:
        place = Place.from_reply_to(envelope.reply_to) if envelope.reply_to else None
        if envelope.kind != "message" or place is None or place.message_id is None:
            return
        name = keys.tg_reaction(envelope.id)
        before = await self.redis.set(name, "done", ex=KEEP, get=True)
        if before in (b"setting", "setting"):
            return  # the web process clears it once its call returns
        await self.redis.delete(name)
        if before in (b"set", "set"):
            await self._react(place.chat_id, place.message_id, None)

    async def _react(self, chat_id: int, message_id: int, emoji: str | None) -> bool:
        """Set (or, with None, remove) the bot's reaction; whether Telegram took it."""
        method = SetMessageReaction(
            chat_id=chat_id,
            message_id=message_id,
            reaction=[ReactionTypeEmoji(emoji=emoji)] if emoji else [],
        )
        return bool(await self.calls.quietly(method, chat_id))


@contextmanager
def _harmless(what: str) -> Iterator[None]:
    """A reaction's step that fails (Redis, the Bot API) is logged, never raised."""
    try:
        yield
    except Exception:
        log.exception("a message's status reaction could not be %s", what)
