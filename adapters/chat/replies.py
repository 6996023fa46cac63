"""What a worker must remember about messages it posted, in Redis so any worker can use it.

- The messages of a reply, by its first envelope: a turn resumed by another worker after a
  crash edits them instead of posting the reply again.
- The files a reply posted, by its first envelope and their SHA-256: a resumed turn, or a
  model that sends the same file twice in a turn, does not post it again.
- Where an approval prompt is, by confirmation id: when it expires, the prompt is updated.

Each platform keeps its own ids (Telegram's integers, Slack's timestamps) under its own keys
(`bot.redis.keys`).
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import done

KEEP = 7 * 86_400


class ReplyStore:
    def __init__(self, redis: Redis, platform: str) -> None:
        self.redis = redis
        self.platform = platform

    async def load(self, key: str) -> list[Any]:
        raw = await self.redis.get(keys.reply(self.platform, key))
        return list(json.loads(raw)) if raw else []

    async def save(self, key: str, message_ids: list[Any]) -> None:
        await self.redis.set(keys.reply(self.platform, key), json.dumps(message_ids), ex=KEEP)

    async def file_posted(self, key: str, sha256: str) -> bool:
        found = await done(self.redis.hget(keys.reply_files(self.platform, key), sha256))
        return found is not None

    async def save_file(self, key: str, sha256: str, message_id: Any) -> None:
        name = keys.reply_files(self.platform, key)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(name, sha256, json.dumps(message_id))
            pipe.expire(name, KEEP)
            await pipe.execute()

    async def save_prompt(self, confirmation_id: str, record: dict[str, Any]) -> None:
        await self.redis.set(
            keys.prompt(self.platform, confirmation_id), json.dumps(record), ex=KEEP
        )

    async def load_prompt(self, confirmation_id: str) -> dict[str, Any] | None:
        raw = await self.redis.get(keys.prompt(self.platform, confirmation_id))
        return dict(json.loads(raw)) if raw else None
