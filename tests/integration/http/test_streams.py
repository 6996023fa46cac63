"""Event streams cost Redis a bounded number of connections, however many clients follow."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import socket
import struct
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from aiohttp import web
from redis.asyncio import Redis

from adapters.http.egress import HttpEgress
from bot.redis import keys
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import FakeLLM, Reply
from tests.support.parley import start_parley
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import Stack, read_events, stack_env, texts, web_settings
from tests.support.waiting import until
from worker.web import make_app

CLIENTS = 2000
POOL = 50  # PARLEY_REDIS_CONNECTIONS' default: the web process's bound for ordinary commands


async def connected(redis: Redis) -> int:
    """Clients Redis has open, not counting the one asking."""
    info = await redis.info("clients")
    return int(info["connected_clients"]) - 1


@pytest.fixture
async def web_process(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[tuple[str, RedisServer]]:
    """`parley web` as its own process, on a Redis of its own that takes at most 300 clients:
    the connections Redis counts are this process's."""
    server = RedisServer(tmp_path / "redis-data", "--maxclients", "300")
    server.directory.mkdir()
    server.start()
    port = free_port()
    env = stack_env(
        server.url,
        fake_llm,
        PARLEY_HTTP_PORT=str(port),
        PARLEY_MAX_STREAMS=str(CLIENTS),
        PARLEY_LOG_LEVEL="WARNING",
        PARLEY_API_RATE="0",  # the clients of a load are one client here: the streams are measured
    )
    log = (tmp_path / "web.log").open("wb")
    proc = await start_parley("web", env=env, cwd=tmp_path, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"

    async def healthy() -> bool:
        try:
            async with httpx.AsyncClient(base_url=base) as client:
                return (await client.get("/healthz")).status_code == 200
        except httpx.TransportError:
            return proc.returncode is not None

    try:
        await until(healthy, "`parley web` answering /healthz", within=120)
        assert proc.returncode is None, (tmp_path / "web.log").read_text()
        yield base, server
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)
        server.stop()


@pytest.mark.timeout(300)  # the pool's default idle timeout (60 s) is waited out
@pytest.mark.slow(60)
async def test_idle_streams_share_a_bounded_set_of_redis_connections(
    web_process: tuple[str, RedisServer],
) -> None:
    base, server = web_process
    redis = Redis.from_url(server.url, single_connection_client=True)
    sessions = [uuid.uuid4().hex for _ in range(CLIENTS)]
    async with redis.pipeline(transaction=False) as pipe:
        for session in sessions:
            pipe.set(keys.http_session(session), json.dumps({"owner": "http:local"}))
        await pipe.execute()
    baseline = await connected(redis)

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None, sock_connect=60)
    client = aiohttp.ClientSession(base, connector=connector, timeout=timeout)
    gate = asyncio.Semaphore(200)
    responses: list[aiohttp.ClientResponse] = []

    async def open_stream(session: str) -> None:
        async with gate:
            response = await client.get(f"/api/sessions/{session}/events")
            assert response.status == 200, await response.text()
            assert (await response.content.readline()).startswith(b": following")
            responses.append(response)

    try:
        started = time.monotonic()
        await asyncio.gather(*(open_stream(s) for s in sessions))
        opened = time.monotonic() - started
        with_clients = await connected(redis)

        # Redis still takes new clients (a worker could connect), and the web app is healthy.
        other = Redis.from_url(server.url)
        assert await other.ping()
        await other.aclose()
        async with client.get("/healthz") as health:
            assert health.status == 200
        async with client.get(f"/api/sessions/{sessions[0]}/events") as refused:
            assert refused.status == 503
            assert "too many open event streams" in (await refused.json())["error"]

        # Every stream is live: an event on each session reaches its client.
        egress = HttpEgress(redis)
        for session in sessions:
            envelope = Envelope(id="e", session=f"http:{session}", text="x", sender=Sender(id="u"))
            await egress.open([envelope]).send(ev.Iteration(number=1))
        started = time.monotonic()
        await asyncio.wait_for(asyncio.gather(*(next_event(r) for r in responses)), 60)
        fanned_out = time.monotonic() - started
    finally:
        for response in responses:
            response.close()
        await client.close()
    left = await until(
        lambda: below(redis, baseline), "the streams' connections closed", within=150
    )
    after = await connected(redis)
    await redis.aclose()
    print(
        f"\nRedis connections of `parley web`: {baseline} before, {with_clients} with {CLIENTS} "
        f"idle event streams, {after} after they left ({left:.1f} s later); {CLIENTS} streams "
        f"opened in {opened:.1f} s; one event on each of their sessions reached all of them "
        f"in {fanned_out:.2f} s"
    )
    assert with_clients <= baseline + POOL + 1  # the pool, and one reader for all streams


async def below(redis: Redis, count: int) -> bool:
    return await connected(redis) <= count


async def next_event(response: aiohttp.ClientResponse) -> str:
    while True:
        line = await response.content.readline()
        if line.startswith(b"data: "):
            return str(json.loads(line[6:])["type"])


