"""How much work waits in the session mailboxes, read cheaply enough for every scrape.

The mailbox keeps no global count of envelopes, and one kept beside the inboxes could drift
(a session forgotten, a Redis restored), so the figure is derived from what the mailbox
already guarantees: every session with a non-empty inbox is in the armed set (`bot.mailbox.inbox`
arms a session in the same script that appends to its inbox, and disarms it only in the one
that finds its inbox empty). Reading it costs one LLEN and one EXISTS per armed session,
never a scan of the keyspace: idle sessions, however many, cost nothing. The armed set is
read a page per Lua call, so Redis is never held long even with a deep backlog.

An envelope counts until its turn commits it, so one whose turn is running counts too.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import text

# One page of the armed set: for each session with envelopes waiting, its name, how many
# wait, and whether a worker holds it (1) or not (0). Names come back so that a session
# ZSCAN returns twice (it may, while the set grows) is counted once.
_PAGE = """
local page = redis.call('ZSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[2])
local found, items = {}, page[2]
for i = 1, #items, 2 do
  local at = ARGV[3] .. '{' .. items[i] .. '}:'
  local waiting = redis.call('LLEN', at .. 'inbox')
  if waiting > 0 then
    found[#found + 1] = items[i]
    found[#found + 1] = waiting
    found[#found + 1] = redis.call('EXISTS', at .. 'lease')
  end
end
return {page[1], found}
"""


@dataclass(frozen=True)
class Backlog:
    """Envelopes not yet answered, the sessions they wait in, and how many of those
    sessions a worker is running now (the rest wait to be picked up)."""

    envelopes: int = 0
    sessions: int = 0
    running: int = 0


async def backlog(redis: Redis, page: int = 500) -> Backlog:
    """The backlog across the deployment, read `page` armed sessions per Lua call."""
    script = redis.register_script(_PAGE)
    cursor, seen = "0", {}
    while True:
        result = await script(keys=[keys.ARMED_SET], args=[cursor, page, keys.SESSION_PREFIX])
        cursor = text(result[0])
        found = result[1]
        for i in range(0, len(found), 3):
            seen[text(found[i])] = (int(found[i + 1]), int(found[i + 2]))
        if cursor == "0":
            break
    return Backlog(
        envelopes=sum(waiting for waiting, _ in seen.values()),
        sessions=len(seen),
        running=sum(held for _, held in seen.values()),
    )
