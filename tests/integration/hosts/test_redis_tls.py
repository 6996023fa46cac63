"""Parley over a Redis that speaks only TLS and requires a client certificate: a worker
process, the web process and its event streams answer a turn with the CA, certificate and key
of the settings; a CA that did not sign the server's certificate is refused in one line."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis

from bot.config.settings import Settings
from tests.fakes.llm import FakeLLM, Reply
from tests.support.redis_server import free_port
from tests.support.redis_tls import TlsRedisServer, make_certificates
from tests.support.stack import Stack, send, serving, stack_env, texts, web_settings
from worker.redis_pool import RedisUnavailable, open_pool


@pytest.fixture
async def tls_stack(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Stack]:
    server = TlsRedisServer(tmp_path / "redis", make_certificates(tmp_path / "certs"))
    server.directory.mkdir()
    server.start()
    env = stack_env(
        server.client_url,
        fake_llm,
        f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        PARLEY_WORKSPACE_DIR=str(tmp_path / "workspaces"),
        PARLEY_FILES_DIR=str(tmp_path / "files"),
        **server.tls_env(),  # REDIS_URL=rediss://localhost:PORT/0, and the files
    )
    built = Stack(server.client_url, fake_llm, tmp_path, env=env)
    try:
        async with serving(built, web_settings(env), free_port()) as running:
            yield running
    finally:
        server.stop()


@pytest.mark.e2e
async def test_a_turn_is_answered_over_tls(tls_stack: Stack) -> None:
    assert tls_stack.env["REDIS_URL"].startswith("rediss://")
    assert "?" not in tls_stack.env["REDIS_URL"]  # the files come from Parley's settings
    worker = await tls_stack.start_worker_process()
    tls_stack.fake.enqueue(Reply(text="Answered over TLS."))
    async with tls_stack.client() as client:
        session = await tls_stack.session(client)
        events = await send(client, session, "hello")
    assert texts(events) == "Answered over TLS."
    assert events[-1]["type"] == "completed"
    assert worker.returncode is None


async def test_a_ca_that_did_not_sign_the_server_is_refused_in_one_line(
    tls_stack: Stack,
) -> None:
    settings = web_settings(tls_stack.env)
    other = make_certificates(tls_stack.tmp / "other").ca
    wrong = settings.model_copy(update={"redis_tls_ca": other})
    with pytest.raises(RedisUnavailable) as caught:
        await open_pool(wrong, wait=0.5)
    said = str(caught.value)
    assert "\n" not in said
    assert said.startswith(f"no Redis at {settings.redis_url} ")
    assert "certificate verify failed" in said
    right = await open_pool(settings, wait=5)  # and the right one is taken
    try:
        assert await right.ping()
    finally:
        await right.aclose()


def test_the_tls_files_are_required_by_the_server(tls_stack: Stack) -> None:
    """The fixture's server refuses a client without a certificate: the turn above really
    used the one of the settings."""

    settings: Settings = web_settings(tls_stack.env)
    port = int(settings.redis_url.rsplit(":", 1)[1].split("/")[0])
    bare = redis.Redis(
        host="localhost", port=port, ssl=True, ssl_ca_certs=str(settings.redis_tls_ca)
    )
    with pytest.raises(redis.ConnectionError):
        bare.ping()