@pytest.mark.parametrize("stack", [{"PARLEY_REDIS_CONNECTIONS": "10"}], indirect=True)
async def test_streamed_replies_share_the_reader(stack: Stack) -> None:
    """POST /messages streams through the same reader: 100 replies waiting for a worker hold
    no connection each (the pool of 10 and one reader), and all arrive once a worker comes."""
    stack.fake.responder = lambda request: Reply(text="Answer to " + request.last_user_text())
    redis = Redis.from_url(stack.redis_url, single_connection_client=True)
    count = 100
    async with stack.client() as client, contextlib.AsyncExitStack() as cleanup:
        cleanup.push_async_callback(redis.aclose)
        sessions = [await stack.session(client) for _ in range(count)]
        baseline = await connected(redis)
        opened = 0

        async def ask(session: str) -> list[dict[str, object]]:
            nonlocal opened
            async with client.stream(
                "POST", f"/api/sessions/{session}/messages", json={"text": session}
            ) as response:
                assert response.status_code == 200
                opened += 1
                return await read_events(response)

        replies = asyncio.gather(*(ask(s) for s in sessions))
        await until(lambda: opened == count, f"{count} replies streaming")
        with_streams = 0
        for _ in range(20):  # the most over a second, while every stream waits for its reply
            with_streams = max(with_streams, await connected(redis))
            await asyncio.sleep(0.05)
        await stack.start_worker()
        answers = await asyncio.wait_for(replies, 120)
    print(f"\nRedis connections: {baseline} before, {with_streams} with {count} replies streaming")
    assert all(texts(a).endswith(s) for a, s in zip(answers, sessions, strict=True))
    assert with_streams <= baseline + 10 + 1


@pytest.mark.parametrize("stack", [{"PARLEY_MAX_STREAMS": "2"}], indirect=True)
async def test_streams_beyond_the_cap_get_503_and_nothing_is_queued(stack: Stack) -> None:
    async with stack.client() as client:
        session = await stack.session(client)
        url = f"/api/sessions/{session}/events"
        async with client.stream("GET", url) as first, client.stream("GET", url) as second:
            assert first.status_code == second.status_code == 200
            refused = await client.get(url)
            assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
            assert refused.json() == {
                "error": "too many open event streams; try again later",
                "retry": True,
            }
            posted = await client.post(f"/api/sessions/{session}/messages", json={"text": "hi"})
            assert posted.status_code == 503
            decided = await client.post(
                "/api/confirmations/nope",
                json={"decision": "approve"},
                headers={"Accept": "text/event-stream"},
            )
            assert decided.status_code == 503
        redis = Redis.from_url(stack.redis_url)
        assert await redis.keys("parley:{*}:inbox") == []
        await redis.aclose()

        async def free_again() -> bool:  # the places of the streams that ended are given back
            async with client.stream("GET", url) as again:
                return again.status_code == 200

        await until(free_again, "the ended streams' places given back")


async def test_a_cut_stream_ends_with_an_error_to_resume_from(
    own_stack: tuple[Stack, RedisServer],
) -> None:
    """Redis restarts mid-reply: the client is told, resumes after the last event it got, and
    sees the reply finished (Redis kept the message: it persists)."""
    stack, server = own_stack
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="Cut short by a restart", chunk_size=4, gate=gate, gate_after=8),
        Reply(text="The whole answer."),
    )
    seen: list[tuple[str, dict[str, Any]]] = []
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "go"}
        ) as response:
            event_id = ""
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: "):
                    seen.append((event_id, json.loads(line[6:])))
                    if seen[-1][1]["type"] == "text_delta" and server.process is not None:
                        await asyncio.to_thread(server.stop)
        *before, (cut_id, cut) = seen
        assert cut["type"] == "error" and cut["error"] == "event stream interrupted"
        assert cut["retry"] is True and cut["last_event_id"] == before[-1][0] == cut_id
        assert any(event["type"] == "text_delta" for _, event in before)

        await asyncio.to_thread(server.start)
        gate.set()
        headers = {"Last-Event-ID": cut["last_event_id"]}
        async with client.stream(
            "GET", f"/api/sessions/{session}/events", headers=headers
        ) as again:
            resumed = await asyncio.wait_for(read_until_completed(again), 90)
    shown = texts([event for _, event in before] + resumed)
    print(
        f"\nbefore the cut: {[e['type'] for _, e in before]}; after: {[e['type'] for e in resumed]}"
    )
    # The turn either went on where it was or, if Redis's restart cost its worker the turn,
    # started over (after a `reset`): either way the client ends up with one whole answer.
    assert shown in ("Cut short by a restart", "The whole answer.")
    assert resumed[-1]["type"] == "completed"


async def read_until_completed(response: httpx.Response) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            events.append(json.loads(line[6:]))
            if events[-1]["type"] == "completed":
                break
    return events


