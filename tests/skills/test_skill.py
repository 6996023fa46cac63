"""A skill's folder read strictly: the Agent Skills layout accepted as other agents write it,
and every way a folder can be wrong refused with one line that names it, the others loaded."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.skills.library import Skills, read_library
from bot.skills.skill import (
    MAX_ENTRIES,
    MAX_FILES,
    MAX_FOLDER,
    MAX_SKILL_FILE,
    SkillError,
    read_skill,
)
from tests.skills.making import write_skill


def test_a_skill_in_the_open_layout_loads_with_its_files_and_tools(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "release-notes",
        "Write release notes from a list of changes.\n  Use it when asked for notes.",
        "# Release notes\nGroup the changes by kind.",
        extra="license: Apache-2.0\nallowed-tools: web_fetch, calculator\n"
        "metadata:\n  author: ops\n  version: '1.0'\ncompatibility: any\n",
    )
    (folder / "template.md").write_text("## Added\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "count.py").write_text("print(1)\n")
    (folder / ".git" / "objects").mkdir(parents=True)  # a skill kept in a repository of its own
    for n in range(300):
        (folder / ".git" / "objects" / f"{n:03}").write_text("blob")
    (folder / ".git" / "out").symlink_to("/etc")
    skill = read_skill(folder)
    assert skill.name == "release-notes"
    assert skill.description == (
        "Write release notes from a list of changes. Use it when asked for notes."
    )
    assert skill.instructions == "# Release notes\nGroup the changes by kind."
    assert skill.files == ("scripts/count.py", "template.md")
    assert skill.allowed_tools == ("web_fetch", "calculator")


def refusal(folder: Path) -> str:
    with pytest.raises(SkillError) as raised:
        read_skill(folder)
    line = str(raised.value)
    assert "\n" not in line and line.startswith(f"skill {folder}: ")
    return line.removeprefix(f"skill {folder}: ")


def test_each_broken_rule_is_refused_in_one_line(tmp_path: Path) -> None:
    nothing = tmp_path / "empty"
    nothing.mkdir()
    assert refusal(nothing) == "has no SKILL.md"
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "SKILL.md").write_text("Just instructions, no front matter.")
    assert refusal(plain) == "SKILL.md does not start with front matter between --- lines"
    bad_yaml = write_skill(tmp_path, "bad-yaml", extra="tags: [unclosed\n")
    assert refusal(bad_yaml).startswith("SKILL.md's front matter is not valid YAML")
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "SKILL.md").write_text("---\n- name\n---\nDo it.")
    assert refusal(listed) == "SKILL.md's front matter is not a mapping of fields"
    other = write_skill(tmp_path, "other-name", folder="mismatch")
    assert refusal(other) == "name 'other-name' is not the folder's name 'mismatch'"
    upper = write_skill(tmp_path, "Bad_Name")
    assert refusal(upper).startswith("name 'Bad_Name' is not lowercase letters")
    hyphens = write_skill(tmp_path, "two--hyphens")
    assert refusal(hyphens).startswith("name 'two--hyphens' is not lowercase letters")
    long_name = write_skill(tmp_path, "a" * 65)
    assert refusal(long_name).startswith(f"name '{'a' * 65}' is not lowercase")
    unsaid = write_skill(tmp_path, "no-description", description="''")
    assert refusal(unsaid) == "the front matter has no description"
    wordy = write_skill(tmp_path, "wordy", description="x" * 1025)
    assert refusal(wordy) == "the description has 1025 characters; at most 1024"
    silent = write_skill(tmp_path, "silent", body="")
    assert refusal(silent) == "SKILL.md has no instructions after its front matter"
    tools = write_skill(tmp_path, "tools-map", extra="allowed-tools:\n  a: b\n")
    assert refusal(tools).startswith("allowed-tools is neither")


def test_sizes_are_bounded(tmp_path: Path) -> None:
    big = write_skill(tmp_path, "big", body="x" * MAX_SKILL_FILE)
    assert refusal(big).startswith("SKILL.md has ") and refusal(big).endswith(
        f"at most {MAX_SKILL_FILE}"
    )
    heavy = write_skill(tmp_path, "heavy")
    with (heavy / "data.bin").open("wb") as data:
        data.truncate(MAX_FOLDER + 1)
    assert refusal(heavy).startswith("the folder holds more than")
    crowded = write_skill(tmp_path, "crowded")
    for n in range(MAX_FILES):
        (crowded / f"{n}.md").write_text("x")
    assert refusal(crowded) == f"the folder holds more than {MAX_FILES} files or {MAX_FOLDER} bytes"
    nested = write_skill(tmp_path, "nested")
    for n in range(MAX_ENTRIES + 1):
        (nested / f"d{n}").mkdir()
    assert refusal(nested) == f"the folder holds more than {MAX_ENTRIES} files and folders"


def test_a_link_out_of_the_folder_is_refused_and_one_inside_is_not(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the operator's key")
    leaking = write_skill(tmp_path / "skills", "leaking")
    (leaking / "notes.md").symlink_to(secret)
    assert refusal(leaking) == "notes.md is a link that leads out of the skill's folder"
    dangling = write_skill(tmp_path / "skills", "dangling")
    (dangling / "gone.md").symlink_to(tmp_path / "nowhere")
    assert refusal(dangling) == "gone.md is a link that leads nowhere"
    tidy = write_skill(tmp_path / "skills", "tidy")
    (tidy / "real.md").write_text("inside")
    (tidy / "alias.md").symlink_to(tidy / "real.md")
    assert read_skill(tidy).files == ("alias.md", "real.md")


def test_bad_skills_are_refused_one_line_each_and_the_rest_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    write_skill(first, "good", "A good skill.")
    write_skill(first, "twice")
    write_skill(second, "twice")
    write_skill(second, "mismatch-name", folder="misnamed")
    (second / "README.md").write_text("not a skill: a file at the top")
    (second / ".hidden").mkdir()
    (second / "linked").symlink_to(first / "good")
    skills = Skills([first, second, tmp_path / "absent"])
    with caplog.at_level(logging.INFO, logger="bot.skills.library"):
        library = skills.load()
    assert list(library.skills) == ["good"]
    assert sorted(library.refused) == sorted(
        [
            f"skill {second / 'linked'}: is a link; put the skill's folder itself there",
            f"skill {second / 'misnamed'}: name 'mismatch-name' is not the folder's name "
            "'misnamed'",
            f"skill twice: in both {first / 'twice'} and {second / 'twice'}: neither is loaded",
        ]
    )
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sorted(warned) == sorted(library.refused)
    assert read_library([tmp_path / "absent"]).skills == {}
