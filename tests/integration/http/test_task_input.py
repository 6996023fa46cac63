"""Bad input to /api/tasks gets a clear JSON 4xx naming what to fix, stores no task and
announces nothing, and leaves no error in the log."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass

import aiohttp
import pytest
import yarl
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from bot.redis import keys
from tests.integration.http.test_bad_input import DEEP, clean_log
from tests.support.stack import Stack

GOOD = {"session": "tg:4242", "prompt": "Say good morning", "when": "0 9 * * 1-5"}


def body(**changes: object) -> str:
    """The good body with `changes` (a value of None leaves the field out)."""
    fields = {**GOOD, **changes}
    return json.dumps({k: v for k, v in fields.items() if v is not None})


@dataclass(frozen=True)
class Bad:
    """A bad request and the start of its `error`, or of its first problem for a 422."""

    raw: str
    status: int
    says: str
    method: str = "POST"
    path: str = "/api/tasks"


BAD = {
    "not-json": Bad("{broken", 400, "the body is not valid JSON"),
    "nested-too-deep": Bad(DEEP, 400, "the body nests deeper than 32 levels"),
    "nested-in-a-field": Bad(body(prompt=[[[["x"]]]]), 422, "prompt: Input should be a valid"),
    "a-list": Bad("[]", 422, "body: Input should be a valid dictionary"),
    "too-large": Bad(body(prompt="x" * 70_000), 413, "the body is larger than"),
    "extra-field": Bad(body(name="digest"), 422, "name: Extra inputs are not permitted"),
    "no-when": Bad(body(when=None), 422, "when: Field required"),
    "no-session": Bad(body(session=None), 422, "session: Field required"),
    "prompt-oversized": Bad(body(prompt="x" * 4001), 422, "prompt: String should have at most"),
    "prompt-blank": Bad(body(prompt=" \n\u3000"), 422, "prompt: Value error, the prompt is only"),
    "prompt-a-number": Bad(body(prompt=5), 422, "prompt: Input should be a valid string"),
    "session-irc": Bad(body(session="irc:#parley"), 422, "session: Unknown session 'irc:#parley'"),
    "session-arabic-digits": Bad(body(session="tg:٣٣"), 422, "session: Unknown session"),
    "session-http-unknown": Bad(body(session="http:" + "0" * 32), 422, "session: unknown HTTP"),
    "session-http-upper": Bad(body(session="http:" + "A" * 32), 422, "session: Unknown session"),
    "when-unreadable": Bad(body(when="sometime soon"), 422, "when: Cannot read when="),
    "when-arabic-digits": Bad(body(when="in ٣ minutes"), 422, "when: Cannot read the duration"),
    "when-passed": Bad(body(when="2001-01-01T09:00"), 422, "when: 2001-01-01 09:00 UTC has"),
    "when-too-frequent": Bad(body(when="every 1 minute"), 422, "when: That runs every 1 minute"),
    "when-cron-too-frequent": Bad(body(when="* * * * *"), 422, "when: That runs every 1 minute"),
    "when-bad-cron": Bad(body(when="0 25 * * *"), 422, "when: Cannot read the cron expression"),
    "zone-unknown": Bad(body(timezone="Mars/Olympus"), 422, "timezone: unknown IANA time zone"),
    "zone-lowercase": Bad(body(timezone="europe/lisbon"), 422, "timezone: unknown IANA time zone"),
    "zone-a-path": Bad(body(timezone="../../etc/passwd"), 422, "timezone: unknown IANA time zone"),
    "zone-localtime": Bad(body(timezone="localtime"), 422, "timezone: unknown IANA time zone"),
    "zone-factory": Bad(body(timezone="Factory"), 422, "timezone: unknown IANA time zone"),
    "zone-empty": Bad(body(timezone=""), 422, "timezone: String should have at least 1"),
    "if-missed-other": Bad(body(if_missed="later"), 422, "if_missed: Input should be 'skip'"),
    "config-steps-true": Bad(body(config={"max_steps": True}), 422, "config.max_steps: Input"),
    "config-steps-text": Bad(body(config={"max_steps": "5"}), 422, "config.max_steps: Input"),
    "config-repairs-text": Bad(
        body(config={"repair_attempts": "2"}), 422, "config.repair_attempts: Input should be"
    ),
    "config-retry-true": Bad(
        body(config={"retry": {"attempts": True}}), 422, "config.retry.attempts: Input should"
    ),
    "config-lookaround": Bad(
        body(config={"output_schema": {"pattern": "(?<=a)b"}}), 422,
        "config.output_schema: Value error, not a valid JSON Schema: at pattern: the pattern",
    ),
    "list-status": Bad("", 400, "status must be active or all", "GET", "/api/tasks?status=done"),
    "list-limit": Bad("", 400, "limit must be a whole number", "GET", "/api/tasks?limit=%C2%B2"),
    "list-offset": Bad("", 400, "offset must be a whole number", "GET", "/api/tasks?offset=-1"),
    "list-session-empty": Bad("", 400, "session must be 1 to 300", "GET", "/api/tasks?session="),
    "read-arabic-id": Bad("", 404, "unknown task", "GET", "/api/tasks/%D9%A3"),
    "read-zero": Bad("", 404, "unknown task", "GET", "/api/tasks/0"),
    "read-huge": Bad("", 404, "unknown task", "GET", "/api/tasks/" + "9" * 40),
    "read-unknown": Bad("", 404, "unknown task", "GET", "/api/tasks/12345"),
    "delete-word": Bad("", 404, "unknown task", "DELETE", "/api/tasks/first"),
    "delete-superscript": Bad("", 404, "unknown task", "DELETE", "/api/tasks/%C2%B2"),
}  # fmt: skip


async def send(client: aiohttp.ClientSession, bad: Bad) -> tuple[int, str, str]:
    """(status, content type, body) of `bad`, its path sent as it is written."""
    async with client.request(
        bad.method,
        yarl.URL(bad.path, encoded=True),
        data=bad.raw.encode() or None,
        headers={"Content-Type": "application/json"},
    ) as response:
        return response.status, response.content_type, await response.text()


async def next_announcement(pubsub: PubSub, within: float = 20) -> str:
    async with asyncio.timeout(within):
        async for message in pubsub.listen():
            if message["type"] == "message":
                return str(message["data"].decode())
    raise AssertionError("the subscription ended")


@pytest.mark.parametrize("name", list(BAD))
async def test_bad_task_input_gets_a_clear_4xx_and_makes_nothing(
    platforms: Stack, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    bad = BAD[name]
    caplog.set_level(logging.INFO)
    redis = Redis.from_url(platforms.redis_url)
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.TASKS_CHANNEL)
    try:
        async with aiohttp.ClientSession(platforms.base_url) as client:
            status, content_type, text = await send(client, bad)
            listed = await (await client.get("/api/tasks?status=all")).json()
            async with client.post("/api/tasks", data=body()) as good:
                assert good.status == 201, await good.text()
                made = await good.json()
        first = await next_announcement(pubsub)
    finally:
        await pubsub.aclose()
        await redis.aclose()
    assert (status, content_type) == (bad.status, "application/json"), text
    answer = json.loads(text)
    said = answer["problems"][0] if status == 422 else answer["error"]
    assert said.startswith(bad.says), text
    if status == 422:
        assert answer["error"] == "invalid request"
    assert listed["total"] == 0
    assert first == str(made["id"])  # the first announcement is the good task's
    clean_log(caplog)


async def test_every_problem_is_named_at_once(platforms: Stack) -> None:
    wrong = body(session="irc:x", when="whenever", timezone="Nowhere/Land", if_missed="never")
    async with platforms.client() as client:
        shape = await client.post("/api/tasks", content=wrong)
        meaning = await client.post("/api/tasks", content=body(session="irc:x", when="whenever"))
    assert shape.status_code == meaning.status_code == 422
    assert [p.split(":")[0] for p in shape.json()["problems"]] == ["if_missed"]
    assert [p.split(":")[0] for p in meaning.json()["problems"]] == ["session", "when"]
