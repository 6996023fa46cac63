"""MCP servers reached over HTTP: the SDK's streamable HTTP transport, and once the older
SSE one, served by a process of their own on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest

from tests.mcp.support import call, executor, http_toolbox, offered, running
from tests.support.waiting import until

pytestmark = pytest.mark.e2e


def payload(content: str) -> object:
    """The JSON inside an untrusted-data element."""
    return json.loads(content.split("\n", 1)[1].rsplit("\n", 1)[0])


async def test_streamable_http_tools_answer_and_follow_the_servers_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEB_TOKEN", "web-token-7")
    async with http_toolbox("http") as (url, _):
        web = {"url": url, "headers": {"X-Token": "${WEB_TOKEN}"}, "trust": "allow"}
        async with running({"web": web}) as servers:
            await until(offered(servers, "web__echo", "web__grow"), "the HTTP toolbox")
            assert not servers.tools()["web__echo"].sensitive
            runner = executor(servers)
            echoed = await call(runner, "web__echo", text="over HTTP")
            assert not echoed.is_error and "over HTTP" in echoed.content
            sent = payload((await call(runner, "web__headers")).content)
            assert isinstance(sent, dict) and sent["x-token"] == "web-token-7"
            picture = await call(runner, "web__picture")
            assert "a picture\n[image/png, 2 KB]" in picture.content
            assert "web__added" not in servers.tools()
            assert "grown" in (await call(runner, "web__grow")).content
            await until(offered(servers, "web__added"), "the tool added at run time")
            added = await call(runner, "web__added")
            assert "I was added" in added.content


async def test_a_slow_http_call_times_out_and_the_next_call_works() -> None:
    async with (
        http_toolbox("http") as (url, _),
        running({"web": {"url": url, "timeout": 1}}) as servers,
    ):
        await until(offered(servers, "web__wait"), "the HTTP toolbox")
        runner = executor(servers)
        started = time.monotonic()
        slow = await call(runner, "web__wait", seconds=60)
        assert slow.content == "web__wait timed out after 1 s and was stopped."
        assert time.monotonic() - started < 15
        quick = await call(runner, "web__wait", seconds=0.1)
        assert not quick.is_error and "waited 0.1 s" in quick.content


async def test_an_http_server_that_dies_mid_call_ends_the_call_and_its_tools(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.mcp.server")
    async with http_toolbox("http") as (url, process), running({"web": {"url": url}}) as servers:
        await until(offered(servers, "web__wait"), "the HTTP toolbox")
        runner = executor(servers)
        began = tmp_path / "began"
        waiting = asyncio.create_task(call(runner, "web__wait", seconds=60, started=str(began)))
        await until(began.exists, "the call under way")
        process.kill()
        killed = time.monotonic()
        outcome = await waiting
        ended = time.monotonic() - killed
        print(f"\nthe call ended {ended:.2f} s after its HTTP server was killed")
        assert outcome.is_error and "the MCP server web stopped during the call" in outcome.content
        assert ended < 15, f"the call ended {ended:.1f} s after the server died"
        withdrawn = await until(lambda: not servers.tools(), "the tools withdrawn")
        assert withdrawn < 15, f"the tools were withdrawn {withdrawn:.1f} s later"
        assert servers.status()["web"].state == "failed"
    (warning,) = [r.getMessage() for r in caplog.records if "server web " in r.getMessage()]
    assert "is down" in warning and "127.0.0.1" in warning


async def test_an_sse_server_answers() -> None:
    async with (
        http_toolbox("sse") as (url, _),
        running({"old": {"url": url, "transport": "sse"}}) as servers,
    ):
        await until(offered(servers, "old__echo"), "the SSE toolbox")
        echoed = await call(executor(servers), "old__echo", text="over SSE")
        assert not echoed.is_error and "over SSE" in echoed.content


async def test_a_key_in_the_url_stays_out_of_the_log(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with (
        http_toolbox("http") as (url, _),
        running({"web": {"url": f"{url}?api_key=url-key-99"}}) as servers,
    ):
        await until(offered(servers, "web__echo"), "the HTTP toolbox")
        assert not (await call(executor(servers), "web__echo", text="hi")).is_error
    requests = [r.getMessage() for r in caplog.records if r.name == "httpx2"]
    assert requests and all("/mcp?…" in line for line in requests if "/mcp" in line)
    assert "url-key-99" not in caplog.text
