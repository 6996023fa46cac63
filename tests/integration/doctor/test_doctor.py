"""`parley doctor`, the real command against real servers: Redis (a server of its own, with
a password), SQLite or PostgreSQL, the fake Telegram, Slack and Anthropic, the test suite's
MCP toolbox over stdio, and this machine's sandbox. A healthy deployment passes every check
with default settings; then each check fails once, alone, naming its fix, and the command
exits 1. No configured secret ever appears in what it prints."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.store import migrate, revision
from bot.store.database import upgrade
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.fakes.tg import TOKEN as TG_TOKEN
from tests.fakes.tg import FakeTelegram
from tests.mcp.support import TOOLBOX
from tests.support.parley import PIPE, Process, start_parley
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import ROOT

REDIS_PASSWORD = "doctor-redis-password-0451"
MCP_PHRASE = "doctor-mcp-phrase-9137"  # named like no secret: only mcp.json says it is one
SECRETS = (TG_TOKEN, BOT_TOKEN, APP_TOKEN, ANTHROPIC_KEY, REDIS_PASSWORD, MCP_PHRASE)
NAMESPACES = ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup")


@dataclass
class Said:
    code: int
    out: str
    err: str

    @property
    def checks(self) -> dict[str, dict[str, Any]]:
        """The JSON checklist's findings by check."""
        return {row["check"]: row for row in json.loads(self.out)["checks"]}

    def failed(self) -> dict[str, dict[str, Any]]:
        return {name: row for name, row in self.checks.items() if row["status"] == "failed"}


@dataclass
class Deployment:
    env: dict[str, str]
    cwd: Path

    async def doctor(self, *args: str, prefix: tuple[str, ...] = ()) -> Said:
        """Run `parley doctor ARGS` (under `prefix`, a command that runs it) to its end."""
        proc: Process
        if prefix:  # a command that runs it: executed
            proc = await asyncio.create_subprocess_exec(
                *prefix, sys.executable, "-m", "worker", "doctor", *args, env=self.env,
                cwd=self.cwd, stdout=PIPE, stderr=PIPE,
            )  # fmt: skip
        else:
            proc = await start_parley(
                "doctor", *args, env=self.env, cwd=self.cwd, stdout=PIPE, stderr=PIPE
            )
        out, err = await asyncio.wait_for(proc.communicate(), 300)
        assert proc.returncode is not None
        said = Said(proc.returncode, out.decode(), err.decode())
        for secret in SECRETS:
            assert secret not in said.out + said.err, f"{secret!r} printed:\n{said.out}"
        return said


@contextlib.contextmanager
def own_redis(tmp_path: Path, *args: str, password: str | None = None) -> Iterator[str]:
    """A Redis of its own started with `args`; its URL, with `password` set in it."""
    directory = tmp_path / f"redis-{free_port()}"
    directory.mkdir()
    server = RedisServer(directory, *args)
    server.start()
    try:
        if password is None:
            yield server.url
        else:
            redis.Redis(port=server.port).config_set("requirepass", password)
            yield f"redis://:{password}@127.0.0.1:{server.port}/0"
    finally:
        server.stop()


def secret_file(tmp_path: Path, name: str, value: str) -> str:
    """A secret as Docker and Kubernetes mount one; its path, for NAME_FILE."""
    path = tmp_path / "secrets" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(value + "\n")
    return str(path)


def runs(command: list[str]) -> bool:
    return subprocess.run(command, capture_output=True).returncode == 0


