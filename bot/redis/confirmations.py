"""Confirmations: approval requests for tool calls that wait for a person.

A confirmation is created when a turn suspends. Whoever decides first wins, atomically in Redis:
the person (approve or deny), or the expiry. The winner then submits a decision envelope to
the session, so the turn resumes in order with the other messages.

A helper's confirmation is asked in its parent's chat: the parent marks it (`show_in`) with
that chat's platform and the helper's task, while its run (its `platform`, `reply_to`, the
decision that resumes it) stays the helper's own.

A confirmation with `questions` is an `ask_user` call's: it is answered rather than approved,
question by question (a press answers the question it was shown for, and a press for one
already answered is `stale`), or all at once (the HTTP API, or a typed reply that answers the
rest in the person's own words). The last answer makes it `answered`, in the same step.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, field_validator
from redis.asyncio import Redis

from bot.redis import keys
from bot.vocabulary.questions import Answer, Question

# `withdrawn`: its helper was stopped while it waited (`bot.session.helpers`).
Status = Literal["pending", "approved", "denied", "expired", "declined", "answered", "withdrawn"]
Outcome = Literal["ok", "unknown", "expired", "decided", "forbidden", "partial", "stale"]
_ANSWERS = TypeAdapter(list[Answer])

_DECIDE = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 'unknown' end
local request = cjson.decode(raw)
if request['status'] ~= 'pending' then return 'decided' end
local asked = request['questions']
local approving = ARGV[1] == 'approved' or ARGV[1] == 'denied'
if approving and type(asked) == 'table' and #asked > 0 then return 'unknown' end
local expiring = ARGV[1] == 'expired'
if not expiring and tonumber(ARGV[3]) >= tonumber(request['expires_at']) then return 'expired' end
if not expiring and ARGV[4] ~= '1' and ARGV[2] ~= request['requester'] then return 'forbidden' end
request['status'] = ARGV[1]
request['decided_by'] = ARGV[2]
request['decided_at'] = tonumber(ARGV[3])
redis.call('SET', KEYS[1], cjson.encode(request), 'KEEPTTL')
return 'ok'
"""

_ANSWER = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 'unknown' end
local request = cjson.decode(raw)
if request['status'] ~= 'pending' then return 'decided' end
if tonumber(ARGV[2]) >= tonumber(request['expires_at']) then return 'expired' end
if ARGV[3] ~= '1' and ARGV[1] ~= request['requester'] then return 'forbidden' end
local asked = request['questions']
if type(asked) ~= 'table' or #asked == 0 then return 'unknown' end
local answers = request['answers']
if type(answers) ~= 'table' then answers = {} end
if tonumber(ARGV[4]) ~= #answers then return 'stale' end
for _, answer in ipairs(cjson.decode(ARGV[5])) do
  if #answers < #asked then table.insert(answers, answer) end
end
request['answers'] = answers
if #answers < #asked then
  redis.call('SET', KEYS[1], cjson.encode(request), 'KEEPTTL')
  return 'partial'
end
request['status'] = 'answered'
request['decided_by'] = ARGV[1]
request['decided_at'] = tonumber(ARGV[2])
request['via'] = ARGV[6]
request['decided_name'] = ARGV[7]
redis.call('SET', KEYS[1], cjson.encode(request), 'KEEPTTL')
return 'ok'
"""

_SHOW_IN = """
local raw = redis.call('GET', KEYS[1])
if not raw then return nil end
local request = cjson.decode(raw)
if request['status'] ~= 'pending' then return nil end
request['shown_in'] = ARGV[1]
request['helper'] = ARGV[2]
local updated = cjson.encode(request)
redis.call('SET', KEYS[1], updated, 'KEEPTTL')
return updated
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
    questions: list[Question] = Field(default_factory=list)
    answers: list[Answer] = Field(default_factory=list)
    via: str = ""  # the message whose text answered the questions, if one did
    decided_name: str = ""  # the answerer as their platform shows them
    requester_name: str = ""  # the asker as their platform shows them (for a reminder)
    shown_in: str = ""  # the platform whose chat shows the prompt, if not `platform`'s
    helper: str = ""  # the task of the helper that asks, shown in its parent's chat

    @property
    def prompt_platform(self) -> str:
        """Where the prompt is, to show how it ended or to remind its person."""
        return self.shown_in or self.platform

    @field_validator("questions", "answers", mode="before")
    @classmethod
    def _empty_list(cls, value: Any) -> Any:
        """Redis's cjson writes an empty list back as `{}`."""
        return [] if value == {} else value

    @property
    def is_question(self) -> bool:
        return bool(self.questions)


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
        self._answer = redis.register_script(_ANSWER)
        self._show_in = redis.register_script(_SHOW_IN)

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
        questions: list[Question] | None = None,
        requester_name: str = "",
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
            questions=questions or [],
            requester_name=requester_name,
        )
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(
                keys.confirmation(confirmation.id),
                confirmation.model_dump_json(),
                ex=int(ttl) + self.keep,
            )
            pipe.set(keys.asking(session), confirmation.id, ex=int(ttl) + self.keep)
            await pipe.execute()
        return confirmation

    async def show_in(
        self, confirmation_id: str, platform: str, helper: str
    ) -> Confirmation | None:
        """Mark a helper's pending confirmation as asked in its parent's chat on `platform`;
        the confirmation as it is now, or None when it is decided or gone."""
        if not _valid(confirmation_id):
            return None
        raw = await self._show_in(
            keys=[keys.confirmation(confirmation_id)], args=[platform, helper]
        )
        return Confirmation.model_validate_json(raw) if raw else None

    async def asking(self, session: str) -> Confirmation | None:
        """The confirmation `session` waits for, if one does."""
        found = await self.redis.get(keys.asking(session))
        confirmation = await self.get(found.decode()) if found else None
        return confirmation if confirmation and confirmation.status == "pending" else None

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

    async def claim_reminder(self, confirmation_id: str) -> bool:
        """True for the one caller that is to send the confirmation's reminder."""
        if not _valid(confirmation_id):
            return False
        claimed = await self.redis.set(keys.reminded(confirmation_id), "1", nx=True, ex=self.keep)
        return bool(claimed)

    async def answer(
        self,
        confirmation_id: str,
        answers: list[Answer],
        by: str,
        *,
        start: int,
        is_admin: bool = False,
        via: str = "",
        name: str = "",
    ) -> Outcome:
        """Answer a question confirmation from its question `start` on: `ok` once every
        question has its answer, `partial` while some wait, `stale` when question `start` is
        not the next one (a press on an old prompt)."""
        if not _valid(confirmation_id):
            return "unknown"
        given = _ANSWERS.dump_json(answers).decode()
        result = await self._answer(
            keys=[keys.confirmation(confirmation_id)],
            args=[by, time.time(), "1" if is_admin else "0", start, given, via, name],
        )
        outcome: Outcome = result.decode() if isinstance(result, bytes) else str(result)  # type: ignore[assignment]
        return outcome
