"""What a turn's `run_python` runs hand back, together: at most the sandbox's scratch size
(64 MB) of files in all, counted as read, with the default settings; the count is kept in the
turn's saved progress, so a turn resumed after its worker died is held to what it has left."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agent.deps import TurnRequest
from bot.assembly.agent import build_agent
from bot.config.settings import Settings
from bot.tools.base import ToolContext
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Sender
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply, ToolCallSpec

pytestmark = pytest.mark.e2e


def sparse(name: str, length: int) -> Reply:
    """A run that leaves one sparse file of `length` bytes in ./out/ (no scratch space used)."""
    code = f"open('out/{name}', 'wb').truncate({length})\n"
    return Reply(tool_calls=[ToolCallSpec("run_python", {"code": code}, id=f"run-{name}")])


async def test_a_turns_runs_hand_back_at_most_the_scratch_size_even_when_resumed(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = Settings(
        _env_file=None,
        model="claude-test",
        anthropic_api_key=ANTHROPIC_KEY,
        anthropic_base_url=fake_llm.anthropic_base_url,
        files_dir=tmp_path / "files",
        sandbox_timeout=120,
    )
    agent = build_agent(settings)
    fake_llm.enqueue(sparse("a.bin", 40_000_000), sparse("b.bin", 30_000_000), Reply(text="Done."))
    saved: list[SessionState] = []

    async def checkpoint(state: SessionState) -> None:
        saved.append(state.model_copy(deep=True))

    ctx = ToolContext("test:session", Sender(id="console:ann"))
    request = TurnRequest(ctx, text="files", allowed=("run_python",), config=RunConfig())
    try:
        events = [e async for e in agent.run(SessionState(), request, checkpoint=checkpoint)]
        assert [e.file.name for e in events if isinstance(e, ev.FileSent)] == ["a.bin"]
        [(_, told)] = fake_llm.requests[2].tool_results()
        assert "(25.9 MB were left for this run): b.bin (28.6 MB)" in told
        # The worker dies once the first run's result is kept; another resumes the turn.
        kept = next(s for s in saved if s.turn is not None and s.turn.out_bytes)
        assert kept.messages[-1].tool_results[0].tool_use_id == "run-a.bin"
        fake_llm.enqueue(sparse("b.bin", 30_000_000), Reply(text="Done."))
        again = TurnRequest(ctx, allowed=("run_python",), config=RunConfig())
        resumed = [e async for e in agent.run(kept, again)]
        assert not [e for e in resumed if isinstance(e, ev.FileSent)]
        [(_, told)] = fake_llm.requests[4].tool_results()
        assert "(25.9 MB were left for this run): b.bin (28.6 MB)" in told
    finally:
        await agent.aclose()
