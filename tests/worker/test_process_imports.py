"""What `parley web`, `parley scheduler` and `parley up` import before they serve: each SDK
costs a start-up up to a second and a half of CPU, and a web process that polls Telegram late
answers late.

`parley web` imports no SDK of a platform without a token and builds aiogram's types on use;
`parley scheduler` imports none, Telegram configured or not; `parley up` checks the
configuration without the provider's SDK, which its worker imports. Each runs in a fresh
interpreter, with Anthropic and Telegram configured. What a worker imports is pinned by
`tests/integration/worker/test_imports.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # fresh interpreters, `python -m worker up` among them
ROOT = Path(__file__).resolve().parents[2]
# jsonschema: at the first output schema checked (`bot.vocabulary.run_config`)
UNUSED = {"openai", "slack_sdk", "slack_bolt", "mcp", "trafilatura", "jsonschema"}

# What `parley web` imports before it serves.
WEB = """
from worker.cli import _settings
settings = _settings()
import worker.web
"""
# What `parley scheduler` imports before it serves (and `parley up` before it forks).
SCHEDULER = """
from worker.cli import _settings
settings = _settings()
import worker.scheduler
"""
# What `parley up` does before it starts the processes.
UP = """
from worker.cli import _check_agent, _settings
_check_agent(_settings())
"""
REPORT = """
import json, sys
types = sys.modules.get("aiogram.types")
print(json.dumps({
    "packages": sorted({name.partition(".")[0] for name in sys.modules}),
    "message_built": types is not None and types.Message.__pydantic_complete__,
}))
"""


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "PARLEY_MODEL": "claude-sonnet-4-5",
        "TELEGRAM_BOT_TOKEN": "123456:test-token",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/parley.db",
    }


def imported(program: str, tmp_path: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", program + REPORT],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        cwd=tmp_path,  # no .env file here
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return report


def test_the_web_process_imports_no_sdk_of_a_platform_without_a_token(tmp_path: Path) -> None:
    report = imported(WEB, tmp_path)
    packages = report["packages"]
    assert isinstance(packages, list)
    assert UNUSED.isdisjoint(packages), UNUSED.intersection(packages)
    assert report["message_built"] is False  # aiogram's types are built on use


def test_the_scheduler_imports_no_sdk_of_a_platform_or_a_model(tmp_path: Path) -> None:
    """It names a task's chat from its session key (`adapters.places`); aiogram is half a
    second of its start and some 40 MB of its memory at rest."""
    packages = imported(SCHEDULER, tmp_path)["packages"]
    assert isinstance(packages, list)
    sdks = UNUSED | {"aiogram", "anthropic"}
    assert sdks.isdisjoint(packages), sdks.intersection(packages)


def test_parley_up_checks_the_configuration_without_the_providers_sdk(tmp_path: Path) -> None:
    packages = imported(UP, tmp_path)["packages"]
    assert isinstance(packages, list)
    assert {"anthropic", "openai"}.isdisjoint(packages)


def test_parley_up_still_names_a_missing_key_in_one_line(tmp_path: Path) -> None:
    env = environment(tmp_path)
    del env["ANTHROPIC_API_KEY"]
    proc = subprocess.run(
        [sys.executable, "-m", "worker", "up"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("parley: configuration error: ANTHROPIC_API_KEY: not set")
