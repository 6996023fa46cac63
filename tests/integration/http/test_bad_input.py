"""Bad input to the web process gets a clear JSON 4xx (or a 503 with a retry hint), never a
500, and leaves no traceback and no ERROR in the log: the HTTP API, the Telegram webhook,
Slack's `/slack/events`, and requests aiohttp's own parser refuses."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import httpx
import pytest
import yarl
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from redis.asyncio import Redis

from adapters.http.api import json_errors
from adapters.slack.service import EVENTS_PATH
from adapters.web.json_text import nesting
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import BOT_USER_ID, SIGNING_SECRET, FakeSlack, events
from tests.fakes.slack.delivery import signature
from tests.fakes.slack.model import Posted
from tests.support.redis_server import RedisServer, free_port
from tests.support.slack import SlackStack, slack_env
from tests.support.stack import Stack, serving, stack_env, web_settings
from tests.support.telegram import WEBHOOK_SECRET, TelegramStack

DEEP = "[" * 20_000
LONG_KEY = "k" * 201


@dataclass(frozen=True)
class Case:
    """One bad request: `{s}` in the path is a fresh session's id."""

    method: str
    path: str
    status: int
    error: str
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


def clean_log(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing at ERROR and no traceback anywhere in what the web process logged. A client an
    earlier test of this process left open, closed by the garbage collector on that test's
    closed event loop, is asyncio's own report about another loop, not this web process's."""
    records = [r for r in caplog.records if not _another_loops(r)]
    bad = [r for r in records if r.levelno >= logging.ERROR or r.exc_info]
    assert bad == [], caplog.text
    assert not any("Traceback" in r.getMessage() or r.exc_text for r in records), caplog.text


def _another_loops(record: logging.LogRecord) -> bool:
    failed = record.exc_info[1] if record.exc_info else None
    return (
        record.name == "asyncio"
        and record.getMessage().startswith("Task exception was never retrieved")
        and isinstance(failed, RuntimeError)
        and str(failed) == "Event loop is closed"
    )


async def ask(base_url: str, case: Case, session: str) -> tuple[int, str, str]:
    """(status, content type, body) of `case`; aiohttp's client, as httpx refuses long URLs."""
    async with (
        aiohttp.ClientSession(base_url) as client,
        client.request(
            case.method,
            yarl.URL(case.path.replace("{s}", session), encoded=True),
            data=case.body,
            headers={"Content-Type": "application/json", **case.headers},
        ) as response,
    ):
        return response.status, response.content_type, await response.text()


def expect(answer: tuple[int, str, str], case: Case) -> None:
    status, content_type, text = answer
    assert (status, content_type) == (case.status, "application/json"), text
    assert json.loads(text)["error"].startswith(case.error), text


MESSAGES = "/api/sessions/{s}/messages"
API_CASES = {
    "deep-json-message": Case("POST", MESSAGES, 400, "the body nests deeper", DEEP),
    "deep-json-decision": Case("POST", "/api/confirmations/c1", 400, "the body nests", DEEP),
    "unclosed-string": Case("POST", MESSAGES, 400, "the body is not valid JSON", '["' + DEEP),
    "whitespace-text": Case("POST", MESSAGES, 422, "invalid request", '{"text": " \\n\\t\\u3000"}'),
    "long-idempotency-key": Case(
        "POST",
        MESSAGES,
        400,
        "Idempotency-Key is longer",
        '{"text": "hi"}',
        {"Idempotency-Key": LONG_KEY},
    ),
    "limit-superscript": Case("GET", "/api/sessions?limit=%C2%B2", 400, "limit must be"),
    "limit-arabic-indic": Case("GET", "/api/sessions?limit=%D9%A3", 400, "limit must be"),
    "offset-superscript": Case("GET", "/api/sessions?offset=%C2%B9", 400, "offset must be"),
    "recent-superscript": Case("GET", "/api/sessions/{s}?recent=%C2%B2", 400, "recent must be"),
    "limit-too-many-digits": Case("GET", "/api/sessions?limit=" + "0" * 5000 + "5", 400, "limit"),
    "long-url": Case("GET", "/api/sessions?x=" + "a" * 100_000, 414, "the URL is longer"),
    "long-header": Case(
        "GET", "/api/sessions", 431, "a header is longer", None, {"X-Big": "b" * 20_000}
    ),
    "unknown-route": Case("GET", "/api/nothing-here", 404, "Not Found"),
}


@pytest.mark.parametrize("name", list(API_CASES))
async def test_http_api_answers_bad_input_with_a_json_4xx(
    stack: Stack, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    case = API_CASES[name]
    caplog.set_level(logging.INFO)
    async with stack.client() as client:
        session = await stack.session(client)
        expect(await ask(stack.base_url, case, session), case)
        assert (await client.get("/healthz")).status_code == 200  # the app still answers
    assert stack.fake.requests == []
    clean_log(caplog)


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": "s3cret-token"}], indirect=True)
@pytest.mark.parametrize(
    ("authorization", "status"),
    [
        ("s3cret-token", 401),
        ("Basic s3cret-token", 401),
        ("Bearer", 401),
        ("Bearer  s3cret-token", 401),
        ("Bearer s3cret-token", 201),
        ("bearer s3cret-token", 201),
    ],
)
async def test_the_token_needs_the_bearer_scheme(
    stack: Stack, caplog: pytest.LogCaptureFixture, authorization: str, status: int
) -> None:
    async with stack.client() as client:
        response = await client.post("/api/sessions", headers={"Authorization": authorization})
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].startswith("application/json")
    clean_log(caplog)


@pytest.mark.parametrize("tg_stack", [{"webhook": "1"}], indirect=True)
@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (DEEP, 400, "the body nests deeper"),
        ('{"update_id": 1, "message": ' + "[" * 100 + "]" * 100 + "}", 400, "the body nests"),
        ("[]", 400, "the body is not a Telegram update"),
        ("null", 400, "the body is not a Telegram update"),
        ("{broken", 400, "the body is not valid JSON"),
    ],
)
async def test_telegram_webhook_answers_bad_bodies_with_a_json_4xx(
    tg_stack: TelegramStack, caplog: pytest.LogCaptureFixture, body: str, status: int, error: str
) -> None:
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.webhook))
    async with httpx.AsyncClient(timeout=30) as client:
        response = await client.post(
            tg_stack.webhook_url,
            content=body,
            headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET},
        )
    assert response.status_code == status, response.text
    assert response.json()["error"].startswith(error)
    clean_log(caplog)


