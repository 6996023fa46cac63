"""What each scheduled task spends a day, and its cap: background runs nobody watches must
not become the bill's surprise.

A task may spend at most its cap of tokens (in, cached and out, as a person's day counts
them) in a UTC day: the deployment's PARLEY_TASK_TOKENS_PER_DAY (0: none), or the task's own
`tokens_per_day` where it is lower. The worker adds a run's tokens where it records the run
(`bot.session.record`); the day's hash keeps the run's envelope id beside the total, so a run
recorded again after a crash counts once. The run that crosses the cap finishes; the next one
due that day does not run, and its chat is told once (`bot.session.turn`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import done, text
from bot.tasks.model import Task
from bot.vocabulary.envelope import task_of_run
from bot.vocabulary.runs import RunRecord

DAY_TTL = 2 * 86_400  # a day's tokens outlive it, so a run ending after midnight finds it
CAPPED = (
    "The task #{id} ({prompt}) reached its daily cap of {cap:,} tokens; it runs again tomorrow."
)
# Adds a run's tokens once per run (its envelope id); returns the day's total.
_CHARGE = """
if redis.call('HSETNX', KEYS[1], 'run:' .. ARGV[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[2])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
end
return tonumber(redis.call('HGET', KEYS[1], 'tokens')) or 0
"""


def day(now: datetime) -> str:
    return now.astimezone(UTC).date().isoformat()


def cap_of(task: Task, deployment: int) -> int | None:
    """The tokens `task` may spend a day: the lower of the deployment's cap (0: none) and its
    own; None when neither caps it."""
    caps = [cap for cap in (deployment, task.tokens_per_day or 0) if cap > 0]
    return min(caps) if caps else None


def capped_text(task: Task, cap: int) -> str:
    """The one sentence the chat is told when the task's run did not run."""
    prompt = task.prompt if len(task.prompt) <= 60 else task.prompt[:59] + "…"
    return CAPPED.format(id=task.id, prompt=prompt, cap=cap)


class TaskSpend:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._charge = redis.register_script(_CHARGE)

    async def charge(self, run_id: str, tokens: int, now: datetime | None = None) -> int | None:
        """Add the tokens of the run `run_id` (an envelope id the scheduler made) to its
        task's day, once per run; the day's total, or None when it is no task's run."""
        task_id = task_of_run(run_id)
        if task_id is None:
            return None
        key = keys.task_tokens(task_id, day(now or datetime.now(UTC)))
        return int(await self._charge(keys=[key], args=[run_id, max(0, tokens), DAY_TTL]))

    async def charge_run(self, record: RunRecord) -> None:
        """A recorded run's tokens (in, cached and out) against its task's day, keyed by its
        first envelope id, as `Limits.charge_turn` keys a person's."""
        if record.envelope_ids:
            usage = record.usage
            await self.charge(record.envelope_ids[0], usage.prompt_tokens + usage.output_tokens)

    async def today(self, task_ids: Iterable[int], now: datetime | None = None) -> dict[int, int]:
        """The tokens each task's runs spent since 00:00 UTC."""
        ids = list(task_ids)
        if not ids:
            return {}
        when = day(now or datetime.now(UTC))
        async with self.redis.pipeline(transaction=False) as pipe:
            for task_id in ids:
                pipe.hget(keys.task_tokens(task_id, when), "tokens")
            values = await pipe.execute()
        return {
            task_id: int(text(value)) if value is not None else 0
            for task_id, value in zip(ids, values, strict=True)
        }

    async def spent(self, task_id: int, now: datetime | None = None) -> int:
        return (await self.today([task_id], now))[task_id]

    async def first_telling(self, task_id: int, now: datetime | None = None) -> bool:
        """True once per task and UTC day: the chat hears of the cap once, not at each run."""
        key = keys.task_told(task_id, day(now or datetime.now(UTC)))
        return bool(await done(self.redis.set(key, "1", nx=True, ex=DAY_TTL)))
