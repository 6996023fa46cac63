"""The fake model APIs on their own (`make fake-llm`): they say where they listen and print
the `.env` lines that point Parley at them, and those lines work as printed."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anthropic
import openai
import pytest

from bot.config.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def printed() -> AsyncIterator[list[str]]:
    """The lines `python -m tests.fakes.llm` prints on start, while it runs."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.llm", stdout=asyncio.subprocess.PIPE, cwd=ROOT
    )
    assert proc.stdout is not None
    try:
        said: list[str] = []
        while not said or not said[-1].startswith("Any other key"):
            line = await asyncio.wait_for(proc.stdout.readline(), 60)  # a guard against a hang
            assert line, f"it stopped, having said {said}"
            said.append(line.decode().rstrip("\n"))
        yield said
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.e2e  # starts the fake as a process of its own
async def test_the_lines_it_prints_take_parley_to_it(printed: list[str], tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    settings_lines = [line for line in printed if re.fullmatch(r"[A-Z_]+=\S+", line)]
    env_file.write_text("\n".join(settings_lines) + "\n")
    settings = load_settings(_env_file=env_file)
    assert settings.anthropic_base_url is not None and settings.openai_base_url is not None
    assert printed[0].startswith(f"The fake model APIs listen at {settings.anthropic_base_url} ")
    assert settings.anthropic_api_key is not None and settings.openai_api_key is not None
    claude = anthropic.AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        max_retries=0,
    )
    said = await claude.messages.create(
        model="claude-test", max_tokens=200, messages=[{"role": "user", "content": "hello"}]
    )
    assert said.content[0].type == "text" and said.content[0].text.startswith("You said: hello.")
    gpt = openai.AsyncOpenAI(
        api_key=settings.openai_api_key.get_secret_value(),
        base_url=settings.openai_base_url,
        max_retries=0,
    )
    answer = await gpt.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hello"}]
    )
    assert (answer.choices[0].message.content or "").startswith("You said: hello.")
