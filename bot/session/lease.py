"""Keeping a session's lease while its turns run, and stopping them once it is lost.

The lease lives `PARLEY_LEASE_TTL` (30 s) and is extended every third of it, and at once when
this worker finds its liveness key lapsed (the sweep may have freed the lease while the
worker was stalled). A lease found gone stops the turn before it streams more text next to
its successor's.

The keeper is stopped before the runner may let the lease go itself: before each commit,
which releases the lease when no other turn waits, and before a hand-over; it starts again
for the next turn. An extension sent just after the release would find the lease gone, and
take the runner's own release for an expiry: it would cancel the runner in the middle of
ending (or of handing the session over, which then never woke the next worker).
"""

from __future__ import annotations

import asyncio
import logging

from bot.mailbox.inbox import Mailbox
from bot.mailbox.liveness import Liveness

log = logging.getLogger(__name__)


class LeaseKeeper:
    """Extends one lease for the task `holder` holding it; `lost` once it was found gone."""

    def __init__(
        self,
        mailbox: Mailbox,
        liveness: Liveness | None,
        lease: tuple[str, str],
        ttl: float,
        holder: asyncio.Task[None],
    ) -> None:
        self._mailbox, self._liveness = mailbox, liveness
        self._session, self._token = lease
        self._ttl, self._holder = ttl, holder
        self._beating: asyncio.Task[None] | None = None
        self.lost = False

    def start(self) -> None:
        if self._beating is None:
            self._beating = asyncio.create_task(self._beat())

    async def stop(self) -> None:
        """Stop extending, and wait until no extension is on its way: what it would have
        found no longer counts. A cancellation of the caller meanwhile still reaches it."""
        beating, self._beating = self._beating, None
        if beating is not None:
            beating.cancel()
            await asyncio.wait([beating])

    async def _beat(self) -> None:
        while True:
            if self._liveness is None:
                await asyncio.sleep(self._ttl / 3)
            else:
                await self._liveness.lapsed(within=self._ttl / 3)
            try:
                kept = await self._mailbox.extend(self._session, self._token, self._ttl)
            except Exception:
                log.warning("heartbeat for %s failed", self._session, exc_info=True)
                continue
            if not kept:
                self.lost = True
                self._holder.cancel()
                return
