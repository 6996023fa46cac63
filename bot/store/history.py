"""Writing each run to SQL as it ends, and rebuilding a session from SQL when Redis lost it.

A record is idempotent: messages carry their own ids, a run's id comes from its session and
first envelope, and a session's totals add only what the database did not have (a run
recorded again adds the difference from its earlier row, a message it had adds nothing). A
turn resumed after a crash, or a record retried after the database was away, therefore
writes each row once and counts it once; and a record costs the same in a session's
thousandth run as in its first. A failed record is caught up by the next one: messages are written
from `state.recorded` on, and a run joins `state.unrecorded` before it is written and leaves
it only once written, so runs missed while the database was away (unreachable, read-only,
its file gone) are written too, and the session's totals still add up to its messages.
`state.unrecorded` is bounded (`MAX_UNRECORDED`): a session whose database stays away for
that many runs loses the oldest of their rows, with an error in the log, rather than grow
its hot state without end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.config.pricing import PriceTable
from bot.redis.confirmations import Confirmation
from bot.store.engine import writers
from bot.store.outcome import answered, status_of
from bot.store.record_statements import (
    MESSAGES,
    RUNS,
    SESSIONS,
    TOKEN_COUNTS,
    Added,
    RecordStatements,
    insert_of,
)
from bot.store.schema import ConfirmationRow
from bot.store.sealing import TraceSeal, sealed
from bot.trace.metrics import TIMED, measure
from bot.vocabulary.messages import Message
from bot.vocabulary.runs import RunRecord, SessionInfo, run_id
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

__all__ = ["MESSAGES", "RUNS", "SESSIONS", "History", "RunRecord", "SessionInfo", "run_id"]
log = logging.getLogger(__name__)
RESTORE_LIMIT = 200
MAX_UNRECORDED = 100
CONFIRMATIONS: Table = ConfirmationRow.__table__  # type: ignore[assignment]


def _at(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def _tokens(usage: Usage, cost: float | None) -> dict[str, Any]:
    return {name: getattr(usage, name) for name in TOKEN_COUNTS} | {"cost_usd": cost}


def upsert(connection: AsyncConnection, table: Table) -> Any:
    """`INSERT … ON CONFLICT` in the connection's dialect (both speak it, differently)."""
    return insert_of(connection.dialect.name, table)


