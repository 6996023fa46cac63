"""`load_skill` reads a skill's instructions and its files, never anything outside its folder,
and only while the library has a skill to offer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.skills.library import Skills
from bot.skills.tools import LOAD, MAX_FILE, SkillTools, read_skill_file
from bot.tools.base import ToolError
from tests.skills.making import write_skill


@pytest.fixture
def skills(tmp_path: Path) -> Skills:
    folder = write_skill(tmp_path / "skills", "deploy", "Deploy the app.", "Run the steps.")
    (folder / "steps.md").write_text("1. build\n2. ship\n")
    (folder / "docs").mkdir()
    (folder / "docs" / "more.md").write_text("more")
    (folder / "big.txt").write_text("y" * (MAX_FILE + 10))
    (folder / "image.bin").write_bytes(b"\xff\xfe\x00\x01")
    (tmp_path / "secret.txt").write_text("the operator's key")
    loaded = Skills([tmp_path / "skills"])
    loaded.load()
    return loaded


def test_files_are_read_inside_the_skill_and_bounded(skills: Skills) -> None:
    skill = skills.library.skills["deploy"]
    assert read_skill_file(skill, "steps.md") == "1. build\n2. ship\n"
    assert read_skill_file(skill, "docs/../docs/more.md") == "more"
    big = read_skill_file(skill, "big.txt")
    assert big.endswith(f"[cut at {MAX_FILE} bytes]") and len(big) < MAX_FILE + 40
    with pytest.raises(ToolError, match="is not text"):
        read_skill_file(skill, "image.bin")


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("../../secret.txt", "is outside the skill deploy's folder"),
        ("docs/../../../secret.txt", "is outside the skill deploy's folder"),
        ("/etc/passwd", "is absolute"),
        ("~/.ssh/id_rsa", "is absolute"),
        ("missing.md", "has no file"),
        ("docs", "is not a file"),
        ("a\0b", "Refused"),
    ],
)
def test_a_path_out_of_the_skill_is_refused(skills: Skills, path: str, said: str) -> None:
    with pytest.raises(ToolError, match=said):
        read_skill_file(skills.library.skills["deploy"], path)


def test_a_link_made_after_loading_still_cannot_lead_out(skills: Skills, tmp_path: Path) -> None:
    skill = skills.library.skills["deploy"]
    (skill.folder / "late.md").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ToolError, match="is outside the skill deploy's folder"):
        read_skill_file(skill, "late.md")


def test_the_tool_is_offered_only_while_there_is_a_skill(tmp_path: Path) -> None:
    empty = Skills([tmp_path / "none"])
    empty.load()
    assert SkillTools(empty, None).tools() == {}
    write_skill(tmp_path / "none", "deploy")
    empty.load()
    assert list(SkillTools(empty, None).tools()) == [LOAD]
