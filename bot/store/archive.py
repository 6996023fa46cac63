"""Reading the record for operators (the sessions API, /usage), deleting, and retention.

Deletion is explicit, table by table, rather than left to ON DELETE CASCADE: a privacy
request must not depend on whether SQLite was told to enforce foreign keys. Deleting a
session deletes every row kept for it: its messages, runs (with their traces), approvals,
tasks, the older part of its context (`bot.store.cold_context`), and the digests written
from it (`bot.store.digests`). Retention deletes every row older than its window (the digests
of days before it too), in sessions still active as well as idle ones, and names the
active sessions that began before it: their contexts, in Redis and in the rows of
`bot.store.cold_context`, may hold messages as old, which the worker cuts under each
session's lease (`bot.session.retention`). Hot state in Redis and workspace files are the
caller's (`worker.jobs.prune`, `adapters.http.records`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.cold_context import CONTEXT
from bot.store.history import CONFIRMATIONS, MESSAGES, RUNS, SESSIONS
from bot.store.memory import MEMORIES, SOURCES, removed
from bot.store.record_statements import FILES, TOKEN_COUNTS
from bot.store.schema import TaskRow
from bot.store.sqlite_file import DatabaseFile
from bot.vocabulary.chats import HELPER_MARK
from bot.vocabulary.events import Trigger
from bot.vocabulary.replays import LANES

CHUNK = 500
TASKS: Table = TaskRow.__table__  # type: ignore[assignment]


class Tokens(BaseModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost_usd: float | None = None

    @classmethod
    def of(cls, row: Any) -> Tokens:
        return cls(
            input=row.input_tokens,
            output=row.output_tokens,
            cache_read=row.cache_read_tokens,
            cache_write=row.cache_write_tokens,
            cost_usd=None if row.cost_usd is None else round(row.cost_usd, 6),
        )


class SessionInfo(BaseModel):
    id: str
    platform: str
    chat_kind: str
    title: str
    model: str | None
    created_at: datetime
    updated_at: datetime
    messages: int
    runs: int
    usage: Tokens


class MessageInfo(BaseModel):
    id: str
    role: str
    text: str
    content: list[dict[str, Any]]
    summary: bool
    sender: str | None
    model: str | None
    run_id: str | None
    created_at: datetime
    usage: Tokens | None
    voice: dict[str, Any] | None = None  # its voice note's file reference, if it was said


class SessionDetail(SessionInfo):
    recent: list[MessageInfo]


class Stats(BaseModel):
    sessions: int
    messages: int
    runs: int
    failed_runs: int
    usage: Tokens
    by_platform: dict[str, Tokens]
    by_model: dict[str, Tokens]


@dataclass(frozen=True)
class Deleted:
    existed: bool  # the record had the session
    unused_files: list[str]  # hashes no message refers to any more


@dataclass(frozen=True)
class Pruned:
    """What one pass of retention deleted: the sessions idle since the window began (whole;
    their hot state and workspaces should go too), and the rows older than it in the others;
    and the sessions kept that began before it, whose live contexts may be as old."""

    sessions: list[str]
    runs: int
    messages: int
    confirmations: int
    tasks: int
    unused_files: list[str]  # hashes no message kept refers to: the file store's to remove
    older: list[str]  # the active sessions that began before the window
    digests: int = 0  # of days before the window

    @property
    def rows(self) -> int:
        """Rows deleted from the sessions kept, and digests."""
        return self.runs + self.messages + self.confirmations + self.tasks + self.digests


def _session(row: Any) -> SessionInfo:
    return SessionInfo(
        id=row.key,
        platform=row.platform,
        chat_kind=row.chat_kind,
        title=row.title,
        model=row.model,
        created_at=row.created_at,
        updated_at=row.updated_at,
        messages=row.message_count,
        runs=row.run_count,
        usage=Tokens.of(row),
    )


def _message(row: Any) -> MessageInfo:
    return MessageInfo(
        id=row.id,
        role=row.role,
        text=row.text,
        content=row.content,
        summary=row.summary,
        sender=row.sender,
        model=row.model,
        run_id=row.run_id,
        created_at=row.created_at,
        usage=Tokens.of(row) if row.model is not None else None,
        voice=row.voice,
    )


def _not_lab(key: Any) -> Any:
    """Not a lane of the lab's replays (`bot.vocabulary.replays`): the deployment's own."""
    return ~key.startswith(LANES, autoescape=True)


def _own(key: Any) -> Any:
    """Not a helper's session: a helper's tokens are in its parent's run too (the `delegate`
    call adds them to it), so sums of usage leave helpers out and count them once, there.
    Nor a lane of the lab's replays (`bot.vocabulary.replays`): they are not the
    deployment's own work."""
    return ~key.contains(HELPER_MARK, autoescape=True) & _not_lab(key)