class History:
    def __init__(
        self, engine: AsyncEngine, prices: PriceTable, seal: TraceSeal | None = None
    ) -> None:
        self.engine = engine
        self.prices = prices
        self.seal = seal  # the runs' traces are sealed with it (`bot.store.sealing`)
        self._writers = asyncio.Semaphore(writers(engine))
        self._statements = RecordStatements(engine.dialect.name)

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncConnection]:
        """A transaction that writes, once one of the few places for writers is free.

        Hundreds of runs can end at once (long turns begun together); each record waiting
        for the database's write lock would hold a pooled connection meanwhile, and the
        reads that prepare a new turn would queue behind them all for a connection. SQLite
        takes one writer at a time anyway, so there a process's records wait here, holding
        nothing, and the rest of the pool stays free for reads (`engine.writers`)."""
        async with self._writers, self.engine.begin() as db:
            yield db

    async def record(self, state: SessionState, run: RunRecord) -> None:
        """Write `run`, the runs earlier records missed, and the messages they added; then
        `state.unrecorded` empties and `state.recorded` moves past them. On failure the run
        stays in `state.unrecorded` for the next record."""
        _queue(state, run)
        runs = list(state.unrecorded)
        fresh, grown = _since(state.messages, state.recorded)
        last = runs[-1]
        rows = [self._run_row(each) for each in runs]
        async with self._writing() as db:
            await self._session(db, runs[0].where, last.model)
            earlier = await self._earlier(db, rows)
            for row in rows:
                await db.execute(self._statements.run(row), row)
            messages = await self._messages(db, runs, fresh, replace_first=grown)
            added = Added.of(rows, earlier, messages)
            now = datetime.now(UTC)
            totals = added.parameters(last.where.session, last.model, now)
            await db.execute(self._statements.session_totals, totals)
        state.unrecorded = state.unrecorded[len(runs) :]
        if state.messages:
            state.recorded = state.messages[-1].id

    async def _session(self, db: AsyncConnection, where: SessionInfo, model: str | None) -> None:
        now = datetime.now(UTC)
        values = {
            "key": where.session,
            "platform": where.platform,
            "chat_kind": where.chat_kind,
            "title": where.title[:200],
            "model": model,
            "created_at": now,
            "updated_at": now,
            "message_count": 0,
            "run_count": 0,
            "context_from": 0,
            **_tokens(Usage(), None),
        }
        await db.execute(self._statements.session, values)

    async def _earlier(self, db: AsyncConnection, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The rows of these runs already in the database, by id: a turn resumed after a
        crash is recorded again, and the session counts it once."""
        ids = {"ids": [row["id"] for row in rows]}
        return {row.id: row for row in await db.execute(self._statements.recorded_runs, ids)}

    def _run_row(self, run: RunRecord) -> dict[str, Any]:
        status = status_of(run.finish_reason)
        first = run.first_text_at
        return {
            "id": run.id,
            "session_key": run.where.session,
            "envelope_ids": list(run.envelope_ids),
            "trigger": run.trigger,
            "sender": run.sender,
            "model": run.model,
            "status": status,
            "finish_reason": run.finish_reason,
            "iterations": run.iterations,
            "started_at": _at(run.started_at),
            "finished_at": _at(run.finished_at),
            "latency_ms": round((run.finished_at - run.started_at) * 1000),
            "first_text_ms": None if first is None else round((first - run.started_at) * 1000),
            "error": run.error,
            **_tokens(run.usage, self.prices.cost(run.model, run.usage)),
            **_traced(run, answered(status), self.seal),
            **_configured(run),
        }

    async def _messages(
        self,
        db: AsyncConnection,
        runs: list[RunRecord],
        fresh: list[Message],
        *,
        replace_first: bool,
    ) -> int:
        """Insert `fresh`, each with the run that added it; the first may be the last one
        recorded before, grown since (new text merged into a trailing user message), so its
        content is written again. How many the session did not have yet."""
        if not fresh:
            return 0
        owners = _owners(fresh, runs)
        rows = [
            self._message_row(owner, m, new=i > 0 or not replace_first)
            for i, (m, owner) in enumerate(zip(fresh, owners, strict=True))
        ]
        # rows as parameters, not as a VALUES list: the statement compiles once
        added = {row.id for row in await db.execute(self._statements.message, rows)}
        files = [{"message_id": m.id, "sha256": sha} for m in fresh for sha in m.stored_files]
        if files:  # what says the files are wanted (a grown message's too, written again)
            await db.execute(self._statements.message_file, files)
        first = rows[0]
        if replace_first and first["id"] not in added:  # it was there: it may have grown
            grown = {"grown_id": first["id"], "grown_content": first["content"]}
            await db.execute(self._statements.grown_message, grown | {"grown_text": first["text"]})
        return len(added)

    def _message_row(self, run: RunRecord, message: Message, *, new: bool) -> dict[str, Any]:
        usage = message.usage or Usage()
        assistant = message.role == "assistant"
        model = (message.model or run.model) if assistant else None
        cost = self.prices.cost(model, usage) if model and message.usage else None
        return {
            "id": message.id,
            "session_key": run.where.session,
            "run_id": run.id if new else None,
            "role": message.role,
            "summary": message.summary,
            "sender": _sender(run, message),
            "model": model,
            "content": [block.model_dump(mode="json") for block in message.content],
            "text": message.text,
            "voice": message.voice.model_dump(mode="json") if message.voice else None,
            "created_at": _at(message.at),
            **_tokens(usage, cost),
        }

    async def reset(self, session: str) -> None:
        """After /new: a session rebuilt from SQL starts after the messages it has now."""
        last = select(func.coalesce(func.max(MESSAGES.c.seq), 0)).where(
            MESSAGES.c.session_key == session
        )
        async with self._writing() as db:
            await db.execute(
                update(SESSIONS)
                .where(SESSIONS.c.key == session)
                .values(context_from=last.scalar_subquery())
            )

    async def restore(self, session: str, limit: int = RESTORE_LIMIT) -> SessionState | None:
        """The session as SQL knows it: the latest summary and the messages after it (at most
        `limit`), starting at a turn so every tool result keeps its call. None if unknown."""
        async with self.engine.connect() as db:
            row = (await db.execute(select(SESSIONS).where(SESSIONS.c.key == session))).first()
            if row is None:
                return None
            m = MESSAGES.c
            mine = (m.session_key == session) & (m.seq > row.context_from)
            latest = select(func.max(m.seq)).where(mine & m.summary)
            summary_seq = (await db.execute(latest)).scalar()
            if summary_seq is not None:
                mine = mine & (m.seq >= summary_seq)
            newest = select(MESSAGES).where(mine).order_by(m.seq.desc()).limit(limit)
            rows = list(reversed((await db.execute(newest)).all()))
            if summary_seq is not None and rows and rows[0].seq != summary_seq:
                summary = select(MESSAGES).where(m.seq == summary_seq)
                rows.insert(0, (await db.execute(summary)).one())
        messages = _from_turn_start([_message(r) for r in rows])
        recorded = rows[-1].id if rows else None
        return SessionState(messages=messages, recorded=recorded)

    async def asked(self, where: SessionInfo, confirmation: Confirmation) -> None:
        """An approval was asked for: the audit gets its row (once)."""
        values = {
            "id": confirmation.id,
            "session_key": where.session,
            "envelope_id": confirmation.envelope_id,
            "requester": confirmation.requester,
            "calls": [call.model_dump(mode="json") for call in confirmation.calls],
            "status": confirmation.status,
            "created_at": datetime.now(UTC),
            "expires_at": _at(confirmation.expires_at),
        }
        async with self._writing() as db:
            await self._session(db, where, None)
            statement = upsert(db, CONFIRMATIONS).values(values)
            await db.execute(statement.on_conflict_do_nothing(index_elements=["id"]))

    async def decided(self, confirmation: Confirmation) -> None:
        """Whoever decided (a person, the expiry, a new message that declined it)."""
        at = None if confirmation.decided_at is None else _at(confirmation.decided_at)
        async with self._writing() as db:
            await db.execute(
                update(CONFIRMATIONS)
                .where(CONFIRMATIONS.c.id == confirmation.id)
                .values(
                    status=confirmation.status, decided_by=confirmation.decided_by, decided_at=at
                )
            )


def _queue(state: SessionState, run: RunRecord) -> None:
    """Put `run` after the runs still waiting for the record, dropping the oldest past
    `MAX_UNRECORDED`. A run recorded again (a resumed turn) takes its earlier entry's place."""
    last = state.messages[-1].id if state.messages else None
    run = dataclasses.replace(run, last_message=last)
    waiting = [each for each in state.unrecorded if each.id != run.id]
    waiting.append(run)
    if len(waiting) > MAX_UNRECORDED:
        dropped = waiting[:-MAX_UNRECORDED]
        waiting = waiting[-MAX_UNRECORDED:]
        log.error(
            "%s: %d run(s) from %s on could not be written while the database was away "
            "and are dropped from the record (at most %d are kept)",
            run.where.session,
            len(dropped),
            _at(dropped[0].started_at).isoformat(timespec="seconds"),
            MAX_UNRECORDED,
        )
    state.unrecorded = waiting


def _owners(fresh: list[Message], runs: list[RunRecord]) -> list[RunRecord]:
    """The run that added each message: a run owns the messages up to its `last_message`,
    the newest run the rest. A run whose last message is not among them (compacted away)
    owns none."""
    ids = {message.id for message in fresh}
    ends = [run for run in runs[:-1] if run.last_message in ids] + [runs[-1]]
    owners, k = [], 0
    for message in fresh:
        owners.append(ends[k])
        while k < len(ends) - 1 and ends[k].last_message == message.id:
            k += 1
    return owners


def _since(messages: list[Message], recorded: str | None) -> tuple[list[Message], bool]:
    """Messages from the last recorded one on, and whether that one leads them (it may have
    grown since); all of them if it was compacted away."""
    if recorded is not None:
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].id == recorded:
                return messages[index:], True
    return list(messages), False


