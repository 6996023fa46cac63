"""Scheduled tasks through the HTTP API, on the real web app, Redis and database: operators
list, read, make and cancel them; each is answered where the platform would answer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis import keys
from bot.tasks.book import NewTask
from bot.tasks.model import CONFIG_CREATOR, Target
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import parse_when
from tests.support.chat_tasks import task_book
from tests.support.stack import Stack, web_settings
from tests.support.waiting import WITHIN

TOKEN = "s3cret-token"
WEEKDAYS_AT_9 = "0 9 * * 1-5"


async def make(client: httpx.AsyncClient, session: str, **more: Any) -> dict[str, Any]:
    body = {"session": session, "prompt": "Say good morning", "when": "every 2 hours", **more}
    response = await client.post("/api/tasks", json=body)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    assert response.headers["Location"] == f"/api/tasks/{made['id']}"
    return made


@contextlib.asynccontextmanager
async def announcements(redis_url: str) -> AsyncIterator[asyncio.Queue[str]]:
    """What is announced on the tasks channel while the block runs."""
    redis = Redis.from_url(redis_url)
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.TASKS_CHANNEL)
    heard: asyncio.Queue[str] = asyncio.Queue()

    async def listen() -> None:
        async for message in pubsub.listen():
            if message["type"] == "message":
                heard.put_nowait(message["data"].decode())

    listening = asyncio.create_task(listen())
    try:
        yield heard
    finally:
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening
        await pubsub.aclose()
        await redis.aclose()


async def heard_id(heard: asyncio.Queue[str], task_id: int) -> None:
    async with asyncio.timeout(WITHIN):
        while (await heard.get()) != str(task_id):
            pass


@pytest.mark.parametrize(
    ("session", "platform", "chat_kind", "reply_to"),
    [
        ("tg:4242", "telegram", "private", {"chat_id": 4242, "thread_id": None,
         "chat_type": "private", "message_id": None}),
        ("tg:-1001234:7", "telegram", "topic", {"chat_id": -1001234, "thread_id": 7,
         "chat_type": "supergroup", "message_id": None}),
        ("slack:T1:C0GENERAL", "slack", "thread", {"team": "T1", "channel": "C0GENERAL",
         "thread_ts": None, "user": "", "is_im": False}),
        ("slack:T1:D0ANN", "slack", "private", {"team": "T1", "channel": "D0ANN",
         "thread_ts": None, "user": "", "is_im": True}),
        ("slack:T1:C0GENERAL:1700000000.000100", "slack", "thread", {"team": "T1",
         "channel": "C0GENERAL", "thread_ts": "1700000000.000100", "user": "", "is_im": False}),
    ],
)  # fmt: skip
async def test_a_task_answers_where_the_platform_would(
    platforms: Stack, session: str, platform: str, chat_kind: str, reply_to: dict[str, Any]
) -> None:
    async with platforms.client() as client, announcements(platforms.redis_url) as heard:
        made = await make(client, session)
        await heard_id(heard, made["id"])
        read = (await client.get(f"/api/tasks/{made['id']}")).json()
    assert (made["session"], made["platform"], made["chat_kind"]) == (session, platform, chat_kind)
    assert made["reply_to"] == reply_to
    assert made["creator"] == "http:local"  # the API's identity, as for its messages
    assert made["status"] == "active" and made["kind"] == "interval" and made["spec"] == "7200"
    assert read == {k: v for k, v in made.items() if k != "confirmation"} | {
        "next_runs": read["next_runs"]  # computed at each read
    }


async def test_a_task_for_an_http_session_needs_the_session(platforms: Stack) -> None:
    async with platforms.client() as client:
        session = await platforms.session(client)
        made = await make(client, f"http:{session}")
        bare = await make(client, session)  # the id as POST /api/sessions returned it
        unknown = await client.post(
            "/api/tasks",
            json={"session": f"http:{'0' * 32}", "prompt": "hi", "when": "in 1 hour"},
        )
    assert made["session"] == bare["session"] == f"http:{session}"
    assert (made["platform"], made["chat_kind"], made["reply_to"]) == ("http", "private", {})
    assert unknown.status_code == 422, unknown.text
    assert unknown.json()["problems"][0].startswith("session: unknown HTTP session")


async def test_the_answer_shows_the_zone_and_the_next_three_runs(platforms: Stack) -> None:
    async with platforms.client() as client:
        made = await make(client, "tg:4242", when=WEEKDAYS_AT_9, timezone="America/New_York")
        once = await make(client, "tg:4242", when="in 2 hours", if_missed="run_once")
    runs = [datetime.fromisoformat(run) for run in made["next_runs"]]
    assert len(runs) == 3 and runs == sorted(runs)
    assert all((run.hour, run.minute, run.weekday() < 5) == (9, 0, True) for run in runs)
    assert all(run.utcoffset() in (timedelta(hours=-5), timedelta(hours=-4)) for run in runs)
    assert made["timezone"] == "America/New_York"
    assert datetime.fromisoformat(made["next_run_at"]) == runs[0]
    assert "America/New_York" in made["confirmation"]
    assert made["confirmation"].startswith(f"Task {made['id']} runs cron {WEEKDAYS_AT_9}")
    in_two_hours = datetime.now(UTC) + timedelta(hours=2)
    assert once["kind"] == "once" and once["timezone"] == "UTC"  # PARLEY_TIMEZONE
    assert once["if_missed"] == "run_once" and len(once["next_runs"]) == 1
    assert abs(datetime.fromisoformat(once["next_runs"][0]) - in_two_hours) < timedelta(minutes=1)


async def test_tasks_are_listed_by_chat_and_status_and_paged(platforms: Stack) -> None:
    async with platforms.client() as client:
        group = await make(client, "tg:-1001234")
        topic = await make(client, "tg:-1001234:7")
        other = await make(client, "tg:-10012345")  # another chat whose id starts alike
        channel = await make(client, "slack:T1:C0GENERAL")
        assert (await client.delete(f"/api/tasks/{topic['id']}")).status_code == 200

        async def ids(query: str) -> list[int]:
            response = await client.get(f"/api/tasks{query}")
            assert response.status_code == 200, response.text
            return [item["id"] for item in response.json()["items"]]

        assert await ids("") == [group["id"], other["id"], channel["id"]]
        assert await ids("?status=all") == [group["id"], topic["id"], other["id"], channel["id"]]
        assert await ids("?session=tg:-1001234") == [group["id"]]
        assert await ids("?session=tg:-1001234&status=all") == [group["id"], topic["id"]]
        assert await ids("?session=tg:-1001234:7&status=all") == [topic["id"]]
        assert await ids("?session=slack:T1") == [channel["id"]]
        assert await ids("?session=slack:T2") == []
        paged = (await client.get("/api/tasks?status=all&offset=1&limit=2")).json()
    assert paged["total"] == 4 and (paged["offset"], paged["limit"]) == (1, 2)
    assert [item["id"] for item in paged["items"]] == [topic["id"], other["id"]]
    cancelled = paged["items"][0]
    assert (cancelled["status"], cancelled["ended_by"], cancelled["next_runs"]) == (
        "cancelled",
        "http:local",
        [],
    )


async def test_cancelling_a_task(platforms: Stack) -> None:
    async with platforms.client() as client, announcements(platforms.redis_url) as heard:
        made = await make(client, "slack:T1:C0GENERAL")
        await heard_id(heard, made["id"])
        cancelled = await client.delete(f"/api/tasks/{made['id']}")
        await heard_id(heard, made["id"])  # the scheduler hears of the end too
        again = await client.delete(f"/api/tasks/{made['id']}")
        unknown = await client.delete("/api/tasks/999999")
        listed = (await client.get("/api/tasks")).json()
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["ended_by"] == "http:local"
    assert again.status_code == 409, again.text
    assert again.json()["error"] == f"task {made['id']} had already ended (cancelled)"
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown task"
    assert listed["total"] == 0


async def test_a_person_s_task_may_be_cancelled_by_the_operator(platforms: Stack) -> None:
    async with task_book(platforms) as book:
        now = datetime.now(UTC)
        schedule = parse_when("in 1 hour", ZoneInfo("Europe/Lisbon"), now)
        target = Target(session="tg:4242", platform="telegram")
        ann = Sender(id="tg:4242", name="Ann")
        task = await book.add(
            NewTask(target, ann, "call Bob", "in 1 hour", schedule), max_active=20, now=now
        )
    async with platforms.client() as client:
        shown = (await client.get(f"/api/tasks/{task.id}")).json()
        cancelled = await client.delete(f"/api/tasks/{task.id}")
    assert (shown["creator"], shown["creator_name"], shown["timezone"]) == (
        "tg:4242",
        "Ann",
        "Europe/Lisbon",
    )
    assert cancelled.status_code == 200 and cancelled.json()["ended_by"] == "http:local"


async def test_a_configured_task_is_ended_in_the_configuration(platforms: Stack) -> None:
    now = datetime.now(UTC)
    configured = NewTask(
        Target(session="slack:T1:C0GENERAL", platform="slack"),
        Sender(id=CONFIG_CREATOR, name="configuration"),
        "Post the digest",
        WEEKDAYS_AT_9,
        parse_when(WEEKDAYS_AT_9, ZoneInfo("UTC"), now),
        name="digest",
    )
    async with task_book(platforms) as book:
        (task,) = await book.replace_config([configured], now)
    async with platforms.client() as client:
        refused = await client.delete(f"/api/tasks/{task.id}")
        still = (await client.get(f"/api/tasks/{task.id}")).json()
    assert refused.status_code == 403, refused.text
    assert "remove it from PARLEY_TASKS" in refused.json()["error"]
    assert still["status"] == "active" and still["name"] == "digest" and still["from_config"]


async def test_the_api_counts_as_one_person_for_the_limit(platforms: Stack) -> None:
    limit = web_settings(platforms.env).tasks_per_person
    assert limit == 20  # the default
    async with platforms.client() as client:
        made = [await make(client, f"tg:{n}") for n in range(1, limit + 1)]
        refused = await client.post(
            "/api/tasks", json={"session": "tg:99", "prompt": "one more", "when": "in 1 hour"}
        )
        await client.delete(f"/api/tasks/{made[0]['id']}")
        after_one_ended = await make(client, "tg:99")
        total = (await client.get("/api/tasks")).json()["total"]
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"].startswith("http:local already has 20 active tasks")
    assert "PARLEY_TASKS_PER_PERSON" in refused.json()["error"]
    assert after_one_ended["session"] == "tg:99" and total == limit


async def test_the_minimum_interval_applies_to_operators(platforms: Stack) -> None:
    assert web_settings(platforms.env).task_min_interval == 300  # the default
    async with platforms.client() as client:
        every_five = await make(client, "tg:4242", when="every 5 minutes")
        answers = [
            await client.post(
                "/api/tasks", json={"session": "tg:4242", "prompt": "ping", "when": when}
            )
            for when in ("every 4 minutes", "*/2 * * * *")
        ]
    assert every_five["spec"] == "300"
    for answer in answers:
        assert answer.status_code == 422, answer.text
        (problem,) = answer.json()["problems"]
        assert problem.startswith("when: That runs every ") and "5 minutes" in problem


@pytest.mark.parametrize("platforms", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_tasks_need_the_token_when_one_is_set(platforms: Stack) -> None:
    body = {"session": "tg:4242", "prompt": "hi", "when": "in 1 hour"}
    async with platforms.client() as client:
        refused = [
            await client.get("/api/tasks"),
            await client.post("/api/tasks", json=body),
            await client.get("/api/tasks/1"),
            await client.delete("/api/tasks/1"),
        ]
        assert (await client.get("/api/tasks?status=all")).status_code == 401
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        made = await client.post("/api/tasks", json=body)
        listed = (await client.get("/api/tasks")).json()
    for answer in refused:
        assert answer.status_code == 401, answer.text
        assert answer.json() == {"error": "a bearer token is required"}
    assert made.status_code == 201, made.text
    assert made.json()["creator"] == "http:token"
    assert [item["id"] for item in listed["items"]] == [made.json()["id"]]


async def test_a_task_for_a_platform_that_is_not_configured_is_refused(stack: Stack) -> None:
    """`stack` serves the API alone: no Telegram or Slack bot could answer such a task."""
    async with stack.client() as client:
        session = await stack.session(client)
        answers = {
            where: await client.post(
                "/api/tasks", json={"session": where, "prompt": "hi", "when": "in 1 hour"}
            )
            for where in ("tg:4242", "slack:T1:C0GENERAL")
        }
        made = await make(client, f"http:{session}")  # the API itself is always answered
        total = (await client.get("/api/tasks?status=all")).json()["total"]
    for where, answer in answers.items():
        assert answer.status_code == 422, answer.text
        platform = "telegram" if where.startswith("tg:") else "slack"
        (problem,) = answer.json()["problems"]
        assert problem.startswith(f"session: {platform} is not configured in this Parley")
    assert made["platform"] == "http" and total == 1


async def test_a_task_may_keep_a_run_config_checked_like_an_api_run(platforms: Stack) -> None:
    async with platforms.client() as client:
        schema = {"type": "object", "properties": {"done": {"type": "boolean"}}}
        config = {"mode": "plan_execute", "output_schema": schema, "tools": ["calculator"]}
        made = await make(client, "tg:4242", config=config)
        assert made["config"] == {**config, "repair_attempts": 2}
        assert (await client.get(f"/api/tasks/{made['id']}")).json()["config"] == made["config"]
        bad = {"session": "tg:4242", "prompt": "x", "when": "every 2 hours"}
        unknown = await client.post("/api/tasks", json={**bad, "config": {"tools": ["nope"]}})
        broken = await client.post(
            "/api/tasks", json={**bad, "config": {"output_schema": {"type": 7}}}
        )
    assert unknown.status_code == 422 and unknown.json()["problems"] == [
        "config.tools: no tool 'nope'"
    ]
    assert broken.status_code == 422
    assert "not a valid JSON Schema" in broken.json()["problems"][0]
