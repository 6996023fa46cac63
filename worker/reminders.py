"""Reminders of approvals and questions nobody has answered yet, a while before they expire.

The reminder is an arq job deferred to `PARLEY_CONFIRMATION_REMIND` seconds before the
confirmation's expiry, queued when it is asked for (a wait shorter than that gets none). It
is sent once, even with several workers or a job run again after a crash: the worker that
sends it first claims it in Redis (`Confirmations.claim_reminder`). One that was decided in
the meantime is left alone.
"""

from __future__ import annotations

import logging
from typing import Any

from arq.connections import ArqRedis

from bot.config.settings import Settings
from bot.redis import keys
from worker.supervisor import Supervisor

log = logging.getLogger(__name__)


async def remind_confirmation(ctx: dict[str, Any], confirmation_id: str) -> None:
    """Remind the person an undecided confirmation waits for, once."""
    supervisor: Supervisor = ctx["supervisor"]
    confirmations = supervisor.confirmations
    confirmation = await confirmations.get(confirmation_id)
    if confirmation is None or confirmation.status != "pending":
        return
    if not await confirmations.claim_reminder(confirmation_id):
        return
    try:
        await supervisor.egress.remind(confirmation)
    except Exception:  # a reminder is a courtesy: the request still waits and expires
        log.warning("could not remind anyone of %s", confirmation_id, exc_info=True)


async def schedule(redis: ArqRedis, settings: Settings, confirmation_id: str, ttl: float) -> None:
    """The confirmation's expiry after `ttl` seconds, and its reminder before that."""
    await redis.enqueue_job(keys.EXPIRY_JOB, confirmation_id, _defer_by=ttl)
    remind = settings.confirmation_remind
    if remind is not None and ttl > remind:
        await redis.enqueue_job(keys.REMIND_JOB, confirmation_id, _defer_by=ttl - remind)