async def test_streams_open_when_the_server_stops_are_told_to_resume(
    redis_url: str, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    env = stack_env(redis_url, fake_llm, f"sqlite+aiosqlite:///{tmp_path}/parley.db")
    runner = web.AppRunner(await make_app(web_settings(env)), access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            session = (await client.post("/api/sessions")).json()["id"]
            async with client.stream("GET", f"/api/sessions/{session}/events") as response:
                lines = response.aiter_lines()
                assert (await anext(lines)).startswith(": following")
                stopping = asyncio.create_task(runner.cleanup())
                rest = [line async for line in lines]
                await asyncio.wait_for(stopping, 30)
    finally:
        await runner.cleanup()
    (data,) = [json.loads(line[6:]) for line in rest if line.startswith("data: ")]
    assert data["type"] == "error" and data["retry"] is True
    assert data["reason"] == "the server is stopping" and data["last_event_id"] == "0-0"


async def test_a_late_follower_from_further_back_gets_every_event_once(stack: Stack) -> None:
    """A second client on a followed session resumes from an older event: it is caught up
    from the stream, then joins the shared read, with nothing missed or repeated."""
    redis = Redis.from_url(stack.redis_url)
    async with stack.client() as client, contextlib.AsyncExitStack() as cleanup:
        cleanup.push_async_callback(redis.aclose)
        session = await stack.session(client)
        envelope = Envelope(id="e", session=f"http:{session}", text="x", sender=Sender(id="u"))
        reply = HttpEgress(redis).open([envelope])
        url = f"/api/sessions/{session}/events"

        async def publish(first: int, last: int) -> None:
            for number in range(first, last + 1):
                await reply.send(ev.Iteration(number=number))

        await publish(1, 3)
        early = await cleanup.enter_async_context(client.stream("GET", url))
        early_events = early.aiter_lines()
        await anext(early_events)  # following, from event 3 on
        await publish(4, 5)
        assert await numbers(early_events, 2) == [4, 5]
        oldest = (await redis.xrange(keys.events(f"http:{session}"), count=1))[0][0]
        late = await cleanup.enter_async_context(
            client.stream("GET", url, headers={"Last-Event-ID": oldest.decode()})
        )
        late_events = late.aiter_lines()
        await anext(late_events)
        await publish(6, 6)
        assert await numbers(late_events, 5) == [2, 3, 4, 5, 6]
        assert await numbers(early_events, 1) == [6]


async def numbers(lines: AsyncIterator[str], count: int) -> list[int]:
    """The iteration numbers of the next `count` events (within 30 s)."""
    found: list[int] = []

    async def read() -> None:
        async for line in lines:
            if line.startswith("data: "):
                found.append(int(json.loads(line[6:])["number"]))
                if len(found) == count:
                    return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), 30)
    return found


async def post(base_url: str, session: str) -> asyncio.StreamWriter:
    """POST a message to `session` on a connection of its own, which is returned unread."""
    host, port = base_url.removeprefix("http://").split(":")
    body = json.dumps({"text": "left at once"}).encode()
    _, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"POST /api/sessions/{session}/messages HTTP/1.1\r\nHost: {host}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    return writer


async def blocked(redis: Redis) -> int:
    return int((await redis.info("clients"))["blocked_clients"])


async def test_a_client_gone_before_its_stream_began_has_its_message_answered(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """A client leaves while the server takes its message (Redis is paused for writes, so
    the leaving lands right there): the message is taken and answered all the same, and the
    stream it would have read is given up without an error in the log."""
    stack.fake.responder = lambda request: Reply(text="Answer to " + request.last_user_text())
    redis = Redis.from_url(stack.redis_url)
    async with stack.client() as client, contextlib.AsyncExitStack() as cleanup:
        cleanup.push_async_callback(redis.aclose)
        session = await stack.session(client)
        before = await blocked(redis)
        await redis.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
        try:
            writer = await post(stack.base_url, session)
            await until(lambda: blocked_beyond(redis, before), "the message being queued")
            writer.close()
        finally:
            await redis.execute_command("CLIENT", "UNPAUSE")
        await stack.start_worker()

        async def answered() -> bool:
            entries = await redis.xrange(keys.events(f"http:{session}"))
            return any(b'"completed"' in fields[b"event"] for _, fields in entries)

        await until(answered, "the message answered")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def blocked_beyond(redis: Redis, before: int) -> bool:
    return await blocked(redis) > before


async def test_a_client_that_resets_its_connection_is_no_error(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that posts a message and resets the connection at once may leave before the
    server read it all: nothing is taken then (no answer was promised either), and the server
    logs no error for it. A client leaving is not the server failing, and the log must not
    grow with tracebacks of what clients do."""
    stack.fake.responder = lambda request: Reply(text="Answer to " + request.last_user_text())
    async with stack.client() as client:
        left, stayed = await stack.session(client), await stack.session(client)
        writer = await post(stack.base_url, left)
        linger = struct.pack("ii", 1, 0)
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        writer.close()  # a reset: what the server had not read yet is gone
        await stack.start_worker()
        async with client.stream(
            "POST", f"/api/sessions/{stayed}/messages", json={"text": "stayed"}
        ) as response:  # by then the request that was left has long been handled
            assert texts(await read_events(response)).endswith("stayed")
    redis = Redis.from_url(stack.redis_url)
    try:
        inbox = await redis.llen(keys.session(f"http:{left}", "inbox"))
    finally:
        await redis.aclose()
    assert inbox == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
