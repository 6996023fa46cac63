"""How a session's state is laid out in Redis, for the mailbox's scripts that write it under
the lease: the head (the state but its context) in `state`, the context's messages one item
each in `context`, and the version of the last write in `saved` (see `bot.state_store`)."""

from __future__ import annotations

from dataclasses import dataclass

# A state write (see `StateWrite`): keep the context's first `keep` items, append ARGV[n..],
# replace the head and the version. Refused (-2) before anything is written when the list is
# shorter than `keep`: Redis lost what the writer believes is there, and it must write the
# whole state.
WRITE_STATE = """
local function write_state(state, context, saved, head, keep, version, first)
  local have = redis.call('LLEN', context)
  if keep > have then return false end
  if keep == 0 then
    redis.call('DEL', context)
  elseif keep < have then
    redis.call('LTRIM', context, 0, keep - 1)
  end
  for i = first, #ARGV, 1000 do
    redis.call('RPUSH', context, unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
  redis.call('SET', state, head)
  redis.call('SET', saved, version)
  return true
end
"""
# The state, unless its version is still ARGV[1]: then the reader's copy is current.
LOAD_STATE = """
local version = redis.call('GET', KEYS[3])
if ARGV[1] ~= '' and version == ARGV[1] then return {1} end
return {0, redis.call('GET', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
"""


class ContextMissing(Exception):
    """A state write meant to keep more of the context than Redis holds (Redis lost some of
    it): nothing was written, and the whole state must be written instead."""


@dataclass(frozen=True)
class StoredState:
    """A session's state as Redis holds it: `head`, the state but its context, and the
    context's messages, one item each. A state written whole (before the context had a key
    of its own) is all in `head`, with no items."""

    head: bytes
    context: list[bytes]
    unchanged: bool = False  # nothing read: still the version the reader named


@dataclass(frozen=True)
class StateWrite:
    """One save of the state: the context's first `keep` items stay, `append` follows them,
    and `head` replaces the head. A turn's save appends its new messages and rewrites the
    head, so what it sends does not grow with the conversation. `version` names the state
    written, so that its writer can tell later that nobody wrote since."""

    head: str
    keep: int = 0
    append: tuple[str, ...] = ()
    version: str = ""
