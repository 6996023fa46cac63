"""No configured secret shows anywhere Parley speaks: with every secret set (the platforms'
tokens and signing secrets, the model and search keys, the passwords in REDIS_URL and
DATABASE_URL, an MCP server's header and URL tokens, a tool's own key, PARLEY_API_TOKEN),
a real `parley web` and `parley worker` run a turn whose tool reports its key and a turn
whose model calls fail; then /metrics, /readyz, the API's error answers, the turns' events,
the runs' traces and both processes' logs are read, and none holds a secret."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from bot.store import migrate
from tests.fakes.llm import ANTHROPIC_KEY, Fail, FakeLLM, Reply, ToolCallSpec
from tests.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.tg import TOKEN as TG_TOKEN
from tests.fakes.tg import FakeTelegram
from tests.support.postgres_server import PostgresServer
from tests.support.redis_server import RedisServer, free_port
from tests.support.slack import slack_env
from tests.support.stack import Stack, read_events, stack_env
from tests.support.telegram import WEBHOOK_PATH, telegram_env
from tests.support.web_process import web_process

REDIS_PASSWORD = "redis-pw-unseen-5b1f0c"
DATABASE_PASSWORD = "db-pw-unseen-9d2e7a"
OWN = {
    "PARLEY_API_TOKEN": "api-token-unseen-" + "k" * 24,
    "TELEGRAM_WEBHOOK_SECRET": "tg-webhook-unseen-77aa",
    "OPENAI_API_KEY": "sk-openai-unseen-3c9d",
    "PARLEY_SEARCH_API_KEY": "search-key-unseen-41ab",
    "PARLEY_TRANSCRIBE_API_KEY": "transcribe-key-unseen-8e0f",
    "PARLEY_TOOL_SHOW_KEY_API_KEY": "tool-key-unseen-6f2c",
}
MCP_HEADER_TOKEN = "mcp-header-unseen-0a7d"
MCP_QUERY_TOKEN = "mcp-query-unseen-c3e1"
SECRETS = (
    *OWN.values(), REDIS_PASSWORD, DATABASE_PASSWORD, MCP_HEADER_TOKEN, MCP_QUERY_TOKEN,
    ANTHROPIC_KEY, TG_TOKEN, BOT_TOKEN, SIGNING_SECRET,
)  # fmt: skip
RUN_ID = re.compile(r"\b[0-9a-f]{32}\b")


@pytest.fixture
def locked_redis(tmp_path: Path) -> Iterator[str]:
    """A Redis of its own that takes no command without REDIS_PASSWORD; its URL with it."""
    server = RedisServer(tmp_path / "redis-data")
    server.directory.mkdir()
    server.start()
    redis.Redis(port=server.port).config_set("requirepass", REDIS_PASSWORD)
    try:
        yield f"redis://:{REDIS_PASSWORD}@127.0.0.1:{server.port}/0"
    finally:
        server.stop()


def mcp_config(path: Path) -> Path:
    """An MCP server behind a header token and a URL token, at a port nothing listens on."""
    url = f"http://127.0.0.1:{free_port()}/mcp?key={MCP_QUERY_TOKEN}"
    server = {"url": url, "headers": {"Authorization": f"Bearer {MCP_HEADER_TOKEN}"}}
    path.write_text(json.dumps({"mcpServers": {"vault": server}}))
    return path


async def said_by_the_api(base: str, token: str) -> list[str]:
    """What the API answers: errors of every kind, /metrics, /readyz, two turns (a tool that
    reports its key; model calls that fail), and the traces of the runs."""
    bearer = {"Authorization": f"Bearer {token}"}
    texts: list[str] = []
    async with httpx.AsyncClient(base_url=base, timeout=120, headers=bearer) as http:
        session = (await http.post("/api/sessions")).json()["id"]
        for message in ("use the tool", "this one fails"):
            async with http.stream(
                "POST", f"/api/sessions/{session}/messages", json={"text": message}
            ) as answer:
                assert answer.status_code == 200, await answer.aread()
                texts.append(json.dumps(await read_events(answer)))
        answers = [
            await http.get("/api/sessions", headers={"Authorization": "Bearer wrong"}),
            await http.get("/api/sessions/unknown"),
            await http.post("/api/sessions", content=b"{not json"),
            await http.post("/api/tasks", json={"when": "never"}),
            await http.get("/readyz"),
            await http.get("/metrics"),
            await http.get("/api/tools"),
            await http.get(f"/api/sessions/{session}"),
            await httpx.AsyncClient().post(f"{base}{WEBHOOK_PATH}", json={"update_id": 1}),
        ]
        runs = await http.get("/api/metrics/runs")
        traces = [await http.get(f"/api/traces/{run}") for run in set(RUN_ID.findall(runs.text))]
    texts += [f"{a.status_code} {a.text}" for a in [*answers, runs, *traces]]
    assert [a.status_code for a in answers[:4]] == [401, 404, 400, 422]
    assert [a.status_code for a in answers[4:]] == [200, 200, 200, 200, 401]
    assert any("show_key" in t.text for t in traces if t.status_code == 200), runs.text
    assert "called the service with key [redacted]" in texts[0]  # the tool's result, shown
    assert '"type": "error"' in texts[1]  # the failed model calls, told to the client
    return texts


async def test_no_secret_shows_in_answers_metrics_traces_or_logs(
    locked_redis: str,
    postgres_server: PostgresServer,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    fake_slack: FakeSlack,
    tmp_path: Path,
) -> None:
    database = postgres_server.create_database().replace("parley@", f"parley:{DATABASE_PASSWORD}@")
    await migrate.upgrade(database, "head")
    port = free_port()
    env = stack_env(
        locked_redis,
        fake_llm,
        database,
        **telegram_env(
            fake_telegram, TELEGRAM_WEBHOOK_URL=f"http://127.0.0.1:{port}{WEBHOOK_PATH}"
        ),
        **slack_env(fake_slack),
        **OWN,
        PARLEY_MCP_CONFIG=str(mcp_config(tmp_path / "mcp.json")),
        PARLEY_HTTP_PORT=str(port),
        PARLEY_FILES_DIR=str(tmp_path / "files"),
        PARLEY_LOG_LEVEL="DEBUG",
    )
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("show_key", {})]),
        Reply(text="Done."),
        *[Fail(500, "api_error", "the upstream broke")] * 3,  # beyond the default retries
    )
    stack = Stack(locked_redis, fake_llm, tmp_path, env=env)
    web_log = tmp_path / "web.log"
    try:
        async with web_process(env, tmp_path, web_log) as base:
            await stack.start_worker_process()
            texts = await said_by_the_api(base, OWN["PARLEY_API_TOKEN"])
    finally:
        await stack.stop()
    logs = [web_log.read_text(), (tmp_path / "worker-0.log").read_text()]
    assert "MCP server vault" in logs[1], logs[1][-3000:]  # the server's failure was logged
    shown = "\n".join(texts + logs)
    leaked = [secret for secret in SECRETS if secret in shown]
    assert leaked == [], [line for line in shown.splitlines() if any(s in line for s in leaked)]
