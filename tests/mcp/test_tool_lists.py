"""Who sees which tool servers: operators in `/api/tools`, people with `/tools` and `/help`
in Telegram and `/tools` in Slack. A real worker connects to the reference time server and
writes its state to Redis; the web process, which has no MCP connection, reads it there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.telegram.test_replies import ANN, replies
from tests.mcp.test_worker import TIME_SERVER, offered_within
from tests.support.slack import SlackStack
from tests.support.stack import Stack
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
BROKEN = {"command": "/nonexistent/mcp-server", "trust": "allow"}


def declare(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": TIME_SERVER, "broken": BROKEN}}))
    env["PARLEY_MCP_CONFIG"] = str(config)


async def test_the_api_lists_parleys_tools_and_each_servers_state(
    stack: Stack, tmp_path: Path
) -> None:
    async with stack.client() as client:
        before = (await client.get("/api/tools")).json()
    assert before["mcp_servers"] == {}
    assert {"web_fetch", "calculator", "read_file"} <= {t["name"] for t in before["tools"]}
    declare(stack.env, tmp_path)
    await stack.start_worker()
    await offered_within(stack.redis_url)
    async with stack.client() as client:
        response = await client.get("/api/tools")
    assert response.status_code == 200
    servers = response.json()["mcp_servers"]
    assert servers["time"]["state"] == "connected"
    assert "time__get_current_time" in servers["time"]["tools"]
    assert servers["broken"]["state"] in ("failed", "connecting")


async def test_telegram_help_and_tools_name_the_connected_server(
    tg_stack: TelegramStack, tmp_path: Path
) -> None:
    declare(tg_stack.env, tmp_path)
    await tg_stack.start_worker()
    await offered_within(tg_stack.redis_url)
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "/tools")
    (tools,) = await replies(tg_stack, chat, 1)
    assert "• time: connected, 2 tools" in tools and "web_fetch" in tools
    assert "• broken: " in tools and "• broken: connected" not in tools
    tg_stack.tg.send(chat, ANN, "/help")
    shown = await replies(tg_stack, chat, 2)
    assert "/tools - The tools I can use here (admins switch them)" in shown[1]
    assert "• time: connected" in shown[1]
    assert not tg_stack.fake.requests  # answered by the bot itself, at no model cost


async def test_slack_tools_names_the_connected_server(
    slack_stack: SlackStack, tmp_path: Path
) -> None:
    declare(slack_stack.env, tmp_path)
    fake, ann, general = await slack_stack.begin()
    await offered_within(slack_stack.redis_url)
    status, answer = await fake.command(ann, general, "/tools")
    assert status == 200 and "• time: connected, 2 tools" in answer, answer
    assert not slack_stack.fake.requests