def slack_headers(
    raw: bytes, content_type: str, *, timestamp: str = "", secret: str = ""
) -> dict[str, str]:
    stamp = timestamp or str(int(time.time()))
    signed = signature(
        secret or SIGNING_SECRET, int(stamp) if stamp.isascii() and stamp.isdigit() else 0, raw
    )
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signed,
    }


JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
SLACK_CASES = {
    # (body, content type, timestamp, secret): (status, error)
    "timestamp-not-a-number": ("[]", JSON, "soon", "", 401, "the request is not signed"),
    "timestamp-arabic-indic": ("{}", JSON, "١٧٠٠٠٠٠٠٠٠", "", 401, "the request is not signed"),
    "forged-malformed": ("[]", JSON, "", "not-the-secret", 401, "the request is not signed"),
    "forged-deep": (DEEP, JSON, "", "not-the-secret", 401, "the request is not signed"),
    "signed-list": ("[]", JSON, "", "", 400, "a Slack request is a JSON object"),
    "signed-null": ("null", JSON, "", "", 400, "a Slack request is a JSON object"),
    "signed-broken-json": ("{broken", JSON, "", "", 400, "the body is not valid JSON"),
    "signed-deep": (DEEP, JSON, "", "", 400, "the body nests deeper"),
    "signed-payload-not-json": ("payload=hello", FORM, "", "", 400, "the payload is not valid"),
    "signed-payload-list": ("payload=%5B%5D", FORM, "", "", 400, "a Slack request is a JSON"),
    "signed-odd-team": (
        '{"type": "event_callback", "team": ["id"], "event": {"type": "message"}}',
        JSON,
        "",
        "",
        400,
        "the request is not one Parley understands",
    ),
}


