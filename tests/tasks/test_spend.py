"""A task's daily token cap and quiet check-ins, on SQLite and PostgreSQL and a real Redis:
the new columns are kept, a run's tokens count once per run and per UTC day, the chat is told
once a day, `/checkin` makes, lists and cancels quiet tasks, and `/tasks` shows the spend."""

from __future__ import annotations

import dataclasses
import zoneinfo
from datetime import UTC, datetime, timedelta

from redis.asyncio import Redis

from adapters.chat import checkin_commands, task_list
from adapters.chat.checkin_commands import Asked
from bot.redis import keys
from bot.tasks.book import TaskBook
from bot.tasks.model import NOTHING_TO_REPORT
from bot.tasks.spend import DAY_TTL, TaskSpend, cap_of, capped_text
from bot.vocabulary.envelope import Sender, task_run_id
from tests.tasks.test_book import ANN, BOB, NOW, chat, new

UTC_ZONE = zoneinfo.ZoneInfo("UTC")


async def test_a_tasks_cap_and_quietness_are_kept(book: TaskBook) -> None:
    made = await book.add(
        dataclasses.replace(new(), tokens_per_day=5_000, quiet=True), max_active=20, now=NOW
    )
    task = await book.get(made.id)
    assert task is not None and (task.tokens_per_day, task.quiet) == (5_000, True)
    assert "It spends at most 5,000 tokens a day." in task.confirmation(NOW)
    envelope = task.envelope(NOW)
    assert envelope.quiet and NOTHING_TO_REPORT in envelope.text
    plain = await book.add(new(), max_active=20, now=NOW)
    assert (plain.tokens_per_day, plain.quiet) == (None, False)
    assert not plain.envelope(NOW).quiet and NOTHING_TO_REPORT not in plain.envelope(NOW).text


async def test_the_lower_cap_holds(book: TaskBook) -> None:
    own = await book.add(dataclasses.replace(new(), tokens_per_day=500), max_active=20, now=NOW)
    plain = await book.add(new(), max_active=20, now=NOW)
    assert (cap_of(own, 1_000), cap_of(own, 100), cap_of(own, 0)) == (500, 100, 500)
    assert (cap_of(plain, 1_000), cap_of(plain, 0)) == (1_000, None)
    assert capped_text(own, 500) == (
        f"The task #{own.id} (Remind Ann to stretch) reached its daily cap of 500 tokens; "
        "it runs again tomorrow."
    )


async def test_a_runs_tokens_count_once_and_by_utc_day(redis: Redis) -> None:
    spend = TaskSpend(redis)
    now = datetime(2026, 6, 10, 23, 59, tzinfo=UTC)
    run = task_run_id(7, now.timestamp())
    assert await spend.charge(run, 300, now) == 300
    assert await spend.charge(run, 300, now) == 300  # recorded again after a crash
    assert await spend.charge(task_run_id(7, now.timestamp() + 1), 50, now) == 350
    assert await spend.charge("tg:99", 50, now) is None  # no task's run
    tomorrow = now + timedelta(minutes=2)
    assert await spend.today([7, 8], now) == {7: 350, 8: 0}
    assert await spend.today([7], tomorrow) == {7: 0}
    assert 0 < await redis.ttl(keys.task_tokens(7, "2026-06-10")) <= DAY_TTL
    assert await spend.first_telling(7, now)
    assert not await spend.first_telling(7, now)  # told once a day
    assert await spend.first_telling(7, tomorrow)


def asked(said: str, *, session: str = "tg:12", may_make: bool = True, who: Sender = ANN) -> Asked:
    """`said` after `/checkin` in `session`, with a minimum interval of a minute."""
    return Asked(said, chat(session), who, may_make, UTC_ZONE, 60.0, 20)


async def test_checkin_makes_lists_and_cancels_quiet_tasks(book: TaskBook) -> None:
    assert await checkin_commands.answer(book, asked("")) == checkin_commands.NONE
    said = await checkin_commands.answer(
        book, asked("every 2h look at the build and tell me only if it failed")
    )
    (task,) = await book.in_chat("tg:12")
    assert said.startswith(f"Check-in #{task.id} set: every 2 hours")
    assert task.quiet and task.prompt == "look at the build and tell me only if it failed"
    assert task.schedule.kind == "interval" and task.when == "every 2h"
    await book.add(new(), max_active=20, now=NOW)  # a task that is no check-in
    listing = await checkin_commands.answer(book, asked(""))
    assert listing.splitlines() == ["Check-ins in this chat:", task.summary()]
    assert ", quiet" in task.summary()
    assert await checkin_commands.answer(book, asked("every day", may_make=False)) == (
        checkin_commands.HOW
    )
    refused = await checkin_commands.answer(book, asked("every 3h check", may_make=False))
    assert refused == checkin_commands.ADMINS_ONLY
    assert await checkin_commands.answer(book, asked(f"off {task.id}", who=BOB)) == (
        f"Only the person who made check-in {task.id}, or an admin, may cancel it."
    )
    elsewhere = await checkin_commands.answer(book, asked(f"off {task.id}", session="tg:13"))
    assert elsewhere == f"There is no check-in {task.id} in this chat."
    assert await checkin_commands.answer(book, asked(f"off {task.id}")) == (
        f"Cancelled check-in #{task.id}."
    )
    assert await checkin_commands.answer(book, asked("")) == checkin_commands.NONE
    often = await checkin_commands.answer(book, asked("every 5 seconds peek"))
    assert often == "That runs every 5 seconds; tasks may run at most every 1 minute."
    assert not [task for task in await book.in_chat("tg:12") if task.quiet]


async def test_the_task_list_shows_each_tasks_spend_today(book: TaskBook, redis: Redis) -> None:
    capped = await book.add(dataclasses.replace(new(), tokens_per_day=900), max_active=20, now=NOW)
    plain = await book.add(new(prompt="Water the plants"), max_active=20, now=NOW)
    await TaskSpend(redis).charge(task_run_id(capped.id, 1.0), 120)
    shown = await task_list.chat_listing(book, "tg:12", 0)
    assert shown is not None
    lines = shown.text.splitlines()
    assert lines[1].endswith(" · 120 of 900 tokens today")
    assert lines[2].endswith(" · 0 tokens today")  # no cap anywhere
    deployment = await task_list.chat_listing(book, "tg:12", 10_000)
    assert deployment is not None
    assert deployment.text.splitlines()[2].endswith(" · 0 of 10,000 tokens today")
    assert deployment.buttons == [capped.id, plain.id]
