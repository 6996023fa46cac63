"""`parley chat` as a person uses it: a real process, piped or on a pseudo-terminal."""

from __future__ import annotations

import asyncio
import os
import pty
from pathlib import Path

import pytest

from bot.tools.workspace_paths import workspace_of
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply, ToolCallSpec
from tests.support.parley import PIPE, start_parley
from tests.support.redis_server import free_port

pytestmark = pytest.mark.e2e  # each test runs `parley chat` as a process

ROOT = Path(__file__).resolve().parents[2]


def chat_env(fake: FakeLLM, home: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "PARLEY_MODEL": "claude-test",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
        **extra,
    }


async def run_piped(fake: FakeLLM, home: Path, stdin: str, **extra: str) -> tuple[int, str, str]:
    proc = await start_parley(
        "chat",
        stdin=PIPE,
        stdout=PIPE,
        stderr=PIPE,
        env=chat_env(fake, home, **extra),
        cwd=home,
        start_new_session=True,  # no controlling terminal, as under a pipe in CI
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_piped_message_streams_reply_and_tools(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(
            text="Let me work it out.",
            tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})],
        ),
        Reply(text="It is **42**."),
    )
    code, out, err = await run_piped(fake_llm, tmp_path, "what is 6*7?\n")
    assert code == 0, err
    assert "Let me work it out." in out
    assert '🔧 calculator({"expression": "6*7"})' in out
    assert "→ 42" in out
    assert out.rstrip().endswith("It is **42**.")
    assert "you>" not in out  # no prompts when stdin is not a terminal
    assert len(fake_llm.requests) == 2 and fake_llm.rejected == []


async def test_a_file_the_agent_sends_is_named_with_where_it_is_kept(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    workspace = workspace_of(tmp_path / "data" / "workspaces", "console:local")
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("tea, milk")
    call = ToolCallSpec("send_file", {"path": "notes.txt", "caption": "The list"})
    fake_llm.enqueue(Reply(tool_calls=[call]), Reply(text="Sent."))
    code, out, err = await run_piped(fake_llm, tmp_path, "send me the list\n")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if "📎" in line]
    name, _, path = line.strip().partition(": ")
    assert name == "📎 notes.txt (The list)"
    assert await asyncio.to_thread((tmp_path / path).read_text) == "tea, milk"


async def test_two_lines_are_two_turns_of_one_conversation(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Nice to meet you, Ann."), Reply(text="Your name is Ann."))
    code, out, _ = await run_piped(fake_llm, tmp_path, "I am Ann\nwho am I?\n")
    assert code == 0
    assert "Nice to meet you, Ann." in out and "Your name is Ann." in out
    assert "I am Ann" in str(fake_llm.requests[1].body["messages"])


async def test_without_a_terminal_approval_is_denied(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+2"})]),
        Reply(text="I could not calculate."),
    )
    policy = '[{"action": "ask", "tool": "calculator"}]'
    code, out, _ = await run_piped(fake_llm, tmp_path, "2+2\n", PARLEY_POLICY=policy)
    assert code == 0
    assert "(no terminal to ask on: denied)" in out
    assert "✗ Denied by the user." in out
    assert fake_llm.requests[1].tool_results()[0][1] == "Denied by the user."


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"ANTHROPIC_API_KEY": "wrong-key-value"}, "(Anthropic API error 401"),
        (
            {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{free_port()}", "PARLEY_LLM_ATTEMPTS": "1"},
            "(Anthropic API connection failed",
        ),
    ],
    ids=["refused-key", "unreachable"],
)
async def test_provider_failure_is_one_line_on_stderr(
    fake_llm: FakeLLM, tmp_path: Path, env: dict[str, str], expected: str
) -> None:
    code, out, err = await run_piped(fake_llm, tmp_path, "hi\n", **env)
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith("[error] The model's API did not answer") and expected in line
    assert "Your message is kept" in line  # neither the key nor the network is the message's
    assert "[error]" not in out and out.strip() == ""
    assert "Traceback" not in err
    assert "wrong-key-value" not in out + err


async def test_terminal_asks_and_approval_runs_the_tool(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+2"})]),
        Reply(text="Four."),
    )
    env = chat_env(fake_llm, tmp_path, PARLEY_POLICY='[{"action": "ask", "tool": "calculator"}]')
    leader, follower = pty.openpty()
    proc = await start_parley(
        "chat",
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
    )
    os.close(follower)
    screen = b""

    async def read_until(marker: bytes) -> None:
        nonlocal screen
        while marker not in screen:
            chunk = await asyncio.wait_for(asyncio.to_thread(os.read, leader, 4096), 30)
            screen += chunk

    try:
        await read_until(b"you> ")
        os.write(leader, b"add 2 and 2\n")
        await read_until(b'Allow calculator({"expression": "2+2"})? [y/N] ')
        os.write(leader, b"y\n")
        await read_until(b"Four.")
        await read_until(b"you> ")
        os.write(leader, b"/exit\n")
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
        os.close(leader)
    assert b"\xe2\x86\x92 4" in screen  # "→ 4"
    assert fake_llm.requests[1].tool_results()[0][1] == "4"


async def test_the_agents_questions_are_numbered_lists_on_the_terminal(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    questions = [
        {"question": "Which colour?", "options": ["Red", "Blue"]},
        {"question": "When?", "options": ["Today", "Tomorrow"]},
    ]
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("ask_user", {"questions": questions})]),
        Reply(text="Blue, soon."),
    )
    leader, follower = pty.openpty()
    proc = await start_parley(
        "chat",
        stdin=follower, stdout=follower, stderr=follower,
        env=chat_env(fake_llm, tmp_path), cwd=tmp_path, start_new_session=True,
    )  # fmt: skip
    os.close(follower)
    screen = b""

    async def read_until(marker: bytes) -> None:
        nonlocal screen
        while marker not in screen:
            chunk = await asyncio.wait_for(asyncio.to_thread(os.read, leader, 4096), 30)
            screen += chunk

    try:
        await read_until(b"you> ")
        os.write(leader, b"paint the shed\n")
        await read_until("❓ Which colour?\r\n  1. Red\r\n  2. Blue\r\n".encode())
        await read_until(b"(a number, or your own words) ")
        os.write(leader, b"2\n")
        await read_until("❓ When?".encode())
        await read_until(b"(a number, or your own words) ")
        os.write(leader, b"when it stops raining\n")
        await read_until(b"Blue, soon.")
        await read_until(b"you> ")
        os.write(leader, b"/exit\n")
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
        os.close(leader)
    result = fake_llm.requests[1].tool_results()[0][1]
    assert '"Which colour?" → "Blue"' in result
    assert '"When?" → in their own words: "when it stops raining"' in result
