"""How a session's state is laid out in Redis, and the scripts that read and write it under
the lease: the head (the state but its context) in `state`, the context's messages one item
each in `context`, and the version of the last write in `saved` (see `bot.session.states`).

A long context's older messages are not in `context` but in SQL (`bot.store.cold_context`);
the head then begins with a marker, `{"cold": {"epoch": …, "count": N}, …}`, saying that the
context's first N messages are there. The state itself never sees the marker. Retention
reads only the head's start and the context's first items (`RedisState.first`), to tell
whether a context holds anything said before its window (`bot.session.retention`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from redis.asyncio import Redis

from bot.redis import keys

# A state write (see `StateWrite`): of the context's items, drop the first `drop`, keep
# those before `keep`, append ARGV[first..]; replace the head and the version. Refused
# (false) before anything is written when the list is shorter than `keep`: Redis lost what
# the writer believes is there, and it must write the whole state.
WRITE_STATE = """
local function write_state(state, context, saved, head, drop, keep, version, first)
  local have = redis.call('LLEN', context)
  if keep > have then return false end
  if keep <= drop then
    redis.call('DEL', context)
  elseif drop > 0 or keep < have then
    redis.call('LTRIM', context, drop, keep - 1)
  end
  for i = first, #ARGV, 1000 do
    redis.call('RPUSH', context, unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
  redis.call('SET', state, head)
  redis.call('SET', saved, version)
  return true
end
"""
_SAVE = (
    WRITE_STATE
    + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local keep, drop = tonumber(ARGV[4]), tonumber(ARGV[3])
if not write_state(KEYS[2], KEYS[3], KEYS[4], ARGV[2], drop, keep, ARGV[5], 6) then
  return -2
end
return 1
"""
)
# The state, unless its version is still ARGV[1]: then the reader's copy is current. With
# KEYS[4] and KEYS[5], the session's options and its chat's, the session's model and the
# chat's mode, reasoning, tools, output schema and steering come first, read in the same step
# (`TurnOptions`).
_LOAD = """
local options = {}
if KEYS[4] then
  options = {redis.call('HGET', KEYS[4], 'model') or '',
             unpack(redis.call('HMGET', KEYS[5], 'mode', 'reasoning', 'tools', 'output_schema',
                               'steer'))}
end
local version = redis.call('GET', KEYS[3])
if ARGV[1] ~= '' and version == ARGV[1] then return {1, options} end
return {0, options, redis.call('GET', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
"""
# The head's first ARGV[1] bytes (enough for its marker) and the context's first ARGV[2] items.
_PEEK = """
local head = redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
return {head, redis.call('LRANGE', KEYS[2], 0, tonumber(ARGV[2]) - 1)}
"""
MARK_BYTES = 160  # more than a marker takes: `{"cold":{"epoch":"<32 hex>","count":N},`
_MARK = re.compile(rb'^\{"cold":(\{[^{}]*\})')


class ContextMissing(Exception):
    """A state write meant to keep more of the context than Redis holds (Redis lost some of
    it): nothing was written, and the whole state must be written instead."""


class ColdMark(BaseModel):
    """The context's first `count` messages are in SQL, under `epoch`."""

    epoch: str
    count: int


class _Marked(BaseModel):
    cold: ColdMark | None = None  # the rest of the head is the state's, read on its own


def marked(head: str, mark: ColdMark | None) -> str:
    """The head as written: the state's JSON, led by `mark` when there is one."""
    if mark is None or mark.count == 0:
        return head
    return '{"cold":' + mark.model_dump_json() + "," + head[1:]


def mark_of(head: bytes) -> ColdMark | None:
    """The marker a head begins with, if any."""
    return _Marked.model_validate_json(head).cold if head.startswith(b'{"cold"') else None


def mark_in(start: bytes) -> ColdMark | None:
    """The marker of a head of which only its `start` was read (`RedisState.first`)."""
    found = _MARK.match(start)
    return None if found is None else ColdMark.model_validate_json(found[1])


