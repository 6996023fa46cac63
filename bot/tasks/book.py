"""The tasks in SQL: made by people (tools, `/tasks`), operators (the API) and the
configuration, and kept up to date by the scheduler as it runs them.

Every change is announced on `parley:tasks` (the task's id), so the scheduler applies it within
moments; a lost announcement is caught by the scheduler's periodic full reload.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError
from redis.asyncio import Redis
from sqlalchemy import Table, case, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.redis import keys
from bot.store.schema import TaskRow
from bot.tasks.model import CONFIG_CREATOR, IfMissed, Status, Target, Task
from bot.vocabulary.envelope import Sender, task_of_run
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.schedule import Schedule

log = logging.getLogger(__name__)
TASKS: Table = TaskRow.__table__  # type: ignore[assignment]
Ended = Literal["cancelled", "not_found", "forbidden", "ended"]


class TaskRefused(Exception):
    """A task that may not be made (a limit); the message is for the person."""


@dataclass(frozen=True)
class NewTask:
    target: Target
    creator: Sender
    prompt: str
    when: str
    schedule: Schedule
    if_missed: IfMissed = "skip"
    name: str | None = None  # only the configuration's tasks have one
    config: RunConfig | None = None  # how its runs are made (an output schema, a mode)
    tokens_per_day: int | None = None  # its own daily token cap (`bot.tasks.spend`)
    quiet: bool = False  # a check-in (`/checkin`): posts only what is worth saying


class TaskBook:
    def __init__(self, engine: AsyncEngine, redis: Redis) -> None:
        self.engine = engine
        self.redis = redis
        # One model reply may call schedule_task several times at once: the count and the
        # insert of one add are not interleaved with another's (in this process; across
        # processes, PostgreSQL's advisory lock on the person does the same).
        self._adding = asyncio.Lock()

    async def add(self, new: NewTask, *, max_active: int, now: datetime) -> Task:
        """Store `new`; refused once its creator has `max_active` active tasks."""
        async with self._adding, self.engine.begin() as db:
            if new.name is None:
                if db.dialect.name == "postgresql":
                    await db.execute(
                        select(func.pg_advisory_xact_lock(func.hashtext(new.creator.id)))
                    )
                count = select(func.count()).where(
                    TASKS.c.creator == new.creator.id, TASKS.c.status == "active"
                )
                if (await db.execute(count)).scalar_one() >= max_active:
                    raise TaskRefused(
                        f"You have {max_active} active tasks, the most allowed; cancel one "
                        "first (list_tasks shows them)."
                    )
            first = new.schedule.next_runs(now, 1)
            result = await db.execute(TASKS.insert().values(**_row(new, first, now)))
            (task_id,) = result.inserted_primary_key or (0,)
        await self._announce(task_id)
        task = await self.get(task_id)
        assert task is not None
        return task

    async def get(self, task_id: int) -> Task | None:
        async with self.engine.connect() as db:
            row = (await db.execute(select(TASKS).where(TASKS.c.id == task_id))).first()
        return _task(row) if row is not None else None

    async def in_chat(self, chat: str, *, active: bool = True) -> list[Task]:
        """The tasks of a chat: its session `chat`, and the sessions inside it (`chat:…`,
        a forum topic, a Slack thread). Compared exactly: SQLite's LIKE ignores case, and
        `slack:T1:C1` is not `slack:t1:c1`."""
        inside = f"{chat}:"
        where = (TASKS.c.session_key == chat) | (
            func.substr(TASKS.c.session_key, 1, len(inside)) == inside
        )
        return await self._select(where, active)

    async def of_person(self, person: str, *, active: bool = True) -> list[Task]:
        return await self._select(TASKS.c.creator == person, active)

    async def every(self, *, active: bool = True) -> list[Task]:
        return await self._select(None, active)

    async def _select(self, where: Any, active: bool) -> list[Task]:
        query = select(TASKS).order_by(TASKS.c.id)
        if where is not None:
            query = query.where(where)
        if active:
            query = query.where(TASKS.c.status == "active")
        async with self.engine.connect() as db:
            return [_task(row) for row in await db.execute(query)]

    async def end(self, task_id: int, by: Sender) -> tuple[Ended, Task | None]:
        """Cancel a task for `by`, by the rule of approvals (`Task.may_be_ended_by`)."""
        task = await self.get(task_id)
        if task is None:
            return "not_found", None
        if not task.may_be_ended_by(by):
            return "forbidden", task
        if not task.active:
            return "ended", task
        ended = await self._set_status(task_id, "cancelled", by.id)
        task = await self.get(task_id)
        return ("cancelled" if ended else "ended"), task

    async def called_off(self, run_id: str) -> bool:
        """Whether the run `run_id` (an envelope the scheduler sent) is no longer to be made:
        its task was cancelled, or deleted, after the run was sent and while it waited in
        the inbox (behind the very message that cancelled it, say). A one-off task is `done`
        as soon as its run is sent, so only a cancel calls a run off; while the database is
        away the run is made."""
        task_id = task_of_run(run_id)
        if task_id is None:
            return False
        try:
            task = await self.get(task_id)
        except Exception:
            log.warning("could not see whether %s was called off", run_id, exc_info=True)
            return False
        if task is None or task.status == "cancelled":
            log.info("dropped %s: its task was cancelled after it was sent", run_id)
            return True
        return False

    async def ran(self, task_id: int, run_at: datetime, next_run_at: datetime | None) -> None:
        """The scheduler sent the run due at `run_at`; a one-off task is done (unless it was
        cancelled while its run was on its way: it stays cancelled)."""
        await self._advance(task_id, next_run_at, "runs", "done", last_run_at=run_at)

    async def skipped(self, task_id: int, run_at: datetime, next_run_at: datetime | None) -> None:
        """The run due at `run_at` was missed and, by the task's policy, not made up for."""
        await self._advance(task_id, next_run_at, "missed", "missed")

    async def _advance(
        self,
        task_id: int,
        next_run_at: datetime | None,
        counter: Literal["runs", "missed"],
        last: Status,
        **more: Any,
    ) -> None:
        """Count a run made or missed and move to the next; with none, the task ends `last`."""
        values: dict[str, Any] = {
            "next_run_at": next_run_at,
            counter: TASKS.c[counter] + 1,
            "updated_at": datetime.now(UTC),
            **more,
        }
        if next_run_at is None:
            values["status"] = _if_active(last)
        await self._update(task_id, values)

    async def replace_config(self, tasks: Sequence[NewTask], now: datetime) -> list[Task]:
        """Make the configuration's tasks exactly `tasks` (by name): new ones are added, changed
        ones replaced, those no longer configured cancelled."""
        wanted = {new.name: new for new in tasks if new.name is not None}
        current = {t.name: t for t in await self._select(TASKS.c.name.is_not(None), True)}
        for name, task in current.items():
            if name not in wanted or not _same(task, wanted[name]):  # the name is freed
                await self._set_status(task.id, "cancelled", CONFIG_CREATOR, name=None)
        for name, new in wanted.items():
            if name not in current or not _same(current[name], new):
                await self.add(new, max_active=0, now=now)
        return await self._select(TASKS.c.name.is_not(None), True)

    async def _set_status(self, task_id: int, status: Status, by: str, **more: Any) -> bool:
        """Only an active task changes status here: two people cancelling at once, one wins."""
        values = {"status": status, "ended_by": by, "updated_at": datetime.now(UTC), **more}
        async with self.engine.begin() as db:
            result = await db.execute(
                update(TASKS)
                .where(TASKS.c.id == task_id, TASKS.c.status == "active")
                .values(**values)
            )
        if result.rowcount:
            await self._announce(task_id)
        return bool(result.rowcount)

    async def _update(self, task_id: int, values: dict[str, Any]) -> None:
        async with self.engine.begin() as db:
            await db.execute(update(TASKS).where(TASKS.c.id == task_id).values(**values))

    async def _announce(self, task_id: int) -> None:
        try:
            await self.redis.publish(keys.TASKS_CHANNEL, str(task_id))
        except Exception:  # the scheduler's periodic reload finds the change all the same
            log.warning("could not announce the change of task %s", task_id, exc_info=True)


