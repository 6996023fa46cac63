"""What a process imports before it serves: only the SDKs its settings use.

A worker's start-up is also its recovery time whenever one is replaced, and an SDK imported
for nothing costs it from a fifth of a second (slack_sdk) to over a second (openai, aiogram).
Each check runs in a fresh interpreter, as `parley worker` and `parley web` start, with one
provider (Anthropic) and one platform (Telegram) configured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNUSED = {"openai", "slack_sdk", "slack_bolt", "mcp", "trafilatura"}

# What `parley worker` imports and builds before it starts serving (worker/cli.py).
WORKER = """
from worker.cli import _check_model, _settings, _starting
settings = _settings()
with _starting():
    import worker.jobs
    _check_model(settings)
"""
# What `parley web` imports before it serves, and the app it builds but for the database.
WEB = """
from worker.cli import _settings
settings = _settings()
import worker.web
"""
REPORT = """
import json, sys
types = sys.modules.get("aiogram.types")
print(json.dumps({
    "packages": sorted({name.partition(".")[0] for name in sys.modules}),
    "message_built": types is not None and types.Message.__pydantic_complete__,
}))
"""


def imported(program: str, tmp_path: Path) -> dict[str, object]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "PARLEY_MODEL": "claude-sonnet-4-5",
        "TELEGRAM_BOT_TOKEN": "123456:test-token",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/parley.db",
    }
    proc = subprocess.run(
        [sys.executable, "-c", program + REPORT],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # no .env file here
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return report


def test_a_worker_starts_with_the_configured_provider_and_no_other_sdk(tmp_path: Path) -> None:
    report = imported(WORKER, tmp_path)
    packages = report["packages"]
    assert isinstance(packages, list)
    assert "anthropic" in packages
    assert UNUSED.isdisjoint(packages), UNUSED.intersection(packages)


def test_the_web_process_imports_no_sdk_of_a_platform_without_a_token(tmp_path: Path) -> None:
    report = imported(WEB, tmp_path)
    packages = report["packages"]
    assert isinstance(packages, list)
    assert UNUSED.isdisjoint(packages), UNUSED.intersection(packages)
    assert report["message_built"] is False  # aiogram's types are built on use
