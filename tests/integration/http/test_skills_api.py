"""`GET /api/skills`: the operator's skills as the next turns see them, and one line for each
folder refused, so a bad skill is visible to operators without reading a worker's log; the
hidden files of a skill's folder (its `.git`, an `.env`) neither listed there nor read by
`load_skill` in a turn. Real web app, worker, Redis and database; fake model."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.skills.making import write_skill
from tests.support.stack import Stack, send

pytestmark = pytest.mark.e2e
SKILLS = Path(tempfile.mkdtemp(prefix="parley-test-api-skills-"))
KEPT = Path(tempfile.mkdtemp(prefix="parley-test-hidden-skills-"))
TOKEN = "ghp_tokenInTheRemoteUrl"
HIDDEN = [".git/config", ".env", "./.env", "docs/.git/config", ".git/../.env", "env.md"]


@pytest.mark.parametrize("stack", [{"PARLEY_SKILLS_DIR": str(SKILLS)}], indirect=True)
async def test_the_api_lists_the_skills_and_the_folders_refused(stack: Stack) -> None:
    folder = write_skill(SKILLS, "deploy", "Deploy the app.", extra="allowed-tools: run_python\n")
    (folder / "steps.md").write_text("1. build")
    write_skill(SKILLS, "Deploy-Twice", folder="deploy-twice")
    async with stack.client() as client:
        response = await client.get("/api/skills")
    assert response.status_code == 200
    assert response.json() == {
        "skills": [
            {
                "name": "deploy",
                "description": "Deploy the app.",
                "files": ["steps.md"],
                "allowed_tools": ["run_python"],
            }
        ],
        "refused": [
            f"skill {SKILLS / 'deploy-twice'}: name 'Deploy-Twice' is not lowercase letters, "
            "digits and single hyphens (at most 64)"
        ],
    }


def in_a_repository(root: Path) -> None:
    """A skill kept in a git repository of its own, its remote's URL holding a token, and an
    `.env` beside it, a link to it among the skill's files."""
    folder = write_skill(root, "deploy", "Deploy the app.", "Read steps.md.")
    (folder / "steps.md").write_text("1. build")
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text(f'[remote "origin"]\n\turl = https://{TOKEN}@git/x\n')
    (folder / ".env").write_text(f"GITHUB_TOKEN={TOKEN}\n")
    (folder / "docs" / ".git").mkdir(parents=True)
    (folder / "docs" / ".git" / "config").write_text(TOKEN)
    (folder / "env.md").symlink_to(".env")


def reads_each_hidden_file(request: RecordedRequest) -> Reply:
    if request.tool_results():
        return Reply(text="done")
    calls = [
        ToolCallSpec("load_skill", {"name": "deploy", "file": path}, id=f"toolu_{n}")
        for n, path in enumerate(HIDDEN)
    ]
    return Reply(tool_calls=[*calls, ToolCallSpec("load_skill", {"name": "deploy"})])


@pytest.mark.parametrize("stack", [{"PARLEY_SKILLS_DIR": str(KEPT)}], indirect=True)
async def test_a_skills_hidden_files_are_never_listed_nor_read(stack: Stack) -> None:
    in_a_repository(KEPT)
    await stack.start_worker()
    stack.fake.responder = reads_each_hidden_file
    async with stack.client() as client:
        (listed,) = (await client.get("/api/skills")).json()["skills"]
        events = await send(client, await stack.session(client), "deploy it")
    assert listed["files"] == ["steps.md"]
    results = [e for e in events if e["type"] == "tool_call_result"]
    assert [r["content"] for r in results[: len(HIDDEN)]] == [
        f"Refused: {path!r} is, or leads to, a hidden file or folder (its name starts with a "
        "dot), which is not part of the skill deploy."
        for path in HIDDEN
    ]
    assert results[-1]["content"].endswith(
        'Files of this skill (read one with load_skill(name="deploy", file="PATH")): steps.md'
    )
    assert TOKEN not in str(events) and TOKEN not in str(stack.fake.requests[-1].body)
