"""The tools a turn is offered are the tools the listings name: `GET /api/tools` (which `/tools`
reads too) and `parley doctor`'s count, `delegate` among them, all built from one list
(`bot.assembly.catalog.standard_tools`). Real web app, worker, Redis and database; fake
model; the default settings."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.support import tools as test_tools
from tests.support.stack import Stack, env_settings, send
from worker.doctor.configuration import check_configuration

pytestmark = pytest.mark.e2e


async def test_the_listings_name_the_tools_the_model_is_offered(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="ok"))
    async with stack.client() as client:
        listed = {tool["name"] for tool in (await client.get("/api/tools")).json()["tools"]}
        await send(client, await stack.session(client), "hi")
    offered = {tool["name"] for tool in stack.fake.requests[-1].body["tools"]}
    modules = {tool.name for tool in test_tools.TOOLS}  # loaded by the workers alone
    assert "delegate" in listed
    assert offered == listed | modules
    (configuration, *_) = await check_configuration(env_settings(stack.env))
    assert f", {len(offered)} tools, " in configuration.found, configuration.found
