"""`GET /api/skills`: the operator's skills as the next turns see them, and one line for each
folder refused, so a bad skill is visible to operators without reading a worker's log.
Real web app, Redis and database."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.skills.making import write_skill
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e
SKILLS = Path(tempfile.mkdtemp(prefix="parley-test-api-skills-"))


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
