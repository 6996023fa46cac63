"""The task book on SQLite and PostgreSQL: who may have and end tasks, which tasks a chat
has, the scheduler's bookkeeping, the configuration's tasks, and the announcements."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from sqlalchemy import update

from bot.config.settings import Settings
from bot.redis import keys
from bot.store.schema import TaskRow
from bot.tasks.book import NewTask, TaskBook, TaskRefused
from bot.tasks.model import CONFIG_CREATOR, Target
from bot.vocabulary.envelope import Sender
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.schedule import parse_when

LISBON = zoneinfo.ZoneInfo("Europe/Lisbon")
NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)
ANN = Sender(id="tg:1", name="Ann")
BOB = Sender(id="tg:2", name="Bob")
ADMIN = Sender(id="tg:9", name="Root", is_admin=True)
CONFIG = Sender(id=CONFIG_CREATOR, name="configuration")


def chat(session: str = "tg:12") -> Target:
    return Target(session=session, platform="telegram", reply_to={"chat_id": 12})


def new(
    when: str = "every 30 minutes",
    *,
    by: Sender = ANN,
    session: str = "tg:12",
    prompt: str = "Remind Ann to stretch",
    name: str | None = None,
) -> NewTask:
    return NewTask(chat(session), by, prompt, when, parse_when(when, LISBON, NOW), name=name)


async def test_a_task_is_kept_and_read_back_whole(book: TaskBook) -> None:
    made = await book.add(new("0 9 * * 1-5"), max_active=20, now=NOW)
    task = await book.get(made.id)
    assert task == made
    assert task.target == chat() and task.creator == Sender(id="tg:1", name="Ann")
    assert (task.status, task.runs, task.missed, task.name) == ("active", 0, 0, None)
    assert task.schedule.zone == "Europe/Lisbon" and task.schedule.anchor == NOW
    assert task.next_run_at == datetime(2026, 6, 11, 8, 0, tzinfo=UTC)  # 09:00 WEST
    assert task.created_at == NOW
    assert await book.get(made.id + 1000) is None


async def test_the_default_limit_of_active_tasks_per_person(book: TaskBook) -> None:
    limit = Settings(_env_file=None).tasks_per_person
    assert limit == 20
    for n in range(limit):
        await book.add(new(prompt=f"task {n}"), max_active=limit, now=NOW)
    with pytest.raises(TaskRefused) as refused:
        await book.add(new(prompt="one too many"), max_active=limit, now=NOW)
    assert str(refused.value) == (
        "You have 20 active tasks, the most allowed; cancel one first (list_tasks shows them)."
    )
    await book.add(new(by=BOB), max_active=limit, now=NOW)  # the limit is per person
    first = (await book.of_person(ANN.id))[0]
    assert (await book.end(first.id, ANN))[0] == "cancelled"
    await book.add(new(prompt="room again"), max_active=limit, now=NOW)
    assert len(await book.of_person(ANN.id)) == limit


async def test_a_chat_has_its_sessions_tasks_and_not_a_longer_chat_ids(book: TaskBook) -> None:
    in_chat = await book.add(new(session="tg:12"), max_active=20, now=NOW)
    in_topic = await book.add(new(session="tg:12:7"), max_active=20, now=NOW)
    await book.add(new(session="tg:123"), max_active=20, now=NOW)
    await book.add(new(session="tg:1"), max_active=20, now=NOW)
    assert [t.id for t in await book.in_chat("tg:12")] == [in_chat.id, in_topic.id]
    assert [t.id for t in await book.in_chat("tg:12:7")] == [in_topic.id]


async def test_like_wildcards_and_case_in_session_keys_match_only_themselves(
    book: TaskBook,
) -> None:
    percent = await book.add(new(session="http:a%"), max_active=20, now=NOW)
    await book.add(new(session="http:ab:x"), max_active=20, now=NOW)
    under = await book.add(new(session="slack:T1:C_1"), max_active=20, now=NOW)
    await book.add(new(session="slack:T1:CX1:1.2"), max_active=20, now=NOW)
    await book.add(new(session="slack:t1:c_1:1.2"), max_active=20, now=NOW)
    assert [t.id for t in await book.in_chat("http:a%")] == [percent.id]
    assert [t.id for t in await book.in_chat("slack:T1:C_1")] == [under.id]
    assert await book.in_chat("http:a") == []


async def test_who_may_end_a_task(book: TaskBook) -> None:
    task = await book.add(new(), max_active=20, now=NOW)
    outcome, seen = await book.end(task.id, BOB)
    assert outcome == "forbidden" and seen is not None and seen.active
    outcome, seen = await book.end(task.id, ANN)
    assert outcome == "cancelled" and seen is not None
    assert (seen.status, seen.ended_by) == ("cancelled", ANN.id)
    assert (await book.end(task.id, ANN))[0] == "ended"  # twice: already over
    other = await book.add(new(), max_active=20, now=NOW)
    outcome, seen = await book.end(other.id, ADMIN)
    assert outcome == "cancelled" and seen is not None and seen.ended_by == ADMIN.id
    assert await book.end(99999, ADMIN) == ("not_found", None)


async def test_a_configured_task_is_ended_only_by_the_configuration(book: TaskBook) -> None:
    (digest,) = await book.replace_config([new("0 8 * * *", by=CONFIG, name="digest")], NOW)
    for person in (ADMIN, CONFIG, ANN):
        assert (await book.end(digest.id, person))[0] == "forbidden"
    assert (await book.get(digest.id)).active  # type: ignore[union-attr]


async def test_runs_move_the_next_run_and_end_a_one_off_task(book: TaskBook) -> None:
    recurring = await book.add(new("every 30 minutes"), max_active=20, now=NOW)
    first = recurring.next_run_at
    assert first == NOW + timedelta(minutes=30)
    second = first + timedelta(minutes=30)
    await book.ran(recurring.id, first, second)
    task = await book.get(recurring.id)
    assert task is not None
    assert (task.status, task.runs, task.last_run_at, task.next_run_at) == (
        "active",
        1,
        first,
        second,
    )
    await book.skipped(recurring.id, second, second + timedelta(minutes=30))
    task = await book.get(recurring.id)
    assert task is not None and (task.status, task.missed, task.runs) == ("active", 1, 1)

    once = await book.add(new("in 10 minutes"), max_active=20, now=NOW)
    await book.ran(once.id, NOW + timedelta(minutes=10), None)
    done = await book.get(once.id)
    assert done is not None and (done.status, done.runs, done.next_run_at) == ("done", 1, None)
    missed = await book.add(new("in 10 minutes"), max_active=20, now=NOW)
    await book.skipped(missed.id, NOW + timedelta(minutes=10), None)
    gone = await book.get(missed.id)
    assert gone is not None and (gone.status, gone.missed) == ("missed", 1)
    assert [t.id for t in await book.every()] == [recurring.id]
    assert len(await book.every(active=False)) == 3


async def test_a_run_reported_after_a_cancel_leaves_the_task_cancelled(book: TaskBook) -> None:
    once = await book.add(new("in 10 minutes"), max_active=20, now=NOW)
    await book.end(once.id, ANN)
    await book.ran(once.id, NOW + timedelta(minutes=10), None)  # it was already on its way
    task = await book.get(once.id)
    assert task is not None and (task.status, task.runs) == ("cancelled", 1)
    other = await book.add(new("in 10 minutes"), max_active=20, now=NOW)
    await book.end(other.id, ANN)
    await book.skipped(other.id, NOW + timedelta(minutes=10), None)
    task = await book.get(other.id)
    assert task is not None and task.status == "cancelled"


async def test_the_configuration_s_tasks_are_replaced_by_name(book: TaskBook) -> None:
    digest = new("0 8 * * *", by=CONFIG, name="digest", session="slack:T1:C1")
    report = new("0 17 * * 5", by=CONFIG, name="report")
    first = await book.replace_config([digest, report], NOW)
    assert [t.name for t in first] == ["digest", "report"]
    again = await book.replace_config([digest, report], NOW + timedelta(hours=1))
    assert [t.id for t in again] == [t.id for t in first]  # unchanged: kept as they were
    changed = new("0 9 * * *", by=CONFIG, name="digest", session="slack:T1:C1")
    after = await book.replace_config([changed], NOW)
    assert [(t.name, t.when) for t in after] == [("digest", "0 9 * * *")]
    for made in first:
        old = await book.get(made.id)
        assert old is not None and (old.status, old.ended_by, old.name) == (
            "cancelled",
            CONFIG_CREATOR,
            None,
        )
    assert await book.replace_config([], NOW) == []
    assert await book.every() == []


async def test_changes_are_announced_on_the_tasks_channel(book: TaskBook, redis: Redis) -> None:
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.TASKS_CHANNEL)
    try:
        await _next_message(pubsub)  # the subscription's confirmation
        task = await book.add(new(), max_active=20, now=NOW)
        assert await _next_message(pubsub) == str(task.id).encode()
        await book.end(task.id, BOB)  # refused: nothing changed, nothing said
        second = await book.add(new(), max_active=20, now=NOW)
        assert await _next_message(pubsub) == str(second.id).encode()
        await book.end(task.id, ANN)
        assert await _next_message(pubsub) == str(task.id).encode()
        await book.end(task.id, ANN)  # already ended: nothing said
        third = await book.add(new(), max_active=20, now=NOW)
        assert await _next_message(pubsub) == str(third.id).encode()
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()  # type: ignore[no-untyped-call]


async def _next_message(pubsub: PubSub) -> bytes:
    """The next thing said on the channel, waited for generously."""

    async def wait() -> bytes:
        while True:
            message = await pubsub.get_message(timeout=1.0)
            if message is not None:
                return message["data"] if message["type"] == "message" else b"subscribed"

    return await asyncio.wait_for(wait(), timeout=30)


async def test_the_limit_holds_for_tasks_added_at_the_same_time(book: TaskBook) -> None:
    """The model may call schedule_task several times in one reply; the calls run at once."""
    results = await asyncio.gather(
        *(book.add(new(prompt=f"task {n}"), max_active=3, now=NOW) for n in range(6)),
        return_exceptions=True,
    )
    assert sum(isinstance(result, TaskRefused) for result in results) == 3
    assert len(await book.of_person(ANN.id)) == 3


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
async def test_on_postgresql_the_limit_holds_across_processes(book: TaskBook, redis: Redis) -> None:
    """Workers' books (each with its own lock) adding for the same person at once; SQLite
    is one process's database here, so only PostgreSQL needs this."""
    books = [TaskBook(book.engine, redis) for _ in range(8)]
    results = await asyncio.gather(
        *(each.add(new(prompt="at once"), max_active=3, now=NOW) for each in books),
        return_exceptions=True,
    )
    assert sum(isinstance(result, TaskRefused) for result in results) == 5
    assert len(await book.of_person(ANN.id)) == 3


