"""`load_skill` reads a skill's instructions and its files, never anything outside its folder,
and only while the library has a skill to offer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.skills.library import Skills
from bot.skills.tools import LOAD, MAX_FILE, SkillTools, instructions, read_skill_file
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


TOKEN = "ghp_s3cretTokenInTheRemote"


@pytest.fixture
def hidden(skills: Skills) -> Skills:
    """The deploy skill kept in a repository of its own, with secrets beside it."""
    folder = skills.library.skills["deploy"].folder
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text(f'[remote "origin"]\nurl = https://{TOKEN}@x/y\n')
    (folder / ".env").write_text(f"TOKEN={TOKEN}\n")
    (folder / ".ENV").write_text(f"TOKEN={TOKEN}\n")
    (folder / "docs" / ".git").mkdir()
    (folder / "docs" / ".git" / "config").write_text(TOKEN)
    (folder / "docs" / ".notes.md").write_text(TOKEN)
    (folder / "env.md").symlink_to(".env")
    (folder / "nothing.md").symlink_to(".nothing")
    (folder / "repo").symlink_to(".git")
    (folder / "config.md").symlink_to(".git/config")
    skills.load()
    return skills


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        "./.env",
        ".ENV",
        ".git/config",
        ".git",
        "docs/.git/config",
        "docs/.notes.md",
        ".git/../.env",
        ".git/../steps.md",
        "docs/../.env",
        "env.md",
        "repo/config",
        "config.md",
        ".missing",
        "docs/.missing/file",
        "nothing.md",
    ],
)
def test_a_hidden_file_is_refused_whatever_the_path_and_whether_or_not_it_exists(
    hidden: Skills, path: str
) -> None:
    with pytest.raises(ToolError) as refused:
        read_skill_file(hidden.library.skills["deploy"], path)
    said = str(refused.value)
    assert said == (
        f"Refused: {path!r} is, or leads to, a hidden file or folder (its name starts with a "
        "dot), which is not part of the skill deploy."
    )
    assert TOKEN not in said


def test_hidden_files_are_neither_listed_nor_offered(hidden: Skills) -> None:
    skill = hidden.library.skills["deploy"]
    assert skill.files == ("big.txt", "docs/more.md", "image.bin", "steps.md")
    listed = instructions(skill)
    assert ".env" not in listed and ".git" not in listed and "env.md" not in listed
    assert read_skill_file(skill, "./steps.md") == "1. build\n2. ship\n"
