"""Skills in a `parley worker` process: a bad skill refused at start with one line in the log
while the others load, and the skills' folder changed while the worker runs (a skill added,
edited, removed) and the persona files edited, seen by the turns that follow, without a
restart. Real worker process, web app, Redis and database; fake model."""

from __future__ import annotations

import asyncio
import shutil

import httpx
import pytest

from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.skills.making import write_skill
from tests.support.stack import Stack, send, texts
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
FAREWELL = "Say goodbye with exactly: Au revoir!"


def answer(request: RecordedRequest) -> Reply:
    """The model loads the farewell skill when asked to, and follows what comes back."""
    results = "".join(result for _, result in request.tool_results())
    if FAREWELL in results:
        return Reply(text="Au revoir!")
    if "bye" in request.last_user_text() and not results:
        return Reply(tool_calls=[ToolCallSpec("load_skill", {"name": "farewell"})])
    return Reply(text="ok")


async def asked(stack: Stack, client: httpx.AsyncClient, session: str, text: str) -> str:
    """A turn's system prompt, as the model got it."""
    before = len(stack.fake.requests)
    await send(client, session, text)
    return stack.fake.requests[before].system_text()


def offered(request: RecordedRequest) -> set[str]:
    return {tool["name"] for tool in request.body.get("tools", [])}


async def test_skills_change_under_a_running_worker_and_bad_ones_are_refused(
    stack: Stack,
) -> None:
    skills = stack.tmp / "skills"  # the default PARLEY_SKILLS_DIR, in the worker's folder
    (skills / "broken").mkdir(parents=True)
    (skills / "broken" / "SKILL.md").write_text("no front matter here")
    await stack.start_worker_process()
    log = await asyncio.to_thread((stack.tmp / "worker-0.log").read_text)
    refused = [line for line in log.splitlines() if "skills/broken" in line]
    assert len(refused) == 1
    assert refused[0].endswith(
        "skill skills/broken: SKILL.md does not start with front matter between --- lines"
    )
    stack.fake.responder = answer

    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "hi")
        first = stack.fake.requests[-1]
        assert "## Skills" not in first.system_text() and "load_skill" not in offered(first)

        write_skill(skills, "greeting", "Greet people in French.", "Say bonjour.")
        write_skill(skills, "farewell", "Say goodbye.", FAREWELL)

        async def added() -> bool:
            system = await asked(stack, client, session, "hi again")
            return "- farewell: Say goodbye." in system and "- greeting: " in system

        await until(added, "the next turns to see the skills added")
        assert "load_skill" in offered(stack.fake.requests[-1])
        assert "broken" not in stack.fake.requests[-1].system_text()
        events = await send(client, session, "bye")
        assert texts(events) == "Au revoir!"
        (loaded,) = [e for e in events if e["type"] == "tool_call_result"]
        assert FAREWELL in loaded["content"]

        async def counted() -> bool:  # by its name, though there was no skill at first
            shown = (await client.get("/metrics")).text.splitlines()
            calls = [line for line in shown if line.startswith("parley_tool_calls_total{")]
            return any('tool="load_skill"' in line for line in calls)

        await until(counted, "load_skill's call in the deployment's metrics")

        write_skill(skills, "greeting", "Greet people in Italian.", "Say ciao.")

        async def edited() -> bool:
            return "- greeting: Greet people in Italian." in await asked(
                stack, client, session, "hello"
            )

        await until(edited, "the next turns to see the skill edited")
        shutil.rmtree(skills / "greeting")

        async def removed() -> bool:
            return "- greeting:" not in await asked(stack, client, session, "still there?")

        await until(removed, "the next turns to see the skill removed")


async def test_the_persona_changes_under_a_running_worker(stack: Stack) -> None:
    persona = stack.tmp / "persona"
    persona.mkdir()
    (persona / "SOUL.md").write_text("# Who you are\nYou are Marvin, a robot.")
    stack.env["PARLEY_BOOTSTRAP_DIR"] = str(persona)
    await stack.start_worker_process()
    async with stack.client() as client:
        session = await stack.session(client)
        system = await asked(stack, client, session, "hi")
        assert "You are Marvin, a robot." in system and "# How you work" in system
        (persona / "SOUL.md").write_text("# Who you are\nYou are Marvin, a gloomy robot.")
        (persona / "USER.md").write_text("# The people you talk with\nSailors, mostly.")

        async def edited() -> bool:
            system = await asked(stack, client, session, "hi again")
            return "You are Marvin, a gloomy robot." in system and "Sailors, mostly." in system

        await until(edited, "the next turns to see the persona edited")