@pytest.mark.parametrize("name", list(SLACK_CASES))
async def test_slack_events_answer_bad_requests_with_a_json_4xx(
    slack_stack: SlackStack, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    body, content_type, timestamp, secret, status, error = SLACK_CASES[name]
    raw = body.encode()
    headers = slack_headers(raw, content_type, timestamp=timestamp, secret=secret)
    async with slack_stack.client() as client:
        encoded = {k.encode(): v.encode() for k, v in headers.items()}  # "١٧" as UTF-8
        response = await client.post(EVENTS_PATH, content=raw, headers=encoded)
    assert response.status_code == status, response.text
    assert response.json()["error"].startswith(error), response.text
    assert slack_stack.fake.requests == []
    clean_log(caplog)


async def test_redis_down_answers_503_with_a_retry_hint(
    fake_llm: FakeLLM, database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    redis = RedisServer(tmp_path)
    redis.start()
    env = stack_env(redis.url, fake_llm, database_url)
    try:
        async with (
            serving(
                Stack(redis.url, fake_llm, tmp_path, env=env), web_settings(env), free_port()
            ) as stack,
            stack.client() as client,
        ):
            session = await stack.session(client)
            redis.stop()
            started = time.monotonic()
            answers = [
                await client.post("/api/sessions"),
                await client.post(f"/api/sessions/{session}/messages", json={"text": "hi"}),
                await client.post(f"/api/sessions/{session}/stop"),
            ]
            print(f"\n3 requests with Redis down answered in {time.monotonic() - started:.2f} s")
    finally:
        redis.stop()
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert answer.headers["Retry-After"].isdigit()
        assert answer.json()["error"].startswith("the message queue is unreachable")
    clean_log(caplog)


async def test_an_unexpected_error_is_a_json_500_without_internals(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(_: web.Request) -> web.Response:
        raise RuntimeError("password=hunter2 in a stack frame")

    app = web.Application(middlewares=[json_errors])
    app.router.add_get("/broken", broken)
    async with TestClient(TestServer(app)) as client:
        response = await client.get("/broken")
        body = await response.json()
    assert response.status == 500
    assert body == {"error": "internal error"}
    assert "hunter2" not in json.dumps(body)
    assert any(r.levelno == logging.ERROR for r in caplog.records)  # the operator still sees it


@pytest.mark.parametrize("blank", ["\t", "\u00a0\u3000", " \n\t "])
async def test_slack_whitespace_after_the_mention_is_answered_like_an_empty_one(
    slack_stack: SlackStack, fake_slack: FakeSlack, blank: str
) -> None:
    ann, general = fake_slack.user("U0ANN", "ann"), fake_slack.channel("C0GENERAL", "general")
    dm = fake_slack.dm(ann)
    await fake_slack.say(ann, general, f"<@{BOT_USER_ID}> {blank}")
    await fake_slack.say(ann, dm, blank)
    await fake_slack.wait_for(lambda: len(fake_slack.ephemerals) >= 2)
    assert all("Ask me something" in note["text"] for note in fake_slack.ephemerals)
    redis = Redis.from_url(slack_stack.redis_url)
    try:
        assert await redis.keys("parley:{*}:inbox") == []  # nothing for the model
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("raw", "depth"),
    [
        (b'[1, "[[[", {"a": {}}]', 3),
        (b'"\\\\"', 0),
        (b'["a\\"]', None),  # the string never closes
        (b"[" * 65_536, 65_536),
        (b'"' + b'\\"' * 32_000, None),  # each escaped quote could start a string again
        (b'"' * 65_535, None),
        (b'"",' * 21_000, 0),
    ],
)
def test_nesting_is_counted_in_one_pass(raw: bytes, depth: int | None) -> None:
    started = time.perf_counter()
    assert nesting(raw) == depth
    elapsed = time.perf_counter() - started
    print(f"\nnesting of {len(raw)} bytes ({raw[:8]!r}…) counted in {elapsed * 1000:.1f} ms")
    assert elapsed < 2  # generous: a scan that starts again at every quote takes minutes


async def test_a_slack_event_while_redis_is_down_is_a_503_that_slack_retries(
    fake_llm: FakeLLM,
    fake_slack: FakeSlack,
    database_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Nothing was queued, so Slack must deliver the event again: a 503 with a retry hint."""
    redis = RedisServer(tmp_path)
    redis.start()
    port = free_port()
    env = stack_env(redis.url, fake_llm, database_url, **slack_env(fake_slack))
    fake_slack.events_url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
    ann = fake_slack.user("U0ANN", "ann")
    dm = fake_slack.dm(ann)
    said = Posted(
        ts=fake_slack.clock.next(),
        channel=dm.id,
        user=ann.id,
        bot_id=None,
        thread_ts=None,
        text="hello",
    )
    try:
        async with serving(Stack(redis.url, fake_llm, tmp_path, env=env), web_settings(env), port):
            redis.stop()
            status, answer = await fake_slack.deliver(
                events.event_callback(events.message_event(said, dm)), retry=False
            )
    finally:
        redis.stop()
    assert status == 503, answer
    assert json.loads(answer) == {"error": "the message queue is unreachable; try again shortly"}
    clean_log(caplog)