def _sums(table: Table) -> list[Any]:
    return [
        *(func.coalesce(func.sum(table.c[name]), 0).label(name) for name in TOKEN_COUNTS),
        func.sum(table.c.cost_usd).label("cost_usd"),
    ]


class Archive:
    def __init__(self, engine: AsyncEngine, file: DatabaseFile | None = None) -> None:
        self.engine = engine
        self.file = file

    def problem(self) -> str | None:
        """What keeps the record from being used, for a health check: a SQLite file that
        vanished under the process. None if nothing is known to be wrong."""
        return None if self.file is None else self.file.problem()

    async def sessions(self, offset: int, limit: int) -> tuple[int, list[SessionInfo]]:
        """The most recently active first, and how many there are in all."""
        async with self.engine.connect() as db:
            total = (await db.execute(select(func.count()).select_from(SESSIONS))).scalar_one()
            page = (
                select(SESSIONS)
                .order_by(SESSIONS.c.updated_at.desc(), SESSIONS.c.key)
                .offset(offset)
                .limit(limit)
            )
            rows = (await db.execute(page)).all()
        return int(total), [_session(row) for row in rows]

    async def session(self, key: str, recent: int = 50) -> SessionDetail | None:
        async with self.engine.connect() as db:
            row = (await db.execute(select(SESSIONS).where(SESSIONS.c.key == key))).first()
            if row is None:
                return None
            newest = (
                select(MESSAGES)
                .where(MESSAGES.c.session_key == key)
                .order_by(MESSAGES.c.seq.desc())
                .limit(recent)
            )
            messages = list(reversed((await db.execute(newest)).all()))
        info = _session(row)
        return SessionDetail(**info.model_dump(), recent=[_message(m) for m in messages])

    async def totals(self, prefix: str) -> tuple[int, Tokens]:
        """How many sessions are `prefix` or under it (`prefix:…`), and their summed usage;
        helpers' sessions are neither counted nor added (their tokens are their parents')."""
        key = SESSIONS.c.key
        under = ((key == prefix) | key.startswith(f"{prefix}:", autoescape=True)) & _own(key)
        async with self.engine.connect() as db:
            row = (
                await db.execute(select(func.count().label("n"), *_sums(SESSIONS)).where(under))
            ).one()
        return int(row.n), Tokens.of(row)

    async def exists(self, key: str) -> bool:
        async with self.engine.connect() as db:
            found = await db.execute(select(SESSIONS.c.key).where(SESSIONS.c.key == key))
            return found.first() is not None

    async def delete(self, key: str, files: Iterable[str] = ()) -> Deleted:
        """Remove the session and everything recorded about it, and say which files its
        messages (and `files`, those of a turn not recorded yet) carried that no other
        message does: the file store's to remove."""
        async with self.engine.begin() as db:
            helpers = await _helpers_of(db, key)  # a session's helpers go with it
            wanted = await _files_of(db, MESSAGES.c.session_key.in_([key, *helpers]))
            existed = await _delete(db, [key]) > 0
            await _delete(db, helpers)
            return Deleted(existed, await _unused(db, wanted | set(files)))

    async def stats(self) -> Stats:
        """Every session, message and run counted (a helper's run is work done, and listed
        as such); tokens and cost summed over the sessions and runs that are not helpers',
        whose tokens their parents' runs hold already."""
        async with self.engine.connect() as db:
            sessions, messages = (
                await db.execute(
                    select(
                        select(func.count()).where(_not_lab(SESSIONS.c.key)).scalar_subquery(),
                        select(func.count())
                        .where(_not_lab(MESSAGES.c.session_key))
                        .scalar_subquery(),
                    )
                )
            ).one()
            runs, failed = (
                await db.execute(
                    select(func.count(), func.count().filter(RUNS.c.status == "failed")).where(
                        RUNS.c.trigger != Trigger.REPLAY
                    )
                )
            ).one()
            own = _own(SESSIONS.c.key)
            total = (await db.execute(select(*_sums(SESSIONS)).where(own))).one()
            platforms = await db.execute(
                select(SESSIONS.c.platform, *_sums(SESSIONS))
                .where(own)
                .group_by(SESSIONS.c.platform)
            )
            models = await db.execute(
                select(RUNS.c.model, *_sums(RUNS))
                .where(_own(RUNS.c.session_key))
                .group_by(RUNS.c.model)
            )
            return Stats(
                sessions=sessions,
                messages=messages,
                runs=runs,
                failed_runs=failed,
                usage=Tokens.of(total),
                by_platform={row.platform: Tokens.of(row) for row in platforms},
                by_model={row.model: Tokens.of(row) for row in models},
            )

    async def prune(self, before: datetime) -> Pruned:
        """Delete every row older than `before`: the sessions idle since then, whole, and in
        the others (active ones too) the runs that started before it, with their traces, the
        messages and approvals made before it, and the tasks that ended before it. A task
        still active stays, since it is what someone asked for from now on; a session's
        totals are computed again from the runs and messages it keeps. The sessions kept
        that began before it are named (`Pruned.older`): their live contexts are the
        caller's to cut."""
        async with self.engine.begin() as db:
            idle = select(SESSIONS.c.key).where(SESSIONS.c.updated_at < before)
            gone = list((await db.execute(idle)).scalars())
            wanted = await _files_of(db, MESSAGES.c.created_at < before)
            for start in range(0, len(gone), CHUNK):  # as many keys as SQLite binds at once
                chunk = gone[start : start + CHUNK]
                wanted |= await _files_of(db, MESSAGES.c.session_key.in_(chunk))
            await _delete(db, gone, tasks=False)
            touched: set[str] = set()
            counts: list[int] = []
            for table, old in (
                (RUNS, RUNS.c.started_at < before),
                (MESSAGES, MESSAGES.c.created_at < before),
                (CONFIRMATIONS, CONFIRMATIONS.c.created_at < before),
            ):
                keys = select(table.c.session_key).where(old).distinct()
                touched.update((await db.execute(keys)).scalars())
                counts.append(int((await db.execute(delete(table).where(old))).rowcount))
            ended = (TASKS.c.status != "active") & (TASKS.c.updated_at < before)
            tasks = int((await db.execute(delete(TASKS).where(ended))).rowcount)
            old_days = select(MEMORIES.c.id).where(MEMORIES.c.day < before.date())
            digests = await removed(db, list((await db.execute(old_days)).scalars()))
            await _recount(db, sorted(touched))
            unused = await _unused(db, wanted)
            begun = select(SESSIONS.c.key).where(SESSIONS.c.created_at < before)
            older = list((await db.execute(begun.order_by(SESSIONS.c.key))).scalars())
        runs, messages, confirmations = counts
        return Pruned(gone, runs, messages, confirmations, tasks, unused, older, digests)


