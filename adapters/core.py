"""What every ingress shares, built once by `parley web`."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from bot.config import Settings
from bot.confirmations import Confirmations
from bot.mailbox import Mailbox
from bot.store.archive import Archive


@dataclass(frozen=True)
class Core:
    settings: Settings
    redis: Redis
    mailbox: Mailbox
    confirmations: Confirmations
    archive: Archive