def _if_active(status: Status) -> Any:
    """`status` for an active task; an ended one keeps how it ended."""
    return case((TASKS.c.status == "active", status), else_=TASKS.c.status)


def _row(new: NewTask, first: list[datetime], now: datetime) -> dict[str, Any]:
    schedule = new.schedule
    return {
        "name": new.name,
        "session_key": new.target.session,
        "platform": new.target.platform,
        "chat_kind": new.target.chat_kind,
        "reply_to": new.target.reply_to,
        "creator": new.creator.id,
        "creator_name": new.creator.name,
        "prompt": new.prompt,
        "when": new.when,
        "kind": schedule.kind,
        "spec": schedule.spec,
        "timezone": schedule.zone,
        "anchor": schedule.anchor,
        "if_missed": new.if_missed,
        "status": "active" if first else "done",
        "next_run_at": first[0] if first else None,
        "runs": 0,
        "missed": 0,
        "created_at": now,
        "updated_at": now,
        "run_config": new.config.model_dump(mode="json") if new.config else None,
        "tokens_per_day": new.tokens_per_day,
        "quiet": new.quiet,
    }


def _same(task: Task, new: NewTask) -> bool:
    """Whether a configured task is unchanged (its anchor aside, which is when it was read)."""
    return (
        task.target == new.target
        and task.prompt == new.prompt
        and task.when == new.when
        and task.schedule.spec == new.schedule.spec
        and task.schedule.zone == new.schedule.zone
        and task.if_missed == new.if_missed
        and task.config == new.config
        and task.tokens_per_day == new.tokens_per_day
        and task.quiet == new.quiet
    )


def _task(row: Any) -> Task:
    return Task(
        id=row.id,
        name=row.name,
        target=Target(
            session=row.session_key,
            platform=row.platform,
            chat_kind=row.chat_kind,
            reply_to=row.reply_to,
        ),
        creator=Sender(id=row.creator, name=row.creator_name),
        prompt=row.prompt,
        when=row.when,
        schedule=Schedule(kind=row.kind, spec=row.spec, zone=row.timezone, anchor=row.anchor),
        if_missed=row.if_missed,
        status=row.status,
        next_run_at=row.next_run_at,
        last_run_at=row.last_run_at,
        runs=row.runs,
        missed=row.missed,
        created_at=row.created_at,
        ended_by=row.ended_by,
        config=_config(row.id, row.run_config),
        tokens_per_day=row.tokens_per_day,
        quiet=bool(row.quiet),
    )


def _config(task_id: int, stored: dict[str, Any] | None) -> RunConfig | None:
    """A task's saved run config. One saved under older rules that no longer hold (a schema
    pattern only a backtracking engine runs) is logged and left out, so the task runs with
    the deployment's settings rather than stop every other task from loading."""
    if not stored:
        return None
    try:
        return RunConfig.model_validate(stored)
    except ValidationError as exc:
        problem = "; ".join(error["msg"] for error in exc.errors())
        log.error("task %d: its run config is no longer accepted (%s); it runs without it, "
                  "until it is replaced", task_id, problem)  # fmt: skip
        return None
