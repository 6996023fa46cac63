"""`/skills` answers in one message whatever the number of skills: the list is cut with how
many more there are."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.ext.asyncio import create_async_engine

from adapters.chat.skill_commands import LISTED, ChatSkills
from bot.skills.library import Skills
from bot.store.chats import ChatSettings
from bot.store.database import upgrade
from tests.skills.making import write_skill


async def test_a_long_list_is_cut_to_one_message(tmp_path: Path) -> None:
    for n in range(60):
        write_skill(tmp_path / "skills", f"skill-{n:02}", "A skill that does a thing. " * 8)
    url = f"sqlite+aiosqlite:///{tmp_path}/parley.db"
    await upgrade(url)
    engine = create_async_engine(url)
    try:
        answer = await ChatSkills(Skills([tmp_path / "skills"]), ChatSettings(engine)).answer(
            "tg:1", "", who="tg:1", may_change=True, command="/skills"
        )
    finally:
        await engine.dispose()
    assert len(answer) < LISTED + 300
    assert "• skill-00: " in answer and "• skill-59" not in answer
    assert "… and " in answer and answer.endswith("on with /skills on NAME.")


async def test_the_tools_a_skill_names_are_listed_and_those_switched_off_marked(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path / "skills", "research", extra="allowed-tools: web_search web_fetch\n")
    write_skill(tmp_path / "skills", "plain")
    url = f"sqlite+aiosqlite:///{tmp_path}/parley.db"
    await upgrade(url)
    engine = create_async_engine(url)
    try:
        chats = ChatSettings(engine)
        await chats.switch("tg:1", "web_fetch", on=False, by="tg:1")
        skills = ChatSkills(Skills([tmp_path / "skills"]), chats)
        here = await skills.answer("tg:1", "", who="tg:1", may_change=True, command="/skills")
        elsewhere = await skills.answer("tg:2", "", who="tg:2", may_change=True, command="/skills")
    finally:
        await engine.dispose()
    assert (
        "• research: Use it for the test. Uses: web_search, web_fetch (switched off here)." in here
    )
    assert "• plain: Use it for the test.\n" in here
    assert "Uses: web_search, web_fetch." in elsewhere
