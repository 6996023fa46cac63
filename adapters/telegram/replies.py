"""What a worker must remember about messages it posted, in Redis so any worker can use it.

- The messages of a reply, by its first envelope: a turn resumed by another worker after a
  crash edits them instead of posting the reply again.
- Where an approval prompt is, by confirmation id: when it expires, the prompt is updated.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from adapters.telegram.confirm import Prompt
from bot.mailbox import PREFIX

KEEP = 7 * 86_400


class ReplyStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def load(self, key: str) -> list[int]:
        raw = await self.redis.get(f"{PREFIX}:tg:reply:{key}")
        return [int(i) for i in json.loads(raw)] if raw else []

    async def save(self, key: str, message_ids: list[int]) -> None:
        await self.redis.set(f"{PREFIX}:tg:reply:{key}", json.dumps(message_ids), ex=KEEP)

    async def save_prompt(
        self, confirmation_id: str, chat_id: int, message_id: int, prompt: Prompt
    ) -> None:
        record = {"chat_id": chat_id, "message_id": message_id, **prompt.__dict__}
        await self.redis.set(f"{PREFIX}:tg:prompt:{confirmation_id}", json.dumps(record), ex=KEEP)

    async def load_prompt(self, confirmation_id: str) -> tuple[int, int, Prompt] | None:
        raw = await self.redis.get(f"{PREFIX}:tg:prompt:{confirmation_id}")
        if not raw:
            return None
        record: dict[str, Any] = json.loads(raw)
        return record["chat_id"], record["message_id"], Prompt(record["text"], record["entities"])
