"""The fake Slack refuses what Slack refuses, driven by the real slack_sdk client, and delivers
events signed and retried like Slack."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import aiohttp
import pytest
from aiohttp import web
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient as BaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import (
    APP_TOKEN,
    BOT_ID,
    BOT_TOKEN,
    BOT_USER_ID,
    SIGNING_SECRET,
    TEAM_ID,
    FakeSlack,
    Posted,
)
from tests.fakes.slack.model import ApiError
from tests.support.redis_server import free_port

MENTION = f"<@{BOT_USER_ID}>"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(stream_ttl=0.3, retry_delays=(0.05, 0.05, 0.05), ack_timeout=0.3) as f:
        yield f


@pytest.fixture
def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=fake.base_url)


async def refused(call: Any) -> str:
    """The error of a Web API call that must fail."""
    with pytest.raises(SlackApiError) as failure:
        await call
    return str(failure.value.response["error"])


@dataclass
class App:
    """A tiny Slack app: verifies signatures like Bolt, answers as told, records what came."""

    answers: list[tuple[int, float]] = field(default_factory=list)  # (status, delay) in turn
    bodies: list[dict[str, Any]] = field(default_factory=list)  # JSON answers, in turn
    seen: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    refused: int = 0

    async def receive(self, request: web.Request) -> web.Response:
        raw = await request.read()
        verifier = SignatureVerifier(SIGNING_SECRET)
        if not verifier.is_valid_request(raw, dict(request.headers)):
            self.refused += 1
            return web.Response(status=401)
        if request.content_type == "application/x-www-form-urlencoded":
            form = {name: values[0] for name, values in parse_qs(raw.decode()).items()}
            body = json.loads(form["payload"]) if "payload" in form else form
        else:
            body = json.loads(raw)
        self.seen.append((dict(request.headers), body))
        status, delay = self.answers.pop(0) if self.answers else (200, 0.0)
        await asyncio.sleep(delay)
        if body.get("type") == "url_verification":
            return web.json_response({"challenge": body["challenge"]})
        if self.bodies:
            return web.json_response(self.bodies.pop(0), status=status)
        return web.Response(status=status)

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [b["event"] for _, b in self.seen if b.get("event", {}).get("type") == kind]


@pytest.fixture
async def app(fake: FakeSlack) -> AsyncIterator[App]:
    receiver = App()
    web_app = web.Application()
    web_app.router.add_post("/slack/events", receiver.receive)
    runner = web.AppRunner(web_app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    fake.events_url = f"http://127.0.0.1:{port}/slack/events"
    try:
        yield receiver
    finally:
        await runner.cleanup()


# --- Web API -----------------------------------------------------------------------------------


async def test_tokens_and_unknown_methods(fake: FakeSlack, client: AsyncWebClient) -> None:
    me = await client.auth_test()
    assert (me["team_id"], me["user_id"], me["bot_id"]) == (TEAM_ID, BOT_USER_ID, BOT_ID)
    assert await refused(AsyncWebClient(token="xoxb-wrong", base_url=fake.base_url).auth_test())
    assert await refused(AsyncWebClient(base_url=fake.base_url).auth_test()) == "not_authed"
    assert await refused(client.api_call("launch.rockets")) == "unknown_method"
    app_client = AsyncWebClient(token=APP_TOKEN, base_url=fake.base_url)
    assert await refused(app_client.auth_test()) == "not_allowed_token_type"
    assert await refused(client.apps_connections_open(app_token=BOT_TOKEN)) == (
        "not_allowed_token_type"
    )
    assert [c.error for c in fake.calls[-2:]] == ["not_allowed_token_type"] * 2


async def test_post_update_delete(fake: FakeSlack, client: AsyncWebClient) -> None:
    general = fake.channel("C0GENERAL", "general")
    top = await client.chat_postMessage(channel=general.id, text="top")
    reply = await client.chat_postMessage(channel=general.id, thread_ts=top["ts"], text="r")
    assert reply["message"]["thread_ts"] == top["ts"]
    assert [m.text for m in fake.bot_messages(general.id)] == ["top"]
    assert [m.text for m in fake.messages(general.id, top["ts"])] == ["r"]
    await client.chat_update(channel=general.id, ts=reply["ts"], markdown_text="**new**")
    (shown,) = fake.bot_messages(general.id, top["ts"])
    assert shown.shown == "**new**" and shown.edits == 1
    await client.chat_delete(channel=general.id, ts=reply["ts"])
    assert shown.deleted and fake.messages(general.id, top["ts"]) == []
    assert await refused(client.chat_delete(channel=general.id, ts=reply["ts"])) == (
        "message_not_found"
    )
    assert fake.count("chat.postMessage") == 2 and fake.calls[-1].status == 200


async def test_message_rules(fake: FakeSlack, client: AsyncWebClient) -> None:
    general = fake.channel("C0GENERAL", "general")
    post = client.chat_postMessage
    assert await refused(post(channel="C0NOPE", text="x")) == "channel_not_found"
    assert await refused(post(channel=general.id, text="x", thread_ts="1.2")) == (
        "thread_not_found"
    )
    no_text = client.api_call("chat.postMessage", json={"channel": general.id})
    assert await refused(no_text) == "no_text"
    assert await refused(post(channel=general.id, text="a", markdown_text="b")) == (
        "markdown_text_conflict"
    )
    assert await refused(post(channel=general.id, text="x" * 40_001)) == "msg_too_long"
    assert await refused(post(channel=general.id, markdown_text="x" * 12_001)) == "msg_too_long"
    await post(channel=general.id, markdown_text="x" * 12_000)
    top = await post(channel=general.id, text="top")
    reply = await post(channel=general.id, text="r", thread_ts=top["ts"])
    assert await refused(post(channel=general.id, text="x", thread_ts=reply["ts"])) == (
        "thread_not_found"  # a reply is no thread of its own
    )
    theirs = Posted(fake.clock.next(), general.id, user="U0ANN", bot_id=None, thread_ts=None)
    fake.store(theirs)  # as if a person had written it
    assert await refused(client.chat_update(channel=general.id, ts=theirs.ts, text="y")) == (
        "cant_update_message"
    )
    assert await refused(client.chat_update(channel=general.id, ts="9.9", text="y")) == (
        "message_not_found"
    )


async def test_invalid_blocks(fake: FakeSlack, client: AsyncWebClient) -> None:
    general = fake.channel("C0GENERAL", "general")
    fake.limits.channel_posts = (100, 10.0)  # refused calls count, as at Slack

    def section(text: str, **extra: Any) -> dict[str, Any]:
        return {"type": "section", "text": {"type": "mrkdwn", "text": text}, **extra}

    def button(text: str, **extra: Any) -> dict[str, Any]:
        return {"type": "button", "text": {"type": "plain_text", "text": text}, **extra}

    cases: list[list[dict[str, Any]]] = [
        [section("x")] * 51,
        [section("x" * 3001)],
        [{"type": "header", "text": {"type": "plain_text", "text": "x" * 151}}],
        [{"type": "actions", "elements": [button("x" * 76, action_id="a")]}],
        [{"type": "actions", "elements": [button("ok", action_id="a", style="blue")]}],
        [{"type": "actions", "elements": [button("ok", action_id="a", value="v" * 2001)]}],
        [{"type": "actions", "elements": [button("ok", action_id=f"a{i}") for i in range(26)]}],
        [section("a", block_id="same"), section("b", block_id="same")],
        [{"type": "carousel"}],
        [{"type": "markdown", "text": "x" * 6001}, {"type": "markdown", "text": "y" * 6000}],
    ]
    for blocks in cases:
        with pytest.raises(SlackApiError) as failure:
            await client.chat_postMessage(channel=general.id, text="t", blocks=blocks)
        assert failure.value.response["error"] == "invalid_blocks"
        assert failure.value.response["errors"], blocks
    good = [
        {"type": "header", "text": {"type": "plain_text", "text": "Approve?"}},
        section("Run `launch`?"),
        {"type": "actions", "elements": [button("Yes", action_id="yes", style="primary")]},
    ]
    posted = await client.chat_postMessage(channel=general.id, text="t", blocks=good)
    assert all(block["block_id"] for block in posted["message"]["blocks"])


async def test_streaming(fake: FakeSlack, client: AsyncWebClient) -> None:
    ann = fake.user("U0ANN", "ann")
    general = fake.channel("C0GENERAL", "general")
    top = (await client.chat_postMessage(channel=general.id, text="question"))["ts"]
    start = client.chat_startStream
    assert await refused(start(channel=general.id, thread_ts=top)) == "missing_recipient_user_id"
    assert await refused(start(channel=general.id, thread_ts=top, recipient_user_id=ann.id)) == (
        "missing_recipient_team_id"
    )
    assert await refused(client.api_call("chat.startStream", json={"channel": general.id})) == (
        "invalid_arguments"
    )
    stream = await client.chat_stream(
        channel=general.id,
        thread_ts=top,
        recipient_user_id=ann.id,
        recipient_team_id=TEAM_ID,
        buffer_size=5,
    )
    await stream.append(markdown_text="Hello, ")
    assert stream.ts is not None
    (message,) = fake.bot_messages(general.id, top)
    assert (message.streaming, message.shown) == ("streaming", "Hello, ")
    assert await refused(client.chat_update(channel=general.id, ts=stream.ts, text="x")) == (
        "message_is_streaming"
    )
    await stream.append(markdown_text="world")
    await stream.stop(markdown_text="!")
    assert (message.streaming, message.shown) == ("stopped", "Hello, world!")
    assert [fake.count(m) for m in ("chat.startStream", "chat.appendStream")] == [4, 1]
    append = client.chat_appendStream(channel=general.id, ts=stream.ts, markdown_text="more")
    assert await refused(append) == "message_not_in_streaming_state"
    await client.chat_update(channel=general.id, ts=stream.ts, markdown_text="edited")
    assert message.shown == "edited"

    dm = fake.dm(ann)
    root = (await client.chat_postMessage(channel=dm.id, text="q"))["ts"]
    ts = (await start(channel=dm.id, thread_ts=root, markdown_text="x" * 11_000))["ts"]
    assert await refused(
        client.chat_appendStream(channel=dm.id, ts=ts, markdown_text="y" * 1_001)
    ) == ("msg_too_long")
    await client.chat_appendStream(channel=dm.id, ts=ts, markdown_text="y" * 1_000)
    assert await refused(client.chat_appendStream(channel=dm.id, ts="1.1", markdown_text="z")) == (
        "message_not_found"
    )
    fake.streaming_enabled = False
    assert await refused(start(channel=dm.id, thread_ts=root)) == "feature_not_enabled"


async def test_task_updates_are_checked_and_kept_by_id(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    """A task is created by its first update and changed by the next ones with its id; an
    update without an id or a title, with a status Slack does not know, or with details or
    output over 256 characters is refused, as is a display mode other than two."""
    dm = fake.dm(fake.user("U0ANN", "ann"))
    root = (await client.chat_postMessage(channel=dm.id, text="q"))["ts"]
    task = {"type": "task_update", "id": "helper-a", "title": "Look it up", "status": "in_progress"}
    assert await refused(
        client.chat_startStream(channel=dm.id, thread_ts=root, task_display_mode="list")
    ) == ("invalid_arguments")
    ts = (
        await client.chat_startStream(
            channel=dm.id, thread_ts=root, task_display_mode="plan", chunks=[task]
        )
    )["ts"]
    wrong = [
        {**task, "status": "done"},
        {**task, "output": "x" * 257},
        {**task, "details": "x" * 257},
        {k: v for k, v in task.items() if k != "title"},
        {**task, "id": ""},
        {"type": "task_list", "id": "a"},
    ]
    for chunk in wrong:
        append = client.chat_appendStream(channel=dm.id, ts=ts, chunks=[chunk])
        assert await refused(append) == "invalid_arguments", chunk
    done = {**task, "status": "complete", "output": "x" * 256}
    await client.chat_appendStream(channel=dm.id, ts=ts, chunks=[done])
    (message,) = fake.bot_messages(dm.id, root)
    assert message.tasks == {"helper-a": {k: v for k, v in done.items() if k != "type"}}
    assert [t["status"] for t in message.task_history] == ["in_progress", "complete"]
    assert message.shown == ""  # tasks are no text


async def test_a_quiet_stream_expires_keeping_its_text(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    dm = fake.dm(fake.user("U0ANN", "ann"))
    root = (await client.chat_postMessage(channel=dm.id, text="q"))["ts"]
    ts = (await client.chat_startStream(channel=dm.id, thread_ts=root, markdown_text="a"))["ts"]
    await asyncio.sleep(0.2)
    await client.chat_appendStream(channel=dm.id, ts=ts, markdown_text="b")  # keeps it alive
    await asyncio.sleep(0.2)
    await client.chat_appendStream(channel=dm.id, ts=ts, markdown_text="c")
    await asyncio.sleep(0.35)
    (message,) = fake.bot_messages(dm.id, root)
    assert (message.streaming, message.shown) == ("expired", "abc")
    assert await refused(client.chat_stopStream(channel=dm.id, ts=ts, markdown_text="d")) == (
        "message_not_in_streaming_state"
    )
    await client.chat_update(channel=dm.id, ts=ts, text="abcd")
    assert message.shown == "abcd"


async def test_rate_limits_answer_429_and_count_early_calls(
    fake: FakeSlack, client: AsyncWebClient
) -> None:
    general = fake.channel("C0GENERAL", "general")
    ts = (await client.chat_postMessage(channel=general.id, text="0"))["ts"]
    fake.tiers["chat.update"] = 2
    await client.chat_update(channel=general.id, ts=ts, text="1")
    await client.chat_update(channel=general.id, ts=ts, text="2")
    with pytest.raises(SlackApiError) as limited:
        await client.chat_update(channel=general.id, ts=ts, text="3")
    assert limited.value.response.status_code == 429
    assert limited.value.response["error"] == "ratelimited"
    assert 1 <= int(limited.value.response.headers["Retry-After"]) <= 60
    assert (fake.rate_limited, fake.violations) == (1, 0)
    assert await refused(client.chat_update(channel=general.id, ts=ts, text="4")) == "ratelimited"
    assert (fake.rate_limited, fake.violations) == (2, 1)

    fake.limits.channel_posts = (2, 1.0)
    other = fake.channel("C0OTHER", "other")
    await client.chat_postMessage(channel=general.id, text="a")
    with pytest.raises(SlackApiError) as flood:
        await client.chat_postMessage(channel=general.id, text="b")
    assert flood.value.response.headers["Retry-After"] == "1"
    await client.chat_postMessage(channel=other.id, text="elsewhere is fine")
    await asyncio.sleep(1.05)
    await client.chat_postMessage(channel=general.id, text="after waiting")
    assert fake.violations == 1


async def test_fail_next(fake: FakeSlack, client: AsyncWebClient) -> None:
    general = fake.channel("C0GENERAL", "general")
    fake.fail_next("chat.postMessage", count=2)
    fake.fail_next("auth.test", status=429, retry_after=2)
    for _ in range(2):
        assert await refused(client.chat_postMessage(channel=general.id, text="x")) == (
            "internal_error"
        )
    await client.chat_postMessage(channel=general.id, text="x")
    with pytest.raises(SlackApiError) as limited:
        await client.auth_test()
    assert limited.value.response.headers["Retry-After"] == "2"
    assert await refused(client.auth_test()) == "ratelimited"
    assert (fake.rate_limited, fake.violations) == (2, 1)


async def test_ephemerals_statuses_and_prompts(fake: FakeSlack, client: AsyncWebClient) -> None:
    ann = fake.user("U0ANN", "ann")
    dm = fake.dm(ann)
    assert dm.id == "D0ANN" and dm.is_im and dm.user == ann
    root = (await client.chat_postMessage(channel=dm.id, text="q"))["ts"]
    await client.chat_postEphemeral(channel=dm.id, user=ann.id, text="psst", thread_ts=root)
    assert fake.ephemerals == [
        {"channel": dm.id, "user": ann.id, "text": "psst", "thread_ts": root, "blocks": None}
    ]
    assert await refused(client.chat_postEphemeral(channel=dm.id, user="U0NOBODY", text="x")) == (
        "user_not_found"
    )
    await client.assistant_threads_setStatus(channel_id=dm.id, thread_ts=root, status="thinking")
    assert fake.statuses[-1]["status"] == "thinking"
    set_status = client.assistant_threads_setStatus(channel_id=dm.id, thread_ts="1.1", status="")
    assert await refused(set_status) == "thread_not_found"
    prompts = [{"title": f"t{i}", "message": f"m{i}"} for i in range(5)]
    suggest = client.assistant_threads_setSuggestedPrompts
    assert await refused(suggest(channel_id=dm.id, thread_ts=root, prompts=prompts)) == (
        "invalid_arguments"
    )
    await suggest(channel_id=dm.id, thread_ts=root, prompts=prompts[:4], title="Try")
    assert fake.suggested[-1]["thread_ts"] == root and len(fake.suggested[-1]["prompts"]) == 4
    await client.assistant_threads_setTitle(channel_id=dm.id, thread_ts=root, title="Chat")
    assert fake.titles[-1] == {"channel_id": dm.id, "thread_ts": root, "title": "Chat"}
    for refused_call in (
        suggest(channel_id=dm.id, prompts=prompts[:1]),  # thread_ts is required
        suggest(channel_id=dm.id, thread_ts=root, prompts=[{"title": "t"}]),
        client.assistant_threads_setTitle(channel_id=dm.id, thread_ts=root, title=""),
        client.api_call(
            "assistant.threads.setTitle", json={"channel_id": dm.id, "title": "No thread"}
        ),
    ):
        assert await refused(refused_call) == "invalid_arguments"


# --- events and interactivity ------------------------------------------------------------------


async def test_say_delivers_signed_events_like_slack(
    fake: FakeSlack, app: App, client: AsyncWebClient
) -> None:
    ann = fake.user("U0ANN", "ann")
    general = fake.channel("C0GENERAL", "general")
    asked = await fake.say(ann, general, f"{MENTION} hello")
    (message,), (mention,) = app.events("message"), app.events("app_mention")
    assert message["channel_type"] == "channel" and mention["ts"] == message["ts"] == asked.ts
    assert message["user"] == mention["user"] == ann.id and "thread_ts" not in message
    event_ids = {body["event_id"] for _, body in app.seen}
    assert len(event_ids) == 2 and all(d.status == 200 for d in fake.deliveries)
    assert app.seen[0][1]["authorizations"][0]["user_id"] == BOT_USER_ID

    await fake.say(ann, general, "in thread", thread_ts=asked.ts)
    assert app.events("message")[-1]["thread_ts"] == asked.ts
    dm = fake.dm(ann)
    await fake.say(ann, dm, f"{MENTION} in a DM")
    assert app.events("message")[-1]["channel_type"] == "im" and len(app.events("app_mention")) == 1

    await client.chat_postMessage(channel=general.id, text="mine", thread_ts=asked.ts)
    await fake.wait_for(lambda: len(app.events("message")) == 4)
    own = app.events("message")[-1]
    assert own["bot_id"] == BOT_ID and own["user"] == BOT_USER_ID and "subtype" not in own
    await fake.bot_says(general, "beep", thread_ts=asked.ts)
    assert app.events("message")[-1]["subtype"] == "bot_message"
    assert [m.text for m in fake.messages(general.id, asked.ts)] == ["in thread", "mine", "beep"]


async def test_forged_and_stale_signatures_are_refused(fake: FakeSlack, app: App) -> None:
    ann = fake.user("U0ANN", "ann")
    dm = fake.dm(ann)
    body = {"type": "event_callback", "event": {"type": "message", "channel": dm.id}}
    status, _ = await fake.deliver(body, secret="wrong", retry=False)
    assert status == 401
    status, _ = await fake.deliver(body, timestamp=1_600_000_000, retry=False)
    assert (status, app.refused) == (401, 2)
    status, answer = await fake.verify_url()
    assert status == 200 and json.loads(answer)["challenge"] == app.seen[-1][1]["challenge"]


async def test_retries_after_an_error_or_a_slow_answer(fake: FakeSlack, app: App) -> None:
    ann = fake.user("U0ANN", "ann")
    dm = fake.dm(ann)
    app.answers = [(500, 0.0), (200, 0.6), (200, 0.0)]
    await fake.say(ann, dm, "hello")
    assert [(d.status, d.retry_num) for d in fake.deliveries] == [(500, 0), (0, 1), (200, 2)]
    reasons = [headers.get("X-Slack-Retry-Reason") for headers, _ in app.seen]
    assert reasons == [None, "http_error", "http_timeout"]
    assert len({body["event_id"] for _, body in app.seen}) == 1
    app.answers = [(500, 0.0)] * 4
    status, _ = await fake.deliver(app.seen[-1][1])
    assert status == 500 and [d.retry_num for d in fake.deliveries[-4:]] == [0, 1, 2, 3]
    await fake.redeliver_last()
    assert app.seen[-1][0]["X-Slack-Retry-Num"] == "1"


async def test_press_sends_a_block_actions_payload(
    fake: FakeSlack, app: App, client: AsyncWebClient
) -> None:
    ann = fake.user("U0ANN", "ann")
    general = fake.channel("C0GENERAL", "general")
    asked = await fake.say(ann, general, f"{MENTION} launch")
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "Launch?"}},
        {
            "type": "actions",
            "block_id": "approval",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Approve"},
                    "action_id": "parley_approve",
                    "value": "call-1",
                    "style": "primary",
                }
            ],
        },
    ]
    await client.chat_postMessage(channel=general.id, text="?", blocks=blocks, thread_ts=asked.ts)
    (prompt,) = fake.bot_messages(general.id, asked.ts)
    with pytest.raises(AssertionError):
        await fake.press(ann, prompt, "parley_nope")
    await fake.press(ann, prompt, "parley_approve")
    headers, payload = app.seen[-1]
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert payload["type"] == "block_actions" and payload["user"]["id"] == ann.id
    assert payload["container"] == {
        "type": "message",
        "message_ts": prompt.ts,
        "channel_id": general.id,
        "is_ephemeral": False,
        "thread_ts": asked.ts,
    }
    assert payload["message"]["bot_id"] == BOT_ID and payload["message"]["blocks"] == prompt.blocks
    (action,) = payload["actions"]
    assert (action["action_id"], action["block_id"], action["value"]) == (
        "parley_approve",
        "approval",
        "call-1",
    )
    await fake.press(ann, prompt, "parley_gone", value="x", check=False)
    assert app.seen[-1][1]["actions"][0]["value"] == "x"


async def test_a_commands_answer_with_buttons_is_an_ephemeral_message_its_user_presses(
    fake: FakeSlack, app: App
) -> None:
    ann, bob = fake.user("U0ANN", "ann"), fake.user("U0BOB", "bob")
    general = fake.channel("C0GENERAL", "general")
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": "Forget"},
        "action_id": "forget",
        "value": "7",
    }
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "#7 tea"}}
    app.bodies.append({"text": "#7 tea", "blocks": [{**section, "accessory": button}]})
    status, _ = await fake.command(ann, general, "/memory")
    (shown,) = fake.ephemeral_messages
    assert status == 200 and shown.ephemeral_to == ann.id and shown.text == "#7 tea"
    assert fake.messages(general.id) == []  # seen by Ann only
    with pytest.raises(AssertionError, match="cannot see"):
        await fake.press(bob, shown, "forget")
    await fake.press(ann, shown, "forget")
    payload = app.seen[-1][1]
    assert payload["container"]["is_ephemeral"] is True and "message" not in payload
    assert payload["container"]["message_ts"] == shown.ts
    assert payload["actions"][0]["value"] == "7"
    async with aiohttp.ClientSession() as session:
        replaced = {"replace_original": True, "text": "#7 forgotten"}
        async with session.post(payload["response_url"], json=replaced) as response:
            assert response.status == 200
    assert shown.text == "#7 forgotten" and shown.blocks is None and shown.edits == 1
    app.bodies.append({"text": "bad", "blocks": [{"type": "nonsense"}]})
    with pytest.raises(ApiError):
        await fake.command(ann, general, "/memory")


async def test_assistant_thread_started(fake: FakeSlack, app: App) -> None:
    ann = fake.user("U0ANN", "ann")
    thread = await fake.start_assistant_thread(ann)
    (started,) = app.events("assistant_thread_started")
    assert started["assistant_thread"]["thread_ts"] == thread
    assert started["assistant_thread"]["channel_id"] == fake.dm(ann).id
    assert fake.messages(fake.dm(ann).id) == []
    await fake.say(ann, fake.dm(ann), "hi", thread_ts=thread)
    assert app.events("message")[-1]["thread_ts"] == thread
    assert "channel_id" not in started["assistant_thread"]["context"]  # nothing open beside it
    general = fake.channel("C0GENERAL", "general")
    await fake.view_beside(ann, thread, general)
    (changed,) = app.events("assistant_thread_context_changed")
    assert changed["assistant_thread"]["thread_ts"] == thread
    assert changed["assistant_thread"]["context"]["channel_id"] == general.id


async def test_socket_mode_envelopes_are_acked_or_sent_again(fake: FakeSlack) -> None:
    fake.mode = "socket"
    seen: list[SocketModeRequest] = []

    async def listener(socket: BaseSocketModeClient, request: SocketModeRequest) -> None:
        seen.append(request)
        if len(seen) > 1:  # the first envelope goes unanswered: Slack sends it again
            await socket.send_socket_mode_response(SocketModeResponse(request.envelope_id))

    web_client = AsyncWebClient(base_url=fake.base_url)
    socket = SocketModeClient(app_token=APP_TOKEN, web_client=web_client)
    socket.socket_mode_request_listeners.append(listener)
    await socket.connect()  # type: ignore[no-untyped-call]
    try:
        ann = fake.user("U0ANN", "ann")
        await fake.say(ann, fake.dm(ann), "hello")
        assert [(d.status, d.retry_num) for d in fake.deliveries] == [(0, 0), (200, 1)]
        assert [(r.type, r.retry_attempt) for r in seen] == [("events_api", 0), ("events_api", 1)]
        assert seen[1].payload["event"]["text"] == "hello" and seen[1].retry_reason == "timeout"
        await fake.deliver({"type": "block_actions", "actions": []})
        assert seen[-1].type == "interactive"
        await fake.redeliver_last()
        assert seen[-1].retry_attempt == 1
        assert fake.count("apps.connections.open") == 1
    finally:
        await socket.close()  # type: ignore[no-untyped-call]