def _sender(run: RunRecord, message: Message) -> str | None:
    """Who wrote a user message with text (not tool results, not a summary)."""
    said = message.role == "user" and not message.summary and bool(message.text)
    return run.sender if said else None


def _message(row: Any) -> Message:
    usage = None
    if row.role == "assistant" and row.model is not None:
        usage = Usage(
            row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens
        )
    return Message.model_validate(
        {
            "id": row.id,
            "role": row.role,
            "content": row.content,
            "summary": row.summary,
            "at": row.created_at.timestamp(),
            "usage": usage,
            "model": row.model,
            "voice": row.voice,
        }
    )


def _from_turn_start(messages: list[Message]) -> list[Message]:
    """Drop leading messages until a summary or the start of a turn."""
    for index, message in enumerate(messages):
        if message.summary or message.starts_turn:
            return messages[index:]
    return []


def _traced(run: RunRecord, answered: bool, seal: TraceSeal | None) -> dict[str, Any]:
    """The run's trace with its numbers, and its score and tool usage alone, which the runs'
    aggregates read from an index (`schema.WINDOW_INDEX`); a run recorded before traces
    existed has none of them. `answered` is False for a run that ended without its answer;
    the trace is sealed with `seal`, if given."""
    if run.trace is None:
        unknown = {f"{state}_ms": None for state in TIMED}
        return {"trace": None, "reliability": None, "tool_usage": None, **unknown}
    latency = round((run.finished_at - run.started_at) * 1000)
    tokens = run.usage.input_tokens + run.usage.output_tokens
    metrics = measure(run.trace, latency_ms=latency, tokens=tokens, answered=answered)
    kept = {**run.trace.model_dump(), "metrics": metrics.model_dump()}
    timed = {f"{state}_ms": metrics.states.get(state, 0) for state in TIMED}
    return {
        "trace": sealed(kept, seal), "reliability": metrics.reliability,
        "tool_usage": metrics.tool_usage,
        **timed,
    }  # fmt: skip


def _configured(run: RunRecord) -> dict[str, Any]:
    """What the run ran with, and the fields of it the runs are filtered by."""
    ran = run.config
    if ran is None:
        return {"config": None, "mode": None, "prompt_hash": None, "tools_hash": None}
    return {
        "config": ran.model_dump(mode="json"),
        "mode": ran.mode,
        "prompt_hash": ran.prompt.hash,
        "tools_hash": ran.tools_hash,
    }
