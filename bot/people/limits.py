"""Fair limits per person, the same on every platform and shared by every process: messages in
any minute (PARLEY_USER_MESSAGES_PER_MINUTE) and tokens a day (PARLEY_USER_TOKENS_PER_DAY).

Ingress asks `check` before it submits a person's message: a message over a limit is never
submitted, so it costs no model call. The minute is a sliding window kept in one Lua script
(trim, count, add), so two web processes taking messages of the same person at once cannot
both let the 21st in; its clock is Redis's, so the processes' clocks do not matter. A
message is counted by its key, so a platform's redelivery of it is not counted twice.

The worker adds a turn's tokens with `charge` where it records the turn; the day's hash keeps
the turn's envelope id next to the total, so a turn recorded again after a crash counts once.
The turn that crosses the budget finishes; the next message is refused. Admins are exempt;
scheduled runs and commands never pass through `check` (a run is the person's earlier
request, and /usage or /stop must work most of all when someone is over a limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from redis.asyncio import Redis

from bot.config.settings import Settings
from bot.redis import keys
from bot.redis.results import done, text
from bot.vocabulary.runs import RunRecord

WINDOW_MS = 60_000
DAY_TTL = 2 * 86_400  # a day's tokens outlive it, so a turn ending after midnight finds it
TOO_MANY = "You have sent {n} in the last minute; you can write again in {wait}."
NO_TOKENS = (
    "You have used your {budget:,} tokens for today; the budget renews at 00:00 UTC, in {wait}."
)

# Returns {1, count} when the message is let in (and counted), {0, count, ms to wait} when not.
# Past the limit, the wait is until the message that makes room leaves the window.
_TAKE = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return {1, count} end
if count >= limit then
  local room = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, count, math.max(1, tonumber(room[2]) + window - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return {1, count + 1}
"""
_COUNT = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. (now - tonumber(ARGV[1])), '+inf')
"""
_CHARGE = """
if redis.call('HSETNX', KEYS[1], 'turn:' .. ARGV[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return tonumber(redis.call('HGET', KEYS[1], 'tokens')) or 0
"""


@dataclass(frozen=True)
class Refusal:
    """Why a message was not taken, and when the person may write again."""

    kind: Literal["messages", "tokens"]
    retry_after: float  # seconds
    text: str
    told: str  # the key that marks the person as told, for this window

    @property
    def retry_seconds(self) -> int:
        """Whole seconds, rounded up: what a `Retry-After` header carries."""
        return max(1, math.ceil(self.retry_after))


@dataclass(frozen=True)
class Standing:
    """Where a person is against their limits right now, for /usage."""

    exempt: bool
    messages_left: int
    messages_limit: int
    tokens_used: int
    tokens_budget: int | None
    renews_in: float


class Limits:
    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._take = redis.register_script(_TAKE)
        self._count = redis.register_script(_COUNT)
        self._charge = redis.register_script(_CHARGE)

    def exempt(self, person: str) -> bool:
        return self.settings.is_admin(person)

    async def check(self, person: str, message: str) -> Refusal | None:
        """Count `message` (a key unique to it) against `person`'s minute and return None,
        or say why it must not be submitted; a refused message is not counted."""
        if self.exempt(person):
            return None
        if (refusal := await self._over_budget(person)) is not None:
            return refusal
        limit = self.settings.user_messages_per_minute
        taken = await self._take(
            keys=[keys.limit(person, "messages")], args=[limit, WINDOW_MS, message]
        )
        if int(taken[0]) == 1:
            return None
        wait = int(taken[2]) / 1000
        return Refusal(
            "messages",
            wait,
            TOO_MANY.format(n=messages(int(taken[1])), wait=duration(wait)),
            keys.limit(person, "told:messages"),
        )

    async def _over_budget(self, person: str) -> Refusal | None:
        budget = self.settings.user_tokens_per_day
        if budget is None:
            return None
        now = datetime.now(UTC)
        if await self.tokens_used(person, now) < budget:
            return None
        wait = until_midnight(now)
        return Refusal(
            "tokens",
            wait,
            NO_TOKENS.format(budget=budget, wait=duration(wait)),
            keys.limit(person, f"told:tokens:{day(now)}"),
        )

    async def first_telling(self, refusal: Refusal) -> bool:
        """True once per window: in a group everyone sees the answer, so it is said once."""
        ttl = refusal.retry_seconds
        return bool(await self.redis.set(refusal.told, "1", nx=True, ex=ttl))

    async def tokens_used(self, person: str, now: datetime | None = None) -> int:
        """The tokens of `person`'s turns since 00:00 UTC."""
        key = keys.limit(person, f"tokens:{day(now or datetime.now(UTC))}")
        value = await done(self.redis.hget(key, "tokens"))
        return int(text(value)) if value is not None else 0

    async def charge(self, person: str, turn: str, tokens: int) -> int:
        """Add a turn's tokens to `person`'s day, once per `turn` (its first envelope id);
        returns the day's total."""
        key = keys.limit(person, f"tokens:{day(datetime.now(UTC))}")
        return int(await self._charge(keys=[key], args=[turn, max(0, tokens), DAY_TTL]))

    async def charge_turn(self, record: RunRecord) -> None:
        """A recorded turn's tokens (in, cached and out) count against its person's day; its
        first envelope id keys it, so a turn recorded again after a crash counts once."""
        if record.sender and record.envelope_ids:
            usage = record.usage
            tokens = usage.prompt_tokens + usage.output_tokens
            await self.charge(record.sender, record.envelope_ids[0], tokens)

    async def standing(self, person: str) -> Standing:
        now = datetime.now(UTC)
        limit = self.settings.user_messages_per_minute
        sent = int(await self._count(keys=[keys.limit(person, "messages")], args=[WINDOW_MS]))
        return Standing(
            exempt=self.exempt(person),
            messages_left=max(0, limit - sent),
            messages_limit=limit,
            tokens_used=await self.tokens_used(person, now),
            tokens_budget=self.settings.user_tokens_per_day,
            renews_in=until_midnight(now),
        )


def day(now: datetime) -> str:
    return now.astimezone(UTC).date().isoformat()


def until_midnight(now: datetime) -> float:
    """Seconds until the next 00:00 UTC, when every daily budget renews."""
    tomorrow = datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), datetime.min.time())
    return (tomorrow.replace(tzinfo=UTC) - now).total_seconds()


def messages(n: int) -> str:
    return f"{n} message" if n == 1 else f"{n} messages"


def duration(seconds: float) -> str:
    """A wait as a person reads it: `35 s`, `12 min`, `3 h 12 min` (rounded up)."""
    whole = max(1, math.ceil(seconds))
    if whole <= 60:
        return f"{whole} s"
    minutes = math.ceil(whole / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"