def mcp_file(tmp_path: Path, servers: dict[str, Any]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


TOOLBOX_ENTRY = {
    "command": sys.executable,
    "args": [str(TOOLBOX)],
    "env": {"TOOLBOX_PHRASE": "${DOCTOR_MCP_PHRASE}"},
}


@pytest.fixture
async def deployment(
    tmp_path: Path,
    database_url: str,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    fake_slack: FakeSlack,
) -> AsyncIterator[Deployment]:
    """Every part configured and healthy; the settings otherwise Parley's defaults."""
    await upgrade(database_url)  # a SQLite copy is at head already; PostgreSQL starts empty
    with own_redis(tmp_path, password=REDIS_PASSWORD) as redis_url:
        env = {
            "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
            "REDIS_URL": redis_url,
            "DATABASE_URL": database_url,
            "PARLEY_MODEL": "claude-test",
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "ANTHROPIC_BASE_URL": fake_llm.anthropic_base_url,
            "TELEGRAM_BOT_TOKEN_FILE": secret_file(tmp_path, "telegram", TG_TOKEN),
            "TELEGRAM_API_URL": fake_telegram.base_url,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_APP_TOKEN": APP_TOKEN,
            "SLACK_API_URL": fake_slack.base_url,
            "PARLEY_MCP_CONFIG": mcp_file(tmp_path, {"toolbox": TOOLBOX_ENTRY}),
            "DOCTOR_MCP_PHRASE": MCP_PHRASE,
            "PARLEY_FILES_DIR": str(tmp_path / "files"),
            "PARLEY_WORKSPACE_DIR": str(tmp_path / "workspaces"),
        }
        yield Deployment(env, tmp_path)


HEALTHY = {
    "configuration", "redis", "redis persistence", "redis eviction", "database", "telegram",
    "slack", "slack app token", "model", "memory", "mcp toolbox", "sandbox",
}  # fmt: skip


# A case about one check leaves out the two that start processes of their own (each MCP
# server, the sandbox's probe): most of a run's cost. The healthy deployment runs them all.
FOCUSED = ("--skip", "mcp", "--skip", "sandbox")

LINE = re.compile(r"^(ok|WARN|FAILED|skip) +(\S+(?: \S+)*?)  +(.*)$")


def checklist(text: str) -> dict[str, tuple[str, str]]:
    """The text checklist's lines by check: (status, what was found); fixes left out."""
    found = {}
    for line in text.splitlines()[:-1]:
        if (row := LINE.match(line)) is not None:
            found[row[2]] = (row[1], row[3])
    return found


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_a_healthy_deployment_passes_every_check(
    deployment: Deployment, fake_llm: FakeLLM, fake_slack: FakeSlack
) -> None:
    fake_llm.enqueue(Reply(text="pong"), Reply(text="pong"))
    text = await deployment.doctor("--model")
    # Again: Slack's rate limit on apps.connections.open (Tier 1: about one a minute), which
    # a second run within the minute meets, is a warning: it refused the call, not the token.
    fake_slack.fail_next("apps.connections.open", status=429)
    again = await deployment.doctor("--model", "--json")
    assert text.code == 0 and text.err == "", text.out + text.err
    lines = checklist(text.out)
    assert {name: status for name, (status, _) in lines.items()} == dict.fromkeys(HEALTHY, "ok")
    assert text.out.splitlines()[-1] == "parley doctor: 0 failed, 0 warnings, 12 ok, 0 skipped"
    assert "fix:" not in text.out
    assert lines["redis"][1].startswith("Redis 7.")
    assert "redis://:***@127.0.0.1:" in lines["redis"][1]
    assert lines["redis persistence"][1] == "AOF on (appendonly yes)"
    assert lines["database"][1].endswith(f"schema at {revision.HEAD} (this code's)")
    assert lines["telegram"][1].startswith("token accepted: @parley_test_bot")
    assert "tools offered: toolbox__" in lines["mcp toolbox"][1]
    assert re.fullmatch(
        r"multilingual-e5-small-q4 embedded a text in \d+\.\d\d s \(384 dimensions\); "
        r"days' digests by claude-test",
        lines["memory"][1],
    ), lines["memory"]
    assert [request.body["max_tokens"] for request in fake_llm.requests] == [5, 5]
    assert again.code == 0, again.out
    statuses = {name: row["status"] for name, row in again.checks.items()}
    assert statuses == {**dict.fromkeys(HEALTHY, "ok"), "slack app token": "warning"}
    assert again.checks["slack app token"]["found"].startswith("Slack rate-limited the call")


async def test_an_unconfigured_part_is_skipped_not_failed(deployment: Deployment) -> None:
    for name in (
        "TELEGRAM_BOT_TOKEN_FILE",
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "PARLEY_MCP_CONFIG",
    ):
        del deployment.env[name]
    (deployment.cwd / "mcp.json").unlink()  # else read as ./mcp.json, the default
    said = await deployment.doctor("--json", "--skip", "sandbox")
    assert said.code == 0, said.out
    statuses = {name: row["status"] for name, row in said.checks.items()}
    assert statuses == {
        "configuration": "ok", "redis": "ok", "redis persistence": "ok", "redis eviction": "ok",
        "database": "ok", "telegram": "skipped", "slack": "skipped", "model": "skipped",
        "memory": "ok", "mcp": "skipped", "sandbox": "skipped",
    }  # fmt: skip
    assert said.checks["model"]["found"].startswith("not asked: `parley doctor --model`")
    assert said.checks["sandbox"]["found"] == "left out (--skip)"


def only_failure(said: Said, check: str) -> dict[str, Any]:
    """The one failed check, `check`; the command exited 1."""
    assert said.code == 1, said.out + said.err
    assert list(said.failed()) == [check], said.out
    return said.checks[check]


async def test_redis_unreachable(deployment: Deployment) -> None:
    deployment.env["REDIS_URL"] = f"redis://:{REDIS_PASSWORD}@127.0.0.1:{free_port()}/0"
    row = only_failure(await deployment.doctor("--json", *FOCUSED), "redis")
    assert row["found"].startswith("no answer from Redis at redis://:***@127.0.0.1:")
    assert row["fix"].startswith("start Redis, or set REDIS_URL to where it runs")
    said = await deployment.doctor("--json", *FOCUSED)
    assert said.checks["redis persistence"]["status"] == "skipped"


async def test_a_redis_user_who_may_not_run_info(deployment: Deployment, tmp_path: Path) -> None:
    with own_redis(tmp_path) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        redis.Redis(port=int(port)).acl_setuser(
            "doctor", enabled=True, passwords=[f"+{REDIS_PASSWORD}"], keys=["*"],
            channels=["*"], commands=["+@all", "-info"],
        )  # fmt: skip
        deployment.env["REDIS_URL"] = f"redis://doctor:{REDIS_PASSWORD}@127.0.0.1:{port}/0"
        row = only_failure(await deployment.doctor("--json", *FOCUSED), "redis")
    assert row["found"].startswith("Redis at redis://doctor:***@127.0.0.1:")
    assert "refused a command (NoPermissionError" in row["found"]
    assert row["fix"].startswith("let REDIS_URL's user run INFO")


async def test_redis_that_persists_nothing(deployment: Deployment, tmp_path: Path) -> None:
    with own_redis(tmp_path, "--appendonly", "no") as url:
        deployment.env["REDIS_URL"] = url
        row = only_failure(await deployment.doctor("--json", *FOCUSED), "redis persistence")
    assert row["found"].startswith('nothing is persisted (appendonly no, save "")')
    assert "set appendonly yes (or a save schedule) in redis.conf" in row["fix"]


async def test_redis_that_may_evict_parleys_keys(deployment: Deployment, tmp_path: Path) -> None:
    evicting = ("--maxmemory", "512mb", "--maxmemory-policy", "allkeys-lru")
    with own_redis(tmp_path, *evicting) as url:
        deployment.env["REDIS_URL"] = url
        row = only_failure(await deployment.doctor("--json", *FOCUSED), "redis eviction")
    assert row["found"] == (
        "maxmemory-policy allkeys-lru, maxmemory 512.0 MB: Redis may evict Parley's mailboxes "
        "and sessions' state"
    )
    assert row["fix"].startswith("set maxmemory-policy noeviction")


async def test_a_schema_behind_the_code(deployment: Deployment) -> None:
    previous = f"{int(revision.HEAD) - 1:04d}"
    await migrate.downgrade(deployment.env["DATABASE_URL"], previous)
    row = only_failure(await deployment.doctor("--json", *FOCUSED), "database")
    assert row["found"].endswith(f"schema at {previous}, the code needs {revision.HEAD}")
    assert row["fix"] == "run `parley migrate`"


async def test_telegram_refuses_the_token(deployment: Deployment) -> None:
    wrong = "7000001:WRONG-doctor-token-2231"
    secret_file(deployment.cwd, "telegram", wrong)  # the file the deployment names
    said = await deployment.doctor("--json", *FOCUSED)
    row = only_failure(said, "telegram")
    assert row["found"] == "Telegram refused the token (401 Unauthorized)"
    assert row["fix"].startswith("check TELEGRAM_BOT_TOKEN")
    assert wrong not in said.out


async def test_telegram_delivering_elsewhere_than_the_webhook_configured(
    deployment: Deployment,
) -> None:
    """A warning, not a failure: `parley web` sets the webhook when it connects."""
    deployment.env["TELEGRAM_WEBHOOK_URL"] = "https://parley.example.com/telegram"
    said = await deployment.doctor("--json", *FOCUSED)
    assert said.code == 0, said.out
    assert said.checks["telegram"]["status"] == "ok"
    webhook = said.checks["telegram webhook"]
    assert webhook["status"] == "warning"
    assert webhook["found"] == "Telegram delivers to no webhook, not TELEGRAM_WEBHOOK_URL"
    assert webhook["fix"] == "start `parley web`: it sets the webhook when it connects"


async def test_slack_refuses_the_token(deployment: Deployment) -> None:
    wrong = "xoxb-wrong-doctor-token-7781"
    deployment.env["SLACK_BOT_TOKEN"] = wrong
    said = await deployment.doctor("--json", *FOCUSED)
    row = only_failure(said, "slack")
    assert row["found"] == "Slack refused the token (invalid_auth)"
    assert row["fix"].startswith("check SLACK_BOT_TOKEN")
    assert wrong not in said.out


async def test_the_model_api_refuses_the_key(deployment: Deployment) -> None:
    wrong = "sk-ant-wrong-doctor-key-5521"
    deployment.env["ANTHROPIC_API_KEY"] = wrong
    said = await deployment.doctor("--json", *FOCUSED, "--model")
    row = only_failure(said, "model")
    assert row["found"].startswith("claude-test (anthropic): Anthropic API error 401")
    assert row["fix"] == "check ANTHROPIC_API_KEY: the API refused it"
    assert wrong not in said.out


async def test_each_of_several_keys_is_asked_and_a_refused_one_named_by_its_place(
    deployment: Deployment, fake_llm: FakeLLM
) -> None:
    """A worker moves past a refused key in silence: the doctor names it."""
    wrong = "sk-ant-wrong-doctor-key-7734"
    deployment.env["ANTHROPIC_API_KEY"] = f"{ANTHROPIC_KEY},{wrong}"
    fake_llm.enqueue(Reply(text="pong"))
    said = await deployment.doctor("--json", *FOCUSED, "--model")
    row = only_failure(said, "model key 2")
    assert row["found"].startswith("claude-test (anthropic): Anthropic API error 401")
    assert row["fix"] == "check ANTHROPIC_API_KEY (its key 2): the API refused it"
    assert said.checks["model key 1"]["status"] == "ok"
    assert "2 Anthropic keys" in said.checks["configuration"]["found"]
    assert wrong not in said.out and ANTHROPIC_KEY not in said.out


async def test_an_embeddings_endpoint_that_does_not_answer(deployment: Deployment) -> None:
    deployment.env |= {
        "PARLEY_EMBEDDINGS_MODEL": "text-embedding-3-small",
        "PARLEY_EMBEDDINGS_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
        "PARLEY_EMBEDDINGS_API_KEY": "sk-embed-doctor-key-7731",
        "PARLEY_DIGEST_MODEL": "off",
    }
    said = await deployment.doctor("--json", *FOCUSED)
    row = only_failure(said, "memory")
    assert row["found"].startswith("text-embedding-3-small: ")
    assert row["fix"] == "check PARLEY_EMBEDDINGS_MODEL, PARLEY_EMBEDDINGS_BASE_URL and its key"
    assert "sk-embed-doctor-key-7731" not in said.out


async def test_mcp_servers_that_do_not_start(deployment: Deployment, tmp_path: Path) -> None:
    """One server's program is missing; another exits at once, quoting its secret on
    stderr, which the checklist shows hidden. One that offers no tool is a warning, one
    switched off is skipped."""
    crash = "import os, sys; sys.stderr.write('refused ' + os.environ['ITS_PHRASE']); sys.exit(3)"
    servers = {
        "missing": {"command": str(tmp_path / "no-such-server")},
        "crashing": {
            "command": sys.executable,
            "args": ["-c", crash],
            "env": {"ITS_PHRASE": "${DOCTOR_MCP_PHRASE}"},
        },
        "toolbox": TOOLBOX_ENTRY,
        "hidden": {**TOOLBOX_ENTRY, "tools": {"deny": ["*"]}},
        "off": {"command": str(tmp_path / "no-such-server"), "disabled": True},
    }
    deployment.env["PARLEY_MCP_CONFIG"] = mcp_file(tmp_path, servers)
    said = await deployment.doctor("--json")
    assert said.code == 1
    assert set(said.failed()) == {"mcp missing", "mcp crashing"}, said.out
    assert said.checks["mcp toolbox"]["status"] == "ok"
    assert said.checks["mcp hidden"]["status"] == "warning"
    assert said.checks["mcp hidden"]["found"] == "connected, but it offers Parley no tool"
    assert said.checks["mcp off"] == {
        "check": "mcp off", "status": "skipped", "found": "disabled in the file", "fix": None,
    }  # fmt: skip
    missing, crashing = said.checks["mcp missing"], said.checks["mcp crashing"]
    assert "cannot start" in missing["found"] and "No such file" in missing["found"]
    assert missing["fix"] == "run its command by hand to see why (mcp.json, 'missing')"
    assert "its last words: refused ***" in crashing["found"], crashing


async def test_the_sandbox_refused_its_namespaces(deployment: Deployment) -> None:
    """Under a user namespace that may make no more namespaces, as Docker's default seccomp
    profile refuses them."""
    limits = "; ".join(f"echo 0 > /proc/sys/user/max_{kind}_namespaces" for kind in NAMESPACES)
    prefix = ("unshare", "--user", "--map-root-user", "sh", "-c", f'{limits}; exec "$@"', "sh")
    if not runs([*prefix, "true"]):
        pytest.skip("this machine lets no process make a user namespace")
    row = only_failure(await deployment.doctor("--json", prefix=prefix), "sandbox")
    assert row["found"].startswith(
        "run_python and shell are not offered here: the machine refused new"
    )
    assert "let the worker make new namespaces" in row["fix"]


async def test_a_bad_setting_fails_and_the_rest_waits_for_it(deployment: Deployment) -> None:
    deployment.env["PARLEY_MAX_ITERATIONS"] = "0"
    said = await deployment.doctor("--json")
    row = only_failure(said, "configuration")
    assert row["found"].startswith("PARLEY_MAX_ITERATIONS: ")
    assert row["fix"].startswith("correct the variable named")
    others = {row["status"] for name, row in said.checks.items() if name != "configuration"}
    assert others == {"skipped"}


async def test_a_host_that_never_answers_does_not_hang_the_command(
    deployment: Deployment,
) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # accepts, and says nothing until the other side leaves
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    deployment.env["REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
    deployment.env["TELEGRAM_API_URL"] = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    async with server:
        said = await deployment.doctor("--json", "--timeout", "5", "--skip", "mcp")
    took = time.monotonic() - started
    assert said.code == 1 and set(said.failed()) == {"redis", "telegram"}, said.out
    assert said.checks["telegram"]["found"] == "no answer within 5 s"
    assert "TimeoutError" in said.checks["redis"]["found"]
    assert took < 45, took  # aiogram alone would wait 60 s for Telegram


@pytest.mark.parametrize(
    ("args", "said"),
    [(("--skip", "redis", "--skip", "dns"), "--skip takes configuration, redis, database, "
      "telegram, slack, model, memory, mcp, sandbox, not 'dns'"),
     (("--timeout", "0"), "--timeout must be more than 0 and at most 600, not 0")],
)  # fmt: skip
async def test_a_wrong_option_is_one_line_and_exit_2(
    args: tuple[str, ...], said: str, tmp_path: Path
) -> None:
    proc = await start_parley(
        "doctor", *args, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        stdout=PIPE, stderr=PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert (proc.returncode, out, err.decode()) == (2, b"", f"parley: {said}\n")
