"""`run_python` as the model meets it: through the executor, offered only where it works."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from bot.assembly.catalog import standard_tools
from bot.config.settings import Settings
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock

pytestmark = pytest.mark.e2e
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def executor() -> ToolExecutor:
    settings = Settings()
    return ToolExecutor(
        ToolRegistry(standard_tools(settings)),
        timeout=settings.tool_timeout,
        concurrency=4,
        output_limit=settings.tool_output_limit,
    )


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext("console:t", Sender(id="console:t"))


def call(code: str) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name="run_python", input={"code": code})


def test_it_is_offered_as_a_sensitive_tool_with_side_effects() -> None:
    settings = Settings()
    (tool,) = [t for t in standard_tools(settings) if t.name == "run_python"]
    assert tool.sensitive and not tool.read_only and tool.isolation == "loop"
    assert tool.timeout is not None and tool.timeout > settings.sandbox_timeout
    assert "standard library" in tool.description and "no network" in tool.description
    assert "matplotlib (with numpy and Pillow) for charts" in tool.description
    said = " ".join(tool.description.split())
    assert "holds only an empty ./out/ folder" in said
    assert "up to 10, and 64 MB in all in one turn" in said
    assert "{" not in tool.description


def test_without_the_charts_extra_the_model_is_told_only_the_standard_library_is_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An install without matplotlib (the image built without EXTRAS=charts)."""
    found = metadata.distribution

    def distribution(name: str) -> metadata.Distribution:
        if name == "matplotlib":
            raise metadata.PackageNotFoundError(name)
        return found(name)

    monkeypatch.setattr(metadata, "distribution", distribution)
    (tool,) = [t for t in standard_tools(Settings()) if t.name == "run_python"]
    assert "Only the standard library is available" in tool.description
    assert "matplotlib (with" not in tool.description


async def test_a_program_runs_and_its_output_comes_back(
    executor: ToolExecutor, ctx: ToolContext
) -> None:
    code = "import sys\nprint(sum(range(101)))\nprint('note', file=sys.stderr)\n"
    (outcome,) = await executor.run_all([call(code)], ctx, {})
    assert not outcome.is_error
    assert outcome.content == ("exit code: 0\n--- output (stdout and stderr) ---\n5050\nnote\n")


async def test_a_syntax_error_is_reported(executor: ToolExecutor, ctx: ToolContext) -> None:
    (outcome,) = await executor.run_all([call("print('unclosed'\n")], ctx, {})
    assert not outcome.is_error  # the program failed, not the tool: the model reads why
    assert outcome.content.startswith("exit code: 1\n--- output")
    assert 'File "/scratch/main.py", line 1' in outcome.content
    assert "SyntaxError" in outcome.content


async def test_bad_input_gets_a_one_line_answer(executor: ToolExecutor, ctx: ToolContext) -> None:
    (empty, missing) = await executor.run_all(
        [call("  \n"), ToolUseBlock(id="c2", name="run_python", input={})], ctx, {}
    )
    assert empty.is_error
    assert empty.content == "The program is empty; send the Python source to run."
    assert missing.is_error
    assert missing.content == "Invalid arguments for run_python: code: Field required"


LIST_TOOLS = textwrap.dedent(
    """
    import logging
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
    from bot.config.settings import Settings
    from bot.assembly.catalog import standard_tools
    print(sorted(t.name for t in standard_tools(Settings())))
    print(sorted(t.name for t in standard_tools(Settings())))
    """
)


def test_a_machine_without_namespaces_does_not_offer_it() -> None:
    """In a user namespace that may create no more of them, the probe fails: the tool is
    left out, and one line says why (once, however often the tools are listed)."""
    refuse = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -c "$1"'
    result = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c", refuse, sys.executable, LIST_TOOLS],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    names = result.stdout.splitlines()
    assert len(names) == 2 and names[0] == names[1]
    assert "calculator" in names[0] and "run_python" not in names[0]
    assert result.stderr.splitlines() == [
        "WARNING bot.sandbox.probe: run_python and shell are not offered: the machine "
        "refused new namespaces (unshare: No space left on device)"
    ]
