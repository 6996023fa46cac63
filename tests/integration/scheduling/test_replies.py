"""Scheduled tasks end to end: a person asks in Telegram or Slack, the model schedules, a
`parley scheduler` process fires the run, a worker answers it in the chat, topic or thread
the task was made in, and nowhere else; the run is recorded with the trigger "scheduled".

Everything is real but the platforms and the model: the fakes in tests/fakes, over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import zoneinfo
from collections.abc import Awaitable, Callable
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.slack import TEAM_ID
from tests.integration.slack.test_replies import MENTION
from tests.integration.telegram.test_replies import ANN
from tests.support.schedulers import Schedulers
from tests.support.slack import SlackStack
from tests.support.stack import Stack, idle
from tests.support.tasks import (
    RUNS,
    TASKS,
    Brain,
    database_of,
    is_run,
    results,
    rows,
)
from tests.support.telegram import TelegramStack
from tests.support.waiting import until

REMIND = ToolCallSpec(
    "schedule_task", {"prompt": "Remind them to call Ann", "when": "in 3 seconds"}
)
ASK = "remind me in 3 seconds to call Ann"
REMINDER = "Reminder: call Ann. #1"


async def leading(stack: Stack, tmp_path: Path, **env: str) -> Schedulers:
    """A scheduler process that leads (with `env` besides the stack's), and a worker: what a
    task needs to run."""
    schedulers = Schedulers(stack.redis_url, stack.env, tmp_path)
    await schedulers.start(env)
    await stack.start_worker()
    await schedulers.wait_for_leader()
    return schedulers


async def ran_once(stack: Stack, session: str) -> None:
    """The task is done after one run, which the model was asked once (with the task's
    prompt), and which is in the `runs` table once, with the trigger "scheduled"."""
    database = database_of(stack.env)

    async def recorded() -> bool:
        return bool(await rows(database, RUNS, session_key=session, trigger="scheduled"))

    await until(recorded, f"a scheduled run of {session} in the runs table")
    await idle(stack.redis_url)
    (run,) = await rows(database, RUNS, session_key=session, trigger="scheduled")
    assert run.status == "completed", run
    (task,) = await rows(database, TASKS)
    assert run.envelope_ids == [f"task:{task.id}:{task.last_run_at.timestamp():.0f}"]
    assert (task.status, task.runs, task.session_key) == ("done", 1, session)
    (request,) = [r for r in stack.fake.requests if is_run(r)]
    assert request.last_user_text().endswith("Remind them to call Ann")


@pytest.mark.parametrize("where", ["topic", "private", "group"])
async def test_a_reminder_is_answered_in_the_telegram_chat_and_topic_it_was_made_in(
    tg_stack: TelegramStack, tmp_path: Path, where: str
) -> None:
    tg_stack.fake.responder = Brain(calls={ASK: [REMIND]}, done="I will remind you.")
    schedulers = await leading(tg_stack, tmp_path)
    try:
        tg = tg_stack.tg
        forum = tg.supergroup("Forum", forum=True)
        other_topic = tg.topic(forum, "Other")
        topic = tg.topic(forum, "Errands")
        chat = {"topic": forum, "private": tg.private_chat(ANN), "group": tg.group("Team")}[where]
        thread = topic if where == "topic" else None
        tg.send(chat, ANN, f"@parley_test_bot {ASK}", thread_id=thread)

        def shown() -> list[str]:
            return [m.text for m in tg.messages(chat)]

        await tg.wait_for(lambda: any("I will remind you." in t for t in shown()))
        await tg.wait_for(lambda: REMINDER in shown())
        await ran_once(tg_stack, f"tg:{chat.id}" + (f":{thread}" if thread else ""))
        mine = tg.messages(chat)
        assert [m.text for m in mine][1:] == [REMINDER]
        assert {m.thread_id for m in mine} == {thread}, "a reply left the topic"
        elsewhere = [m for c in tg.chats.values() if c.id != chat.id for m in tg.messages(c)]
        assert elsewhere == [], "a reply went to another chat"
        assert tg.messages(forum, other_topic) == []
        assert [c for c in tg.calls if not c.ok] == []
    finally:
        await schedulers.stop()


@pytest.mark.parametrize("where", ["thread", "dm"])
async def test_a_reminder_is_answered_in_the_slack_thread_or_dm_it_was_made_in(
    slack_stack: SlackStack, tmp_path: Path, where: str
) -> None:
    slack_stack.fake.responder = Brain(calls={ASK: [REMIND]}, done="I will remind you.")
    schedulers = await leading(slack_stack, tmp_path)
    try:
        fake = slack_stack.fake_slack
        ann, general = fake.user("U0ANN", "ann"), fake.channel("C0GENERAL", "general")
        channel = general if where == "thread" else fake.dm(ann)
        asked = await fake.say(ann, channel, f"{MENTION} {ASK}")
        thread = asked.ts if where == "thread" else None

        def shown() -> list[str]:
            return [m.shown for m in fake.bot_messages(channel.id, thread)]

        await fake.wait_for(lambda: any("I will remind you." in t for t in shown()))
        await fake.wait_for(lambda: REMINDER in shown())
        session = f"slack:{TEAM_ID}:{channel.id}" + (f":{thread}" if thread else "")
        await ran_once(slack_stack, session)
        assert shown()[1:] == [REMINDER]
        posted = {
            (c.params.get("channel"), c.params.get("thread_ts") or None)
            for c in fake.calls
            if c.method in ("chat.postMessage", "chat.startStream")
        }
        assert posted == {(channel.id, thread)}, "a reply went somewhere else"
    finally:
        await schedulers.stop()


def weekdays_at_nine(zone: str, count: int = 3) -> list[str]:
    """The next `count` weekday 09:00 in `zone`, as the confirmation shows them."""
    tz = zoneinfo.ZoneInfo(zone)
    now, day, found = datetime.now(tz), datetime.now(tz).date(), list[str]()
    while len(found) < count:
        at = datetime.combine(day, time(9), tzinfo=tz)
        if at.weekday() < 5 and at > now:
            found.append(at.strftime("%a %Y-%m-%d %H:%M %Z"))
        day += timedelta(days=1)
    return found


async def test_the_confirmation_names_the_zone_and_the_next_three_runs_in_it(
    tg_stack: TelegramStack,
) -> None:
    """In PARLEY_TIMEZONE (UTC by default) until the person sets theirs, then in theirs."""
    digest = ToolCallSpec("schedule_task", {"prompt": "Summarise my day", "when": "0 9 * * 1-5"})
    lisbon = ToolCallSpec("set_timezone", {"timezone": "Europe/Lisbon"})
    brain = Brain(calls={"weekday": [digest], "Lisbon": [lisbon]})
    tg_stack.fake.responder = brain
    await tg_stack.start_worker()
    tg = tg_stack.tg
    chat = tg.private_chat(ANN)

    def answers(count: int) -> Callable[[], bool]:
        return lambda: len(tg.messages(chat)) == count

    for n, text in enumerate(["every weekday at 9", "I'm in Lisbon", "every weekday at 9 again"]):
        tg.send(chat, ANN, text)
        await tg.wait_for(answers(n + 1))
        await idle(tg_stack.redis_url)
    first, second = results(tg_stack.fake.requests, "schedule_task")
    assert "in the time zone UTC" in first
    assert "Next runs: " + ", ".join(weekdays_at_nine("UTC")) in first
    (zone_set,) = results(tg_stack.fake.requests, "set_timezone")
    assert zone_set.startswith("Time zone set to Europe/Lisbon")
    assert "in the time zone Europe/Lisbon" in second
    assert "Next runs: " + ", ".join(weekdays_at_nine("Europe/Lisbon")) in second
    tasks = await rows(database_of(tg_stack.env), TASKS)
    assert [t.timezone for t in tasks] == ["UTC", "Europe/Lisbon"]


async def test_a_zone_set_in_the_same_turn_is_the_zone_the_task_is_read_in(
    tg_stack: TelegramStack,
) -> None:
    """ "I'm in Tokyo; every weekday at 9 …": the model sets the zone, then schedules."""
    await tg_stack.start_worker()
    digest = ToolCallSpec("schedule_task", {"prompt": "Summarise my day", "when": "0 9 * * 1-5"})
    tokyo = ToolCallSpec("set_timezone", {"timezone": "Asia/Tokyo"})
    tg_stack.fake.enqueue(Reply(tool_calls=[tokyo]), Reply(tool_calls=[digest]), Reply(text="Set."))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "I'm in Tokyo; every weekday at 9 summarise my day")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.messages(chat)))
    await idle(tg_stack.redis_url)
    (confirmation,) = results(tg_stack.fake.requests, "schedule_task")
    assert "in the time zone Asia/Tokyo" in confirmation, confirmation
    assert "Next runs: " + ", ".join(weekdays_at_nine("Asia/Tokyo")) in confirmation


def configured(session: str) -> dict[str, str]:
    """PARLEY_TASKS with one task posting into `session` every 2 seconds, which
    PARLEY_TASK_MIN_INTERVAL must allow, for an operator's tasks as for anyone's."""
    task = {"name": "digest", "when": "every 2 seconds", "session": session}
    return {
        "PARLEY_TASKS": json.dumps([{**task, "prompt": "Post the digest"}]),
        "PARLEY_TASK_MIN_INTERVAL": "1",
    }


async def configured_runs(stack: Stack, session: str, count: int) -> list[Any]:
    """The configured task's runs in the `runs` table, once there are `count`."""
    database = database_of(stack.env)

    async def recorded() -> list[Any]:
        return await rows(database, RUNS, session_key=session, trigger="scheduled")

    await until(recorded, f"scheduled runs of {session}")
    await until(lambda: _at_least(recorded, count), f"{count} runs of {session}")
    (task,) = await rows(database, TASKS, name="digest")
    assert (task.creator, task.status, task.session_key) == ("config", "active", session)
    return await recorded()


async def _at_least(found: Callable[[], Awaitable[list[Any]]], count: int) -> bool:
    return len(await found()) >= count


async def test_a_configured_task_posts_at_the_top_of_a_slack_channel(
    slack_stack: SlackStack, tmp_path: Path
) -> None:
    fake = slack_stack.fake_slack
    general = fake.channel("C0GENERAL", "general")
    session = f"slack:{TEAM_ID}:{general.id}"
    slack_stack.fake.responder = Brain(run_reply="Today's digest.")
    schedulers = await leading(slack_stack, tmp_path, **configured(session))
    try:

        def shown() -> list[str]:
            return [m.shown for m in fake.bot_messages(general.id)]

        await fake.wait_for(lambda: len(shown()) >= 2)
        await configured_runs(slack_stack, session, 2)
        await idle(slack_stack.redis_url)
        assert shown()[:2] == ["Today's digest. #1", "Today's digest. #2"]
        posted = {
            (c.params.get("channel"), c.params.get("thread_ts") or None)
            for c in fake.calls
            if c.method in ("chat.postMessage", "chat.startStream")
        }
        assert posted == {(general.id, None)}
    finally:
        await schedulers.stop()


async def test_a_configured_task_posts_into_a_telegram_group(
    tg_stack: TelegramStack, tmp_path: Path
) -> None:
    tg = tg_stack.tg
    group = tg.group("Digest")
    session = f"tg:{group.id}"
    tg_stack.fake.responder = Brain(run_reply="Today's digest.")
    schedulers = await leading(tg_stack, tmp_path, **configured(session))
    try:
        await tg.wait_for(lambda: len(tg.messages(group)) >= 2)
        await configured_runs(tg_stack, session, 2)
        await idle(tg_stack.redis_url)
        shown = [m.text for m in tg.messages(group)]
        assert shown[:2] == ["Today's digest. #1", "Today's digest. #2"]
        assert {m.chat_id for c in tg.chats.values() for m in tg.messages(c)} == {group.id}
        assert [c for c in tg.calls if not c.ok] == []
    finally:
        await schedulers.stop()


async def test_a_configured_task_for_a_session_no_platform_makes_stops_the_scheduler(
    stack: Stack, tmp_path: Path
) -> None:
    bad = json.dumps(
        [
            {
                "name": "digest",
                "when": "every 2 hours",
                "session": "slack:#general",
                "prompt": "Post the digest",
            }
        ]
    )
    schedulers = Schedulers(stack.redis_url, stack.env, tmp_path)
    proc = await schedulers.start({"PARLEY_TASKS": bad})
    async with asyncio.timeout(60):
        code = await proc.wait()
    lines = schedulers.log(proc).strip().splitlines()
    assert code == 2, lines
    assert len(lines) == 1 and "PARLEY_TASKS" in lines[0], lines
    assert "slack:#general" in lines[0] and "slack:TEAM:CHANNEL" in lines[0]
