"""`parley pair`: pairing codes approved and listed, and paired people let out, from a shell.

For an operator without a chat at hand (or before any admin is set): the same rules as
`/pair` in a chat (`bot.people.pairing`), with `cli` as the admin, so wrong codes from the
command line count against the same budget in Redis as everyone's. The person is told they
are in through their session's mailbox, so a worker says it; this process sends nothing
itself.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.config.settings import Settings
from bot.mailbox.inbox import Mailbox
from bot.people.pairing import APPROVED, CLI, UNPAIRED, Pairing, duration
from bot.store.database import open_database
from worker.redis_pool import open_pool

CONNECT_WAIT_S = 5.0  # a shell waits less for Redis and the database than a process starting


@dataclass(frozen=True)
class Done:
    """What to print, and whether the command did what it was asked."""

    text: str
    ok: bool = True


_Act = Callable[[Pairing], Awaitable[Done]]


async def approve(settings: Settings, code: str) -> Done:
    async def act(pairing: Pairing) -> Done:
        answer = await pairing.approve(code, CLI)
        return Done(answer, ok=answer.startswith(APPROVED.split("{", 1)[0]))

    return await _with_pairing(settings, act)


async def revoke(settings: Settings, person: str) -> Done:
    async def act(pairing: Pairing) -> Done:
        answer = await pairing.revoke(person, CLI)
        return Done(answer, ok=answer.startswith(UNPAIRED.split("{", 1)[0]))

    return await _with_pairing(settings, act)


async def listing(settings: Settings) -> Done:
    """The codes waiting (who asked, where, for how long yet), then the people paired."""

    async def act(pairing: Pairing) -> Done:
        lines = []
        now = time.time()
        for waiting in await pairing.codes.waiting():
            left = duration(max(0.0, waiting.expires_at - now))
            lines.append(f"waiting  {waiting.person}  on {waiting.account}  expires in {left}")
        for paired in await pairing.paired.all():
            when = paired.approved_at.strftime("%Y-%m-%d %H:%M UTC")
            lines.append(f"paired   {paired.person}  by {paired.approved_by}  at {when}")
        return Done("\n".join(lines) or "No code is waiting, and nobody is paired.")

    return await _with_pairing(settings, act)


async def _with_pairing(settings: Settings, act: _Act) -> Done:
    redis = await open_pool(settings, wait=CONNECT_WAIT_S)
    try:
        database = await open_database(settings, wait=CONNECT_WAIT_S)
        try:
            mailbox = Mailbox(redis, redis)
            pairing = Pairing.of(redis, database.engine, mailbox.submit, settings.pairing_code_ttl)
            return await act(pairing)
        finally:
            await database.aclose()
    finally:
        await redis.aclose()
