"""Skills in a turn, through the real SDKs and the fake model: listed by name and description
in the system prompt's cached prefix, loaded by `load_skill` when the model calls it, and
followed; a chat's switched-off skill left out of its prompt; nothing said when there is none."""

from __future__ import annotations

from pathlib import Path

from bot.agent.deps import TurnRequest
from bot.agent.loop import Agent
from bot.vocabulary import events as ev
from bot.vocabulary.chat_settings import ChatRules
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, context, shown_text
from tests.fakes.llm import FakeLLM, RecordedRequest, Reply, ToolCallSpec
from tests.skills.making import write_skill

GREETING = "Greet a person in French. Use it when someone says hello."
STEPS = "Answer a greeting with exactly: Bonjour, mon ami!"


async def run(agent: Agent, text: str, rules: ChatRules | None = None) -> list[ev.AgentEvent]:
    request = TurnRequest(context(agent), text=text, chat_rules=rules or ChatRules())
    return [event async for event in agent.run(SessionState(), request)]


def followed(request: RecordedRequest) -> bool:
    """Whether the skill's instructions came back to the model as the tool's result."""
    return any(STEPS in result for _, result in request.tool_results())


def offered(request: RecordedRequest) -> set[str]:
    """The tools' names a request offers, in either API's shape."""
    tools = request.body.get("tools", [])
    return {str(tool.get("name") or tool.get("function", {}).get("name")) for tool in tools}


def skills_folder(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "greeting", GREETING, STEPS)
    write_skill(root, "archive", "Archive old files.", "Move them to old/.")
    return root


async def test_a_skill_is_listed_in_the_cached_prefix_then_loaded_and_followed(
    make_agent: MakeAgent, fake_llm: FakeLLM, api: str, tmp_path: Path
) -> None:
    agent = make_agent(skills_dir=skills_folder(tmp_path))
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("load_skill", {"name": "greeting"})]),
        lambda request: Reply(text="Bonjour, mon ami!" if followed(request) else "Hello."),
    )
    events = await run(agent, "hello!")
    assert shown_text(events) == "Bonjour, mon ami!"
    first, second = fake_llm.requests
    listing = "- archive: Archive old files.\n- greeting: " + GREETING  # sorted by name
    assert listing in first.system_text() and STEPS not in first.system_text()
    if api == "anthropic":  # the listing is in the last part the cache breakpoint covers
        parts = first.body["system"]
        cached = max(i for i, part in enumerate(parts) if "cache_control" in part)
        assert listing in parts[cached]["text"]
        assert all("cache_control" not in part for part in parts[cached + 1 :])
        assert "Platform:" in parts[-1]["text"]
    assert "load_skill" in offered(first)
    ((_, result),) = second.tool_results()
    assert result.startswith('<skill name="greeting">\n' + STEPS + "\n</skill>")


async def test_a_skill_switched_off_in_a_chat_is_not_listed_there(
    make_agent: MakeAgent, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    agent = make_agent(skills_dir=skills_folder(tmp_path))
    fake_llm.enqueue(Reply(text="ok"), Reply(text="ok"))
    await run(agent, "hi", ChatRules(tools_off=frozenset({"skill:greeting"})))
    await run(agent, "hi")
    off, on = fake_llm.requests
    assert "- archive: " in off.system_text() and "- greeting: " not in off.system_text()
    assert "- greeting: " in on.system_text()


async def test_without_skills_neither_a_listing_nor_the_tool(
    make_agent: MakeAgent, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    agent = make_agent(skills_dir=tmp_path / "none")
    fake_llm.enqueue(Reply(text="ok"))
    await run(agent, "hi")
    (request,) = fake_llm.requests
    assert "## Skills" not in request.system_text()
    assert "load_skill" not in offered(request)
