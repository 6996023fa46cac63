"""Runs' traces sealed at rest with the operator's keys, on SQLite and on PostgreSQL: the row
keeps a token that says nothing of the run, the key opens it back to the very trace, no key
or another one is told apart from a missing trace, a rotated key still opens what the old one
sealed, and the window's numbers need no key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr
from sqlalchemy import select

from bot.config.pricing import PriceTable
from bot.store.database import Database
from bot.store.history import History
from bot.store.sealing import TraceSeal, Unsealable
from bot.store.traces import RUNS, Traces
from tests.support.runs import Seed, record

WORDS = "the secret recipe"  # in the run's title and its tool call's arguments
HOUR = timedelta(hours=1)
OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def seal(*keys: str) -> TraceSeal:
    found = TraceSeal.of(SecretStr(",".join(keys)))
    assert found is not None
    return found


async def test_a_sealed_trace_is_kept_as_a_token_and_opened_by_its_keys(db: Database) -> None:
    plain = Seed(envelope="plain", tools=("calculator",))
    sealed = Seed(envelope="sealed", title=WORDS, tools=("recipes",))
    (plain_id,) = await record(db.history, plain)
    (sealed_id,) = await record(History(db.engine, PriceTable({}), seal(OLD)), sealed)
    async with db.engine.connect() as conn:
        rows = dict((await conn.execute(select(RUNS.c.id, RUNS.c.trace))).all())
    assert set(rows[sealed_id]) == {"sealed"} and "recipe" not in str(rows[sealed_id])
    assert "nodes" in rows[plain_id]  # written before a key was set: kept as it was

    reference = await Traces(db.engine).of_run(plain_id)
    assert reference is not None and reference.trace is not None
    opened = await Traces(db.engine, seal(NEW, OLD)).of_run(sealed_id)  # rotated: NEW first
    assert opened is not None and opened.trace is not None
    assert [n["name"] for n in opened.trace["nodes"]] == ["model", "recipes", "model"]
    assert opened.trace["nodes"][1]["detail"]["arguments"] == "n=0"
    assert opened.trace.keys() == reference.trace.keys()  # the same trace, metrics and all
    again = await Traces(db.engine, seal(OLD)).of_run(plain_id)  # a plain one with a key
    assert again is not None and again.trace == reference.trace

    with pytest.raises(Unsealable, match="PARLEY_TRACE_KEY, which this process is not given"):
        await Traces(db.engine).of_run(sealed_id)
    with pytest.raises(Unsealable, match="none of the keys in PARLEY_TRACE_KEY opens it"):
        await Traces(db.engine, seal(NEW)).of_run(sealed_id)

    start = datetime.fromtimestamp(min(plain.started_at, sealed.started_at), UTC)
    window = await Traces(db.engine).window(start - HOUR, start + HOUR, 0, 10)  # no key
    assert window.total == 2 and {r["id"] for r in window.runs} == {plain_id, sealed_id}
    assert window.average_reliability == 100
