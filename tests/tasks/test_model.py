"""A task's runs as envelopes, and what a person is told about a task."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta

from bot.tasks.model import Target, Task
from bot.vocabulary.envelope import Sender
from tests.support.chat_tasks import task_as_stored

LISBON = zoneinfo.ZoneInfo("Europe/Lisbon")
NOW = datetime(2026, 10, 23, 12, 0, tzinfo=UTC)  # a Friday, two days before DST ends
ANN = Sender(id="tg:1", name="Ann")
TOPIC = {"chat_id": -100, "chat_type": "supergroup", "thread_id": 7}


def task(when: str = "0 9 * * *", prompt: str = "Summarise the open issues") -> Task:
    target = Target(session="tg:-100:7", platform="telegram", chat_kind="group", reply_to=TOPIC)
    return task_as_stored(target, ANN, when, NOW, id=7, prompt=prompt)


def test_a_run_s_envelope_is_the_same_for_the_same_run_time() -> None:
    made = task()
    run_at = datetime(2026, 10, 24, 8, 0, tzinfo=UTC)
    first = made.envelope(run_at)
    again = made.envelope(run_at.astimezone(LISBON))  # another scheduler, another zone
    assert first.id == again.id == f"task:7:{int(run_at.timestamp())}" == "task:7:1792828800"
    assert made.envelope(run_at + timedelta(days=1)).id != first.id
    assert made.envelope(run_at + timedelta(seconds=1)).id != first.id


def test_a_run_s_envelope_comes_from_the_creator_and_answers_where_the_task_was_made() -> None:
    envelope = task().envelope(datetime(2026, 10, 25, 9, 0, tzinfo=UTC))
    assert envelope.kind == "scheduled" and not envelope.is_plain
    assert envelope.sender == ANN
    assert (envelope.session, envelope.platform, envelope.chat_kind, envelope.reply_to) == (
        "tg:-100:7",
        "telegram",
        "group",
        TOPIC,
    )
    header, prompt = envelope.text.split("\n", 1)
    assert prompt == "Summarise the open issues"
    assert header.startswith("(Scheduled task 7, cron 0 9 * * *, set by Ann;")
    assert "its run of Sun 2026-10-25 09:00 WET" in header


def test_the_confirmation_names_the_zone_and_three_runs() -> None:
    assert task().confirmation(NOW) == (
        "Task 7 runs cron 0 9 * * *, in the time zone Europe/Lisbon. Next runs: "
        "Sat 2026-10-24 09:00 WEST, Sun 2026-10-25 09:00 WET, Mon 2026-10-26 09:00 WET. "
        "Prompt: Summarise the open issues"
    )
    once = task("in 20 minutes", "Call the bank")
    assert once.confirmation(NOW) == (
        "Task 7 runs once, in the time zone Europe/Lisbon. Next runs: "
        "Fri 2026-10-23 13:20 WEST. Prompt: Call the bank"
    )
    assert task("every 2 hours").confirmation(NOW).startswith("Task 7 runs every 2 hours, in")


def test_the_summary_line() -> None:
    assert task().summary() == (
        "#7 (0 9 * * *, next Sat 2026-10-24 09:00 WEST): Summarise the open issues"
    )
    long = task("in 20 minutes", "x" * 100)
    assert long.summary() == f"#7 (once, next Fri 2026-10-23 13:20 WEST): {'x' * 79}…"
    ended = long.model_copy(update={"status": "done", "next_run_at": None})
    assert ended.summary().startswith("#7 (once, done): ")
