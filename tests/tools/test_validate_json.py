"""`validate_json` through the executor, in its helper process as a worker runs it: valid, or
the errors where they are with the compliance score; a bad schema and oversized data refused
in one sentence; the answer bounded whatever the data; offered without an approval."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.config.settings import Settings
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.builtin import builtin_tools
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.tools.policy import Policy
from bot.tools.validate_json import MAX_DATA, MAX_ERRORS
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock

pytestmark = pytest.mark.e2e  # starts the tools' helper processes

POINT = {
    "type": "object",
    "required": ["x", "y"],
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "additionalProperties": False,
}


@pytest.fixture
async def executor() -> AsyncIterator[ToolExecutor]:
    built = ToolExecutor(
        ToolRegistry(builtin_tools()), timeout=20, concurrency=4, output_limit=20_000
    )
    yield built
    await built.aclose()


async def validate(executor: ToolExecutor, data: str, schema: Any) -> ToolOutcome:
    block = ToolUseBlock(id="v1", name="validate_json", input={"data": data, "json_schema": schema})
    ctx = ToolContext("console:t", Sender(id="console:t"))
    (outcome,) = await executor.run_all([block], ctx, {})
    return outcome


async def test_valid_data_is_valid_with_full_compliance(executor: ToolExecutor) -> None:
    outcome = await validate(executor, '{"x": 1, "y": 2.5}', POINT)
    assert not outcome.is_error
    assert json.loads(outcome.content) == {"valid": True, "compliance": 100}


async def test_invalid_data_gets_its_errors_where_they_are_and_a_partial_score(
    executor: ToolExecutor,
) -> None:
    outcome = await validate(executor, '{"x": "one", "z": 3}', POINT)
    answer = json.loads(outcome.content)
    assert not outcome.is_error and answer["valid"] is False
    assert answer["errors"] == [
        {"path": "$", "message": "'y' is a required property"},
        {"path": "$", "message": "Additional properties are not allowed ('z' was unexpected)"},
        {"path": "$.x", "message": "'one' is not of type 'number'"},
    ]
    assert 0 < answer["compliance"] < 100
    fixed = json.loads((await validate(executor, '{"x": 1, "z": 3}', POINT)).content)
    assert answer["compliance"] < fixed["compliance"] < 100


async def test_text_that_is_not_json_scores_0(executor: ToolExecutor) -> None:
    for text in ('{"x": 1,', "NaN", "[" * 100_000):
        answer = json.loads((await validate(executor, text, POINT)).content)
        assert answer["valid"] is False and answer["compliance"] == 0
        assert answer["errors"][0]["path"] == "$"
        assert answer["errors"][0]["message"].startswith("not JSON: ")


async def test_the_errors_are_bounded(executor: ToolExecutor) -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    outcome = await validate(executor, json.dumps(["y" * 900] * 100), schema)
    answer = json.loads(outcome.content)
    assert len(answer["errors"]) == MAX_ERRORS and answer["more_errors"] == 100 - MAX_ERRORS
    assert all(len(error["message"]) <= 300 for error in answer["errors"])
    assert len(outcome.content) < 10_000


@pytest.mark.parametrize(
    ("schema", "sentence"),
    [
        (
            {"type": 5},
            "The schema cannot be used: not a valid JSON Schema: 5 is not valid under any of "
            "the given schemas.",
        ),
        (
            {"type": "string", "pattern": "(a)\\1"},
            "The schema cannot be used: not a valid JSON Schema: at pattern: the pattern "
            "'(a)\\\\1' cannot be used",
        ),
        (
            {"enum": ["x" * 20_000]},
            "The schema cannot be used: the schema is larger than 16384 bytes.",
        ),
    ],
)
async def test_a_bad_schema_is_refused_in_one_sentence(
    executor: ToolExecutor, schema: dict[str, Any], sentence: str
) -> None:
    outcome = await validate(executor, "{}", schema)
    assert outcome.is_error and outcome.content.startswith(sentence), outcome.content
    assert outcome.content.count("\n") == 0


async def test_oversized_data_is_refused(executor: ToolExecutor) -> None:
    data = json.dumps({"x": 1, "y": 2, "pad": "p" * MAX_DATA})
    outcome = await validate(executor, data, POINT)
    assert outcome.is_error
    assert outcome.content == (
        f"The data is {len(data)} characters long; at most {MAX_DATA} can be checked."
    )


def test_it_changes_nothing_and_needs_no_approval() -> None:
    (found,) = [t for t in builtin_tools() if t.name == "validate_json"]
    assert found.read_only and not found.sensitive and found.isolation == "process"
    settings = Settings(_env_file=None)
    policy = Policy(settings.policy, settings.allowed_users)
    arguments = {"data": "{}", "json_schema": {}}
    assert policy.decide(found, found.name, arguments) == "allow"