def _of_session(table: Table, *columns: Any) -> Any:
    """A scalar of `table`'s rows of the session an UPDATE of SESSIONS is at."""
    return select(*columns).where(table.c.session_key == SESSIONS.c.key).scalar_subquery()


async def _recount(db: AsyncConnection, keys: list[str]) -> None:
    """The counts and usage of sessions that lost rows, from the rows they keep; the
    history adds each run's to them from then on."""
    values = {
        "message_count": _of_session(MESSAGES, func.count()),
        "run_count": _of_session(RUNS, func.count()),
        **{
            name: _of_session(RUNS, func.coalesce(func.sum(RUNS.c[name]), 0))
            for name in TOKEN_COUNTS
        },
        "cost_usd": _of_session(RUNS, func.sum(RUNS.c.cost_usd)),
    }
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        await db.execute(update(SESSIONS).where(SESSIONS.c.key.in_(chunk)).values(values))


async def _files_of(db: AsyncConnection, which: Any) -> set[str]:
    """The files the messages `which` selects carry; their rows say so no longer."""
    messages = select(MESSAGES.c.id).where(which)
    found = await db.execute(select(FILES.c.sha256).where(FILES.c.message_id.in_(messages)))
    hashes = set(found.scalars())
    await db.execute(delete(FILES).where(FILES.c.message_id.in_(messages)))
    return hashes


async def _unused(db: AsyncConnection, hashes: set[str]) -> list[str]:
    """Those of `hashes` no message carries (any more)."""
    wanted = sorted(hashes)
    kept: set[str] = set()
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start : start + CHUNK]
        kept.update(
            (await db.execute(select(FILES.c.sha256).where(FILES.c.sha256.in_(chunk)))).scalars()
        )
    return [sha for sha in wanted if sha not in kept]


async def _helpers_of(db: AsyncConnection, key: str) -> list[str]:
    """The sessions of `key`'s helpers (`bot.vocabulary.helpers`), theirs included."""
    prefix = f"{key}{HELPER_MARK}"
    found = await db.execute(
        select(SESSIONS.c.key).where(SESSIONS.c.key.startswith(prefix, autoescape=True))
    )
    return [str(row.key) for row in found]


async def _delete(db: AsyncConnection, keys: list[str], *, tasks: bool = True) -> int:
    """Delete sessions in chunks (SQLite allows only so many bound values per statement),
    with their tasks unless `tasks` is False, and the digests written from them."""
    tables = (MESSAGES, CONTEXT, RUNS, CONFIRMATIONS, *((TASKS,) if tasks else ()))
    deleted = 0
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        digests = select(SOURCES.c.memory_id).where(SOURCES.c.session_key.in_(chunk))
        await removed(db, list((await db.execute(digests)).scalars()))
        for table in tables:
            await db.execute(delete(table).where(table.c.session_key.in_(chunk)))
        result = await db.execute(delete(SESSIONS).where(SESSIONS.c.key.in_(chunk)))
        deleted += int(result.rowcount)
    return deleted
