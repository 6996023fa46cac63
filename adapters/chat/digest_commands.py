"""`/memory digest [on | off]` on every platform: whether this scope's days are digested
(`bot.memory.digest`), said to anyone, switched by the person in their own private chat and
by an admin in a group, since a group's digest holds what everyone there said.

The scope is the one `/memory` lists (`bot.memory.scope.scope_of`); turning a digest off
keeps the digests written so far, which `/forget N` forgets one by one.
"""

from __future__ import annotations

from bot.config.settings import Settings
from bot.memory.recall import Recall
from bot.memory.scope import is_private
from bot.store.digests import Digests

WORD = "digest"  # after /memory
USAGE = (
    "/memory digest shows whether I keep a daily digest here; /memory digest on or off changes it."
)
NONE_HERE = (
    "This deployment keeps no daily digests (PARLEY_DIGEST_MODEL is off), so there is nothing "
    "to switch."
)
ADMINS_ONLY = "Only an admin may turn this chat's daily digest on or off."


def asked_digest(args: str) -> str | None:
    """What follows `/memory digest` ("" for nothing), or None when the command is not it."""
    first, _, rest = args.strip().partition(" ")
    return rest.strip().lower() if first.lower() == WORD else None


async def answer(
    digests: Digests, scope: str, said: str, *, enabled: bool, may_change: bool, by: str
) -> str:
    """The answer to `/memory digest` with `said` after it, for `scope`; `enabled`: the
    deployment writes digests at all; `may_change`: the asker may switch this scope's."""
    if not enabled:
        return NONE_HERE
    whose = "about you" if is_private(scope) else "of this chat"
    if not said:
        off = scope in await digests.off([scope])
        state = "off" if off else "on"
        return f"The daily digest {whose} is {state}. {USAGE}"
    if said not in ("on", "off"):
        return USAGE
    if not may_change:
        return ADMINS_ONLY
    await digests.switch(scope, on=said == "on", by=by)
    if said == "on":
        return (
            f"I will keep a daily digest {whose} again: a few lines on what was said and "
            "decided each day, written after the day is over."
        )
    return (
        f"I will keep no daily digest {whose} from now on; those written so far stay until "
        "you forget them (/forget N)."
    )


async def switched(
    recall: Recall, settings: Settings, scope: str, said: str, *, may_change: bool, by: str
) -> str:
    """`answer` on the database the platform's `/memory` reads, as the settings say."""
    return await answer(
        Digests(recall.memories.engine), scope, said, enabled=settings.digest_model != "off",
        may_change=may_change, by=by,
    )  # fmt: skip
