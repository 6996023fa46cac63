"""What a worker must remember about messages it posted, in Redis so any worker can use it.

- The messages of a reply, by its first envelope: a turn resumed by another worker after a
  crash edits them instead of posting the reply again.
- Where an approval prompt is, by confirmation id: when it expires, the prompt is updated.

Each platform keeps its own ids (Telegram's integers, Slack's timestamps) under its prefix.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from bot.mailbox import PREFIX

KEEP = 7 * 86_400


class ReplyStore:
    def __init__(self, redis: Redis, platform: str) -> None:
        self.redis = redis
        self.prefix = f"{PREFIX}:{platform}"

    async def load(self, key: str) -> list[Any]:
        raw = await self.redis.get(f"{self.prefix}:reply:{key}")
        return list(json.loads(raw)) if raw else []

    async def save(self, key: str, message_ids: list[Any]) -> None:
        await self.redis.set(f"{self.prefix}:reply:{key}", json.dumps(message_ids), ex=KEEP)

    async def save_prompt(self, confirmation_id: str, record: dict[str, Any]) -> None:
        await self.redis.set(f"{self.prefix}:prompt:{confirmation_id}", json.dumps(record), ex=KEEP)

    async def load_prompt(self, confirmation_id: str) -> dict[str, Any] | None:
        raw = await self.redis.get(f"{self.prefix}:prompt:{confirmation_id}")
        return dict(json.loads(raw)) if raw else None
