"""`/activation mention|always`: whether the bot answers every message in a group or
channel, or only those addressed to it (a mention, a reply to it), chosen by its admins;
and the guards that keep a chat that answers everything from answering bots.

The choice is kept in SQL (`bot.store.chats`), so it outlives Redis, and the web process
reads it for every message in a group through Redis (`parley:chat:{chat}:activation`, with a
TTL): a read that misses fills it with `SET NX`, and whoever changes the choice writes SQL
first and then the cache with a plain `SET`, so a filler that read the old row can never
overwrite the new value, and every web process sees a change at its next message. A database
that cannot be read costs a message its chat's choice (the default applies), never the message.

Bots: a message from a bot is never a turn, in any mode (each platform drops them where it
reads them: Telegram's `from.is_bot`, Slack's `bot_id` and its subtypes). In a chat that
answers everything, a message not addressed to the bot is a turn only when a person wrote it
themselves (not relayed by a bot: Telegram's `via_bot`), and only `BURST` of them a minute
per chat (`parley:chat:{chat}:burst`): past that, such messages are let go until the minute
is over, so a bridge or an integration that posts as a person cannot drive the bot in a loop.
Messages addressed to it are not counted: each is still one person asking.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import done, text
from bot.store.chats import ChatSettings
from bot.vocabulary.chat_settings import ACTIVATIONS, Activation

log = logging.getLogger(__name__)
CACHED_FOR = 3600  # seconds; a change is written through, so this only bounds memory
DEFAULT = "default"  # cached for a chat that chose nothing
BURST = 12  # unaddressed messages that start turns, per chat and minute, at most
SAID = {
    "mention": "I answer here when someone mentions me or replies to me.",
    "always": "I answer every message here.",
}
HOW = "An admin may switch with {command} mention or {command} always."


@dataclass(frozen=True)
class Activations:
    redis: Redis
    chats: ChatSettings

    async def always(self, chat: str, *, default: Activation) -> bool:
        """Whether the bot answers every message in `chat`; `default` where none was chosen."""
        return await self.current(chat, default=default) == "always"

    async def current(self, chat: str, *, default: Activation) -> Activation:
        key = keys.chat_activation(chat)
        cached = await done(self.redis.get(key))
        if cached is None:
            try:
                chosen = await self.chats.activation(chat)
            except Exception:  # the message is worth more than its chat's choice
                log.warning("could not read the activation of %s", chat, exc_info=True)
                return default
            await self.redis.set(key, chosen or DEFAULT, nx=True, ex=CACHED_FOR)
        else:
            value = text(cached)
            chosen = "always" if value == "always" else "mention" if value == "mention" else None
        return chosen or default

    async def choose(self, chat: str, activation: Activation) -> None:
        """Keep `activation` for `chat`: in SQL, then in every process's cache."""
        await self.chats.set_activation(chat, activation)
        await self.redis.set(keys.chat_activation(chat), activation, ex=CACHED_FOR)

    async def within_burst(self, chat: str) -> bool:
        """Count an unaddressed message in `chat`; whether it is within this minute's `BURST`."""
        key = keys.chat_burst(chat)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, 60, nx=True)
            count, _ = await pipe.execute()
        return int(count) <= BURST

    async def answer(
        self, chat: str, said: str, *, default: Activation, may_change: bool, command: str
    ) -> str:
        """The answer to `command` with `said` after it, in the group or channel `chat`."""
        wanted = said.strip().lower()
        current = await self.current(chat, default=default)
        if not wanted:
            return f"{SAID[current]} {HOW.format(command=command)}"
        if wanted not in ACTIVATIONS:
            return f"There is no activation {wanted[:40]!r}. {HOW.format(command=command)}"
        if not may_change:
            return f"{SAID[current]} Only an admin may change it."
        await self.choose(chat, "always" if wanted == "always" else "mention")
        return f"From now on: {SAID[wanted]}"
