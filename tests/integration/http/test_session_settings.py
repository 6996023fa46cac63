"""A conversation's settings over the HTTP API (what the web chat's settings form sends): the
model, the tools its turns may offer and the schema their answers must follow, chosen when the
session is made or later, run by every turn of it as an API run's config is, shown by its
record, set back with null, and refused (naming the field, keeping nothing) when no run could
have them. Real web app, worker, Redis and database; the fake model behind the real SDK."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis import keys
from bot.vocabulary.runs import run_id
from tests.fakes.llm import Reply, ToolCallSpec
from tests.integration.http.test_agent_run import traced
from tests.support.stack import Stack, recorded, send, texts

pytestmark = pytest.mark.e2e
SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "integer"}},
    "additionalProperties": False,
}
CHOSEN = {"tools": ["calculator"], "output_schema": SCHEMA, "model": "claude-haiku-test"}


def offered(stack: Stack, call: int) -> list[str]:
    """The names of the tools the model was offered in its `call`-th request."""
    return [tool["name"] for tool in stack.fake.requests[call].body.get("tools", [])]


async def turn_trace(client: httpx.AsyncClient, session: str, message: str) -> dict[str, Any]:
    """The trace of the turn the message sent with Idempotency-Key `message` started."""
    return await traced(client, run_id(f"http:{session}", message))


async def test_every_turn_runs_with_the_sessions_tools_schema_and_model(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text='{"answer": "forty-two"}'),  # not the schema's: asked again
        Reply(text='{"answer": 42}'),
        Reply(text="Plain words."),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        changed = await client.patch(f"/api/sessions/{session}", json=CHOSEN)
        assert changed.status_code == 200, changed.text
        events = await send(client, session, "6*7 as JSON", **{"Idempotency-Key": "m1"})
        detail = await recorded(stack, session, 4)  # the run's record is written with it
        trace = await turn_trace(client, session, "m1")
        back = {"tools": None, "output_schema": None, "model": None}
        reset = await client.patch(f"/api/sessions/{session}", json=back)
        after = await send(client, session, "and now?", **{"Idempotency-Key": "m2"})
        again = await recorded(stack, session, 6)
        plain = await turn_trace(client, session, "m2")

    assert changed.json() == {"id": session, **CHOSEN}
    assert offered(stack, 0) == offered(stack, 1) == offered(stack, 2) == ["calculator"]
    assert [r.body["model"] for r in stack.fake.requests[:3]] == ["claude-haiku-test"] * 3
    checks = [(e["valid"], e["repairing"]) for e in events if e["type"] == "validation"]
    assert checks == [(False, True), (True, False)]
    assert events[-1]["type"] == "completed" and events[-1]["output"] == {"answer": 42}
    assert "'forty-two' is not of type 'integer'" in stack.fake.requests[2].last_user_text()
    kinds = [(n["kind"], n["status"]) for n in trace["nodes"]]
    assert kinds == [
        ("model_call", "ok"), ("tool_call", "ok"), ("model_call", "ok"), ("validation", "error"),
        ("repair", "ok"), ("model_call", "ok"), ("validation", "ok"),
    ]  # fmt: skip
    assert trace["config"]["tools"] == ["calculator"]
    assert trace["config"]["output_schema"] == SCHEMA
    assert (detail["tools"], detail["output_schema"]) == (["calculator"], SCHEMA)
    assert (detail["model"], detail["mode"]) == ("claude-haiku-test", "react")

    # Set back: every tool, no schema, the default model.
    assert reset.json() == {"id": session, **back}
    assert texts(after) == "Plain words." and "validation" not in {e["type"] for e in after}
    assert len(offered(stack, 3)) > 2 and "calculator" in offered(stack, 3)
    assert stack.fake.requests[3].body["model"] == "claude-test"
    assert [n["kind"] for n in plain["nodes"]] == ["model_call"]
    assert plain["config"]["output_schema"] is None
    assert (again["tools"], again["output_schema"], again["model"]) == (None, None, "claude-test")


async def test_a_session_made_with_settings_runs_with_them(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text='{"answer": 7}'))
    body = {"tools": ["current_time"], "output_schema": SCHEMA, "mode": "react"}
    async with stack.client() as client:
        made = await client.post("/api/sessions", json=body)
        assert made.status_code == 201, made.text
        session = made.json()["id"]
        events = await send(client, session, "seven", **{"Idempotency-Key": "m1"})
        detail = await recorded(stack, session, 2)
    assert made.json() == {
        "id": session, "model": "claude-test", "mode": "react", "reasoning": "off", **body,
    }  # fmt: skip
    assert offered(stack, 0) == ["current_time"]
    assert [e["valid"] for e in events if e["type"] == "validation"] == [True]
    assert (detail["tools"], detail["output_schema"]) == (["current_time"], SCHEMA)


REFUSED = [
    ({"tools": ["calculator", "nope"]}, "tools: no tool 'nope'"),
    ({"model": "gpt-9"}, "model: this deployment's API does not serve 'gpt-9'"),
    ({"output_schema": {"type": 5}}, "output_schema: Value error, not a valid JSON Schema: "),
    ({"output_schema": {"pattern": "(?=a)"}}, "output_schema: Value error, not a valid JSON"),
    ({"output_schema": "{}"}, "output_schema: Input should be a valid dictionary"),
    ({"tools": "calculator"}, "tools: Input should be a valid list"),
    ({"tools": [""]}, "tools: Value error, a tool name is 1 to 128 characters"),
    ({"colour": "red"}, "colour: Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("body", "problem"), REFUSED)
async def test_settings_no_run_could_have_are_refused_and_nothing_is_kept(
    stack: Stack, body: dict[str, Any], problem: str
) -> None:
    async with stack.client() as client:
        session = await stack.session(client)
        path = f"/api/sessions/{session}"
        changed = await client.patch(path, json={"mode": "plan_execute", **body})
        made = await client.post("/api/sessions", json=body)
        empty = await client.patch(path, json={})
    for refused in (changed, made):
        assert refused.status_code == 422, refused.text
        assert any(problem in line for line in refused.json()["problems"]), refused.json()
    assert empty.status_code == 422
    assert "give mode, reasoning, model, tools or output_schema" in json.dumps(empty.json())
    redis = Redis.from_url(stack.redis_url)
    try:
        assert await redis.hgetall(keys.session(f"http:{session}", "options")) == {}
        assert len(await redis.keys(keys.http_session("*"))) == 1  # the POST made none
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("stack", "models"),
    [
        ({}, {"default": "claude-test", "models": ["claude-test"], "aliases": {}, "listed": False}),
        (
            {"PARLEY_MODELS": "claude-test, fast=claude-haiku-test"},
            {"default": "claude-test", "models": ["claude-test", "claude-haiku-test"],
             "aliases": {"fast": "claude-haiku-test"}, "listed": True},
        ),
    ],
    indirect=["stack"],
)  # fmt: skip
async def test_the_models_a_session_may_name_are_listed(
    stack: Stack, models: dict[str, Any]
) -> None:
    async with stack.client() as client:
        listed = await client.get("/api/models")
        session = await stack.session(client)
        by_alias = await client.patch(f"/api/sessions/{session}", json={"model": "fast"})
    assert listed.status_code == 200 and listed.json() == models
    if models["listed"]:  # an alias is kept as the model it names; an unlisted one refused
        assert by_alias.json() == {"id": session, "model": "claude-haiku-test"}
    else:
        assert by_alias.status_code == 422
