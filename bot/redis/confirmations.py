"""Confirmations: approval requests for tool calls that wait for a person.

A confirmation is created when a turn suspends. Whoever decides first wins, atomically in Redis:
the person (approve or deny), or the expiry (which denies). The winner then submits a
decision envelope to the session, so the turn resumes in order with the other messages.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Literal

from pydantic import BaseModel, Field
from redis.asyncio import Redis

from bot.redis import keys

Status = Literal["pending", "approved", "denied", "expired", "declined"]
Outcome = Literal["ok", "unknown", "expired", "decided", "forbidden"]

_DECIDE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 'unknown' end
local request = cjson.decode(raw)
if request['status'] ~= 'pending' then return 'decided' end
local expiring = ARGV[1] == 'expired'
if not expiring and tonumber(ARGV[3]) >= tonumber(request['expires_at']) then return 'expired' end
if not expiring and ARGV[4] ~= '1' and ARGV[2] ~= request['requester'] then return 'forbidden' end
request['status'] = ARGV[1]
request['decided_by'] = ARGV[2]
request['decided_at'] = tonumber(ARGV[3])
redis.call('SET', KEYS[1], cjson.encode(request), 'KEEPTTL')
return 'ok'
"""


class CallSummary(BaseModel):
    call_id: str
    name: str
    arguments: dict[str, Any]


class Confirmation(BaseModel):
    id: str
    session: str
    envelope_id: str
    requester: str
    calls: list[CallSummary]
    expires_at: float
    can_remember: bool = True
    platform: str = "http"
    reply_to: dict[str, Any] = Field(default_factory=dict)
    status: Status = "pending"
    decided_by: str | None = None
    decided_at: float | None = None


def _valid(confirmation_id: str) -> bool:
    """Ids are short url-safe tokens; anything else is refused before touching Redis."""
    return (
        0 < len(confirmation_id) <= 32
        and confirmation_id.replace("-", "").replace("_", "").isalnum()
    )


class Confirmations:
    def __init__(self, redis: Redis, *, keep: int = 7 * 86_400) -> None:
        self.redis = redis
        self.keep = keep
        self._decide = redis.register_script(_DECIDE)

    async def create(
        self,
        session: str,
        envelope_id: str,
        requester: str,
        calls: list[CallSummary],
        ttl: float,
        *,
        can_remember: bool = True,
        platform: str = "http",
        reply_to: dict[str, Any] | None = None,
    ) -> Confirmation:
        confirmation = Confirmation(
            id=secrets.token_urlsafe(9),
            session=session,
            envelope_id=envelope_id,
            requester=requester,
            calls=calls,
            expires_at=time.time() + ttl,
            can_remember=can_remember,
            platform=platform,
            reply_to=reply_to or {},
        )
        await self.redis.set(
            keys.confirmation(confirmation.id),
            confirmation.model_dump_json(),
            ex=int(ttl) + self.keep,
        )
        return confirmation

    async def get(self, confirmation_id: str) -> Confirmation | None:
        if not _valid(confirmation_id):
            return None
        raw = await self.redis.get(keys.confirmation(confirmation_id))
        return Confirmation.model_validate_json(raw) if raw else None

    async def decide(
        self, confirmation_id: str, status: Status, by: str, *, is_admin: bool = False
    ) -> Outcome:
        """Move a pending confirmation to `status` if `by` may decide and it has not expired."""
        if not _valid(confirmation_id):
            return "unknown"
        result = await self._decide(
            keys=[keys.confirmation(confirmation_id)],
            args=[status, by, time.time(), "1" if is_admin else "0"],
        )
        outcome: Outcome = result.decode() if isinstance(result, bytes) else str(result)  # type: ignore[assignment]
        return outcome
