"""Who can reach what, over every HTTP surface of a real `parley web` and a real
`parley mcp --http`, directly and through a reverse proxy on the same machine that sets
`X-Forwarded-For` as nginx does (tests/support/proxy.py).

Without PARLEY_API_TOKEN (default settings otherwise), only a client on this machine is
served: the same client through the proxy is refused, and so is one that spoofs
`X-Forwarded-For: 127.0.0.1` or reaches 127.0.0.1 under another name (DNS rebinding), while
`parley mcp --http` does not start at all. With the token, every client must send it, even one
on this machine, and a client that does is served through the proxy. The pages, their files
and the probes are public by design (the pages hold no data: their calls carry the token);
the platforms' webhooks answer to the platform's own secret (Telegram's secret token,
Slack's signature) instead of the API token, proxy or not. SECURITY.md cites this test."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
import pytest
from slack_sdk.signature import SignatureVerifier

from adapters.slack.service import EVENTS_PATH
from adapters.telegram.service import SECRET_HEADER
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM
from tests.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.tg import TOKEN as TG_TOKEN
from tests.fakes.tg import FakeTelegram
from tests.mcp_server.support import INITIALIZE, served_url, start, stop
from tests.support.proxy import proxy
from tests.support.redis_server import free_port
from tests.support.slack import slack_env
from tests.support.stack import ROOT, stack_env
from tests.support.telegram import WEBHOOK_PATH, WEBHOOK_SECRET, telegram_env
from tests.support.waiting import until
from tests.support.web_process import web_process
from worker.mcp_http import PATH as MCP_PATH

API_TOKEN = "reach-test-api-token-" + "q" * 24
SECRETS = (API_TOKEN, TG_TOKEN, WEBHOOK_SECRET, BOT_TOKEN, SIGNING_SECRET, ANTHROPIC_KEY)
Kind = Literal["api", "public", "telegram", "slack", "mcp"]
Deployment = Literal["open", "token"]
UPDATES = itertools.count(1000)


@dataclass(frozen=True)
class Surface:
    """One route of a family, and the status it answers a caller it serves."""

    method: str
    path: str  # `{session}`: a session made for the test
    kind: Kind
    served: int
    body: object = None
    stream: bool = False  # an event stream, which never ends: served when it begins


SURFACES = [
    Surface("GET", "/", "public", 200),
    Surface("GET", "/admin", "public", 200),
    Surface("GET", "/admin/people", "public", 200),
    Surface("GET", "/admin/lab", "public", 200),
    Surface("GET", "/admin/tasks", "public", 200),
    Surface("GET", "/static/chat.js", "public", 200),
    Surface("GET", "/healthz", "public", 200),
    Surface("GET", "/readyz", "public", 200),
    Surface("GET", "/metrics", "api", 200),
    Surface("GET", "/api/tools", "api", 200),
    Surface("GET", "/api/skills", "api", 200),
    Surface("GET", "/api/models", "api", 200),
    Surface("POST", "/api/sessions", "api", 201, {}),
    Surface("GET", "/api/sessions", "api", 200),
    Surface("GET", "/api/sessions/{session}", "api", 404),  # its record: none before a turn
    Surface("PATCH", "/api/sessions/{session}", "api", 200, {"mode": "react"}),
    Surface("GET", "/api/stats", "api", 200),
    Surface("POST", "/api/sessions/{session}/messages", "api", 422, {"text": ""}),
    Surface("GET", "/api/sessions/{session}/events", "api", 200, stream=True),
    Surface("POST", "/api/sessions/{session}/stop", "api", 202),
    Surface("POST", "/api/sessions/{session}/compact", "api", 202),
    Surface("GET", "/api/sessions/{session}/confirmations", "api", 200),
    Surface("POST", "/api/confirmations/unknown", "api", 404, {"decision": "approve"}),
    Surface("GET", "/api/files/" + "0" * 64, "api", 404),
    Surface("GET", "/api/tasks", "api", 200),
    Surface("GET", "/api/people", "api", 200),
    Surface("GET", "/api/memory/scopes", "api", 200),
    Surface("PUT", "/api/people/tg:1/digests", "api", 200, {"on": True}),
    Surface("GET", "/api/chats/tg:-100123/instructions", "api", 200),
    Surface("GET", "/api/traces/" + "0" * 32, "api", 404),
    Surface("GET", "/api/metrics/runs", "api", 200),
    Surface("GET", "/api/evaluations", "api", 200),
    Surface("POST", "/api/agent/run", "api", 422, {}),
    Surface("POST", WEBHOOK_PATH, "telegram", 200),
    Surface("POST", EVENTS_PATH, "slack", 200),
    Surface("POST", "/mcp", "mcp", 200, INITIALIZE),
]


@dataclass(frozen=True)
class Approach:
    """How a client comes: through the proxy or not, with which API token, extra headers,
    and whether it holds what a platform's webhook asks for (Telegram's secret token, a
    Slack signature)."""

    name: str
    proxied: bool
    token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    platform_secret: bool = False


SPOOFED = {"X-Forwarded-For": "127.0.0.1"}
APPROACHES: dict[Deployment, list[Approach]] = {
    "open": [
        Approach("on this machine", proxied=False, platform_secret=True),
        Approach("on this machine, no platform secret", proxied=False),
        Approach("through the proxy", proxied=True, platform_secret=True),
        Approach("through the proxy, spoofing X-Forwarded-For", proxied=True, headers=SPOOFED),
        Approach("on this machine, claiming a proxy", proxied=False, headers=SPOOFED),
        Approach("under a rebound name", proxied=False, headers={"Host": "rebound.example"}),
    ],
    "token": [
        Approach("on this machine, no token", proxied=False),
        Approach("through the proxy, a wrong token", proxied=True, token="wrong-" + API_TOKEN),
        Approach("through the proxy, spoofing, no token", proxied=True, headers=SPOOFED),
        Approach("through the proxy, the token", True, API_TOKEN, platform_secret=True),
        Approach("on this machine, the token", False, API_TOKEN, platform_secret=True),
    ],
}


def expected(deployment: Deployment, approach: Approach, surface: Surface) -> str:
    """What the rule says: "served", "refused", or "not listening"."""
    if surface.kind == "public":
        return "served"
    if surface.kind in ("telegram", "slack"):
        return "served" if approach.platform_secret else "refused"
    if deployment == "open" and surface.kind == "mcp":
        return "not listening"  # `parley mcp --http` does not start without a token
    if deployment == "token":
        return "served" if approach.token == API_TOKEN else "refused"
    local = not approach.proxied and not approach.headers
    return "served" if local else "refused"


@dataclass
class Servers:
    web: str
    mcp: str | None
    proxied_web: str
    proxied_mcp: str | None
    session: str


def platform_request(surface: Surface, right: bool) -> tuple[bytes, dict[str, str]]:
    """A Telegram update with the webhook's secret token, or a signed Slack URL check; with
    a wrong secret unless `right`."""
    if surface.kind == "telegram":
        secret = WEBHOOK_SECRET if right else "wrong-" + WEBHOOK_SECRET
        return json.dumps({"update_id": next(UPDATES)}).encode(), {SECRET_HEADER: secret}
    body = json.dumps({"type": "url_verification", "challenge": "reach", "token": "t"})
    stamp = str(int(time.time()))
    verifier = SignatureVerifier(SIGNING_SECRET if right else "wrong-" + SIGNING_SECRET)
    signature = verifier.generate_signature(timestamp=stamp, body=body) or ""
    signed = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}
    return body.encode(), signed


async def reach(
    http: httpx.AsyncClient, servers: Servers, approach: Approach, surface: Surface
) -> str:
    """What became of the request: "served", "refused", "not listening", or what else."""
    if surface.kind == "mcp":
        base = servers.proxied_mcp if approach.proxied else servers.mcp
        if base is None:
            return "not listening"
        url = base
    else:
        url = (servers.proxied_web if approach.proxied else servers.web) + surface.path.format(
            session=servers.session
        )
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    headers |= approach.headers
    if approach.token is not None:
        headers["Authorization"] = f"Bearer {approach.token}"
    content = None if surface.body is None else json.dumps(surface.body).encode()
    if surface.kind in ("telegram", "slack"):
        content, signed = platform_request(surface, approach.platform_secret)
        headers |= signed
    async with http.stream(surface.method, url, content=content, headers=headers) as answer:
        status = answer.status_code
        if surface.stream and status == surface.served:
            first = await anext(answer.aiter_text(), "")
            return "served" if first.startswith(": following") else f"unexpected {first!r}"
        text = (await answer.aread()).decode(errors="replace")
    return judged(surface, status, text)


def judged(surface: Surface, status: int, text: str) -> str:
    """What an answer comes to: "served" for the surface's own status, "refused" for a
    one-line JSON 401 or 403 that shows no secret; anything else is described."""
    if status == surface.served:
        return "served"
    leaked = [secret for secret in SECRETS if secret in text]
    if status in (401, 403) and not leaked:
        said = json.loads(text)["error"]
        if said and "\n" not in said:
            return "refused"
    return f"unexpected {status}: {text[:300]}"


async def new_session(base: str, token: str | None) -> str:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(timeout=60) as http:
        made = await http.post(f"{base}/api/sessions", headers=headers)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def ready(base: str) -> None:
    """Once `/readyz` says Redis, the database, Telegram and Slack are ready."""
    async with httpx.AsyncClient(timeout=30) as http:

        async def answered() -> bool:
            return (await http.get(f"{base}/readyz")).status_code == 200

        await until(answered, "parley web ready with Telegram and Slack", within=90)


@contextlib.asynccontextmanager
async def mcp_server(tmp_path: Path, token: str | None) -> AsyncIterator[str | None]:
    """`parley mcp --http`'s URL with `token`; without one, None once it has refused to
    start, saying which variable to set."""
    env = {"PARLEY_API_TOKEN": token} if token else {}
    proc = await start(tmp_path, "--http", "--port", "0", **env)
    if token is None:
        _, said = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 2 and b"PARLEY_API_TOKEN" in said, said
        yield None
        return
    try:
        yield await served_url(proc)
    finally:
        await stop(proc)


@pytest.mark.parametrize("deployment", ["open", "token"])
async def test_every_http_surface_serves_exactly_whom_the_rule_says(
    deployment: Deployment,
    redis_url: str,
    database_url: str,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    fake_slack: FakeSlack,
    tmp_path: Path,
) -> None:
    token = API_TOKEN if deployment == "token" else None
    port = free_port()
    platforms = telegram_env(
        fake_telegram,
        TELEGRAM_WEBHOOK_URL=f"http://127.0.0.1:{port}{WEBHOOK_PATH}",
        TELEGRAM_WEBHOOK_SECRET=WEBHOOK_SECRET,
    ) | slack_env(fake_slack)
    env = stack_env(redis_url, fake_llm, database_url, **platforms, PARLEY_HTTP_PORT=str(port))
    env |= {"PARLEY_FILES_DIR": str(tmp_path / "files"), "PYTHONPATH": str(ROOT)}
    if token is not None:
        env["PARLEY_API_TOKEN"] = token
    async with (
        web_process(env, tmp_path, tmp_path / "web.log") as web,
        mcp_server(tmp_path, token) as mcp,
        proxy(web) as proxied_web,
        proxy((mcp or web).removesuffix(MCP_PATH)) as proxied_mcp,
    ):
        await ready(web)
        session = await new_session(web, token)
        through = proxied_mcp + MCP_PATH if mcp else None
        servers = Servers(web, mcp, proxied_web, through, session)
        async with httpx.AsyncClient(timeout=60) as http:
            found = {
                (approach.name, surface.method, surface.path): await reach(
                    http, servers, approach, surface
                )
                for approach in APPROACHES[deployment]
                for surface in SURFACES
            }
    wanted = {
        (approach.name, surface.method, surface.path): expected(deployment, approach, surface)
        for approach in APPROACHES[deployment]
        for surface in SURFACES
    }
    assert found == wanted