async def test_a_configured_task_keeps_its_run_config_and_a_new_one_replaces_it(
    book: TaskBook,
) -> None:
    schema = {"type": "object", "required": ["items"]}
    digest = dataclasses.replace(
        new("0 8 * * *", by=CONFIG, name="digest"), config=RunConfig(output_schema=schema)
    )
    (first,) = await book.replace_config([digest], NOW)
    assert first.config == RunConfig(output_schema=schema)
    assert first.envelope(NOW).run == RunConfig(output_schema=schema)  # each run carries it
    (kept,) = await book.replace_config([digest], NOW)
    assert kept.id == first.id
    planned = dataclasses.replace(digest, config=RunConfig(mode="plan_execute"))
    (replaced,) = await book.replace_config([planned], NOW)
    assert replaced.id != first.id and replaced.config == RunConfig(mode="plan_execute")


async def test_a_task_whose_saved_config_is_no_longer_accepted_still_loads(
    book: TaskBook, caplog: pytest.LogCaptureFixture
) -> None:
    """A schema saved before patterns had to be linear-time must not stop every task from
    loading (the scheduler reads them all): that task runs without its config, said once."""
    kept = await book.add(new("every 2 hours", prompt="kept"), max_active=20, now=NOW)
    made = await book.add(new("every 3 hours", prompt="old"), max_active=20, now=NOW)
    schema = {"type": "string", "pattern": "(?=a)b"}
    async with book.engine.begin() as db:
        await db.execute(
            update(TaskRow).where(TaskRow.id == made.id)
            .values(run_config={"output_schema": schema})
        )  # fmt: skip
    with caplog.at_level(logging.ERROR, logger="bot.tasks.book"):
        active = await book.every()
    assert {task.id: task.config for task in active} == {kept.id: None, made.id: None}
    (line,) = [r.getMessage() for r in caplog.records]
    assert f"task {made.id}: its run config is no longer accepted" in line and "(?=a)b" in line