@dataclass(frozen=True)
class TurnOptions:
    """What people chose with commands that a turn runs with (None: the default): the
    session's `model` (/model), its chat's `mode` (/mode) and `reasoning` (/reasoning), and
    the tools its turns may offer and the schema their answers must follow, each as the JSON
    text it is kept as (a web chat's settings, `adapters.http.session_settings`), and what a
    message does to a running turn (/steer, `bot.vocabulary.steering`)."""

    model: str | None = None
    mode: str | None = None
    reasoning: str | None = None
    tools: str | None = None
    output_schema: str | None = None
    steer: str | None = None

    @classmethod
    def of(cls, values: Sequence[Any]) -> TurnOptions:
        """From Redis's answers (bytes, or nothing for what nobody chose)."""
        return cls(*(v.decode() if isinstance(v, bytes) and v else None for v in values))


@dataclass(frozen=True)
class StoredState:
    """A session's state as Redis holds it: `head`, the state but its context, and the
    context's messages, one item each. A state written whole (before the context had a key
    of its own) is all in `head`, with no items."""

    head: bytes
    context: list[bytes]
    unchanged: bool = False  # nothing read: still the version the reader named


@dataclass(frozen=True)
class FirstItems:
    """The start of a session's state, read without its context: the head's first bytes
    (its marker, if it has one) and the context's first items in Redis."""

    head: bytes
    context: list[bytes]

    @property
    def whole(self) -> bool:
        """A state an older version saved whole: its context is in the head."""
        return self.head.startswith(b'{"messages"')


@dataclass(frozen=True)
class StateWrite:
    """One save of the state: of the context's items, the first `drop` go (moved to SQL),
    those before `keep` stay, `append` follows them, and `head` replaces the head. A turn's
    save appends its new messages and rewrites the head, so what it sends does not grow
    with the conversation. `version` names the state written, so that its writer can tell
    later that nobody wrote since."""

    head: str
    keep: int = 0
    append: tuple[str, ...] = ()
    version: str = ""
    drop: int = 0

    def args(self) -> list[str | int]:
        """The write as the scripts' arguments, from `head` on."""
        return [self.head, self.drop, self.keep, self.version, *self.append]


class RedisState:
    """The scripts that read and write a state's keys (the commit's is the mailbox's)."""

    def __init__(self, redis: Redis) -> None:
        self._save = redis.register_script(_SAVE)
        self._load = redis.register_script(_LOAD)
        self._peek = redis.register_script(_PEEK)

    async def save(self, session: str, token: str, write: StateWrite) -> int:
        """1: written; 0: the lease is not `token`; -2: the context is shorter than `keep`."""
        names = ("lease", "state", "context", "saved")
        result = await self._save(
            keys=[keys.session(session, name) for name in names], args=[token, *write.args()]
        )
        return int(result)

    async def load(self, session: str, known: str = "") -> StoredState | None:
        """The head and the context's items, read together; None when there is no head.
        When the state is still version `known`, nothing is read (`unchanged`)."""
        names = ("state", "context", "saved")
        result = await self._load(
            keys=[keys.session(session, name) for name in names], args=[known]
        )
        return _stored(result)

    async def load_for_turn(
        self, session: str, chat: str, known: str = ""
    ) -> tuple[StoredState | None, TurnOptions]:
        """`load`, and in the same step what the turn runs with of the options: the
        session's model, its `chat`'s mode, reasoning, tools and output schema."""
        names = ("state", "context", "saved")
        options = [keys.session(session, "options"), keys.session(chat, "options")]
        result = await self._load(
            keys=[*(keys.session(session, name) for name in names), *options], args=[known]
        )
        return _stored(result), TurnOptions.of(result[1])

    async def first(self, session: str, count: int) -> FirstItems | None:
        """The head's start and the context's first `count` items in Redis, read together;
        None when there is no head. A few hundred bytes, however long the context."""
        names = ("state", "context")
        head, context = await self._peek(
            keys=[keys.session(session, name) for name in names], args=[MARK_BYTES, count]
        )
        return FirstItems(head, list(context)) if head else None


def _stored(result: list[Any]) -> StoredState | None:
    """The state in `_LOAD`'s answer: {1, options} unchanged, {0, options, head, context}."""
    if result[0] == 1:
        return StoredState(b"", [], unchanged=True)
    head, context = result[2], result[3]
    return StoredState(head, list(context)) if isinstance(head, bytes) else None
