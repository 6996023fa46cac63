"""A helper's hot state, dropped once its parent has read its answer.

A helper's session (`bot.vocabulary.helpers`) takes one turn and never another, yet its
state in Redis (its context, the head of its state, the version written) would stay until
retention like a chat's, which may be months: a turn with eight helpers would leave eight
contexts behind it. Once the parent has read the helper's answer, nothing reads that state
again, so it goes then (`drop_answered_helper`, called by `bot.session.helpers.HelperRuns`).

What stays, because a parent resumed after its worker died must find the same answer once:
- `events`, the helper's stream, which is how the resumed parent's call reads the answer; it
  lapses on its own (the last 15 minutes are kept);
- `seen:{envelope id}`, the dedup marker, which makes the resumed call's envelope a
  duplicate rather than a second helper run; it lapses with the mailbox's dedup window;
- `gen` and `fence`, two counters: a later generation or lease never takes a number an
  earlier one had (arq keeps a finished job's id a while and would drop a wake-up reusing it);
- `stopped`, which lapses on its own.

The state is dropped only while nobody runs the helper and nothing waits in its inbox,
checked in the same Lua call as the delete: a worker that answered but has not committed yet
(the answer is streamed before the commit) would otherwise find its state gone, or a worker
that died in between would find a finished turn without the state that says so. Between
its answer and its commit the helper's worker writes its run to SQL, which takes milliseconds
(seconds, with a database slow to write), so the call waits for it (`SETTLE_S` at most:
the parent's answer waits too); past that, the state is left for retention, as before.
The copy of the state this worker keeps in memory for a session's next turn is dropped too.
Its messages and run stay in SQL, the durable record; they go with the parent's session.
"""

from __future__ import annotations

import asyncio
import logging
import time

from redis.exceptions import RedisError

from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.session.states import StateStore

log = logging.getLogger(__name__)
DROPPED = ("state", "context", "saved", "options", "asking")  # per session, see `keys`
SETTLE_S = 5.0  # how long to wait for the helper's worker to commit its answered turn
LOOK_S = 0.05  # how often to look meanwhile

# KEYS[1..3]: the lease, the armed mark and the inbox; the rest are deleted if all are idle.
_DROP_IF_IDLE = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if redis.call('LLEN', KEYS[3]) > 0 then return -1 end
return redis.call('DEL', unpack(KEYS, 4))
"""


async def drop_answered_helper(
    mailbox: Mailbox, states: StateStore, session: str, envelope_id: str
) -> int | None:
    """Delete the hot state of the helper `session` whose answer its parent has read (see
    the module doc); how many keys went, or None if it stays (still busy after `SETTLE_S`,
    or Redis refused: retention removes it then, as it would have anyway)."""
    idle = [keys.session(session, name) for name in ("lease", "armed", "inbox")]
    names = [*(keys.session(session, name) for name in DROPPED)]
    names.append(keys.session(session, f"attempts:{envelope_id}"))
    script = mailbox.redis.register_script(_DROP_IF_IDLE)
    deadline = time.monotonic() + SETTLE_S
    states.forget(session)
    try:
        while (gone := int(await script(keys=[*idle, *names]))) < 0:
            if time.monotonic() >= deadline:
                log.info("helper %s still busy after its answer; its state stays", session)
                return None
            await asyncio.sleep(LOOK_S)
    except RedisError as exc:  # the answer was read: the call must not fail for this
        log.warning("could not drop the state of helper %s: %s", session, exc)
        return None
    return gone
