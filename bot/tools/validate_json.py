"""`validate_json`: JSON checked against a JSON Schema the model gives, before it relies on it
(a draft of a structured answer, a file it read, another tool's output): valid, or what is
wrong where, and how close it came (the compliance score, `bot.vocabulary.compliance`).

It changes nothing, so it never waits for an approval. A schema is refused as a run's output
schema is (`RunConfig`: at most 16 KB and 12 levels deep, valid under draft 2020-12, patterns
RE2 can run), so one rule holds wherever a schema comes from, and the model reads why in one
sentence. The data is JSON text of at most MAX_DATA characters; text that is not JSON is an
answer (invalid, compliance 0), not a failure, since that is what a check is for. The answer
is bounded whatever the data: at most MAX_ERRORS errors, each its place and a message cut to
MAX_MESSAGE characters, and how many more there were. It runs in a helper process
(`isolation="process"`): checking a large value is CPU work that holds the GIL, and a helper
can be killed at the call's timeout. jsonschema is imported there at the first call, never by
the worker that only lists the tool.
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import Field, ValidationError

from bot.tools.base import ToolContext, ToolError, tool
from bot.vocabulary.run_config import RunConfig

if TYPE_CHECKING:
    from bot.vocabulary.compliance import Judged

MAX_DATA = 100_000  # characters of JSON text checked in one call
MAX_ERRORS = 20
MAX_MESSAGE = 300  # characters of one error's message


def schema_refusal(schema: dict[str, Any]) -> str | None:
    """Why `schema` cannot be used, in one sentence, as a run's output schema would be
    refused (`RunConfig`); None when it can."""
    try:
        RunConfig(output_schema=schema)
    except ValidationError as exc:
        first = exc.errors()[0]
        reason = str(first.get("ctx", {}).get("error", first["msg"]))
        return f"The schema cannot be used: {reason.rstrip('.')}."
    return None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not a JSON number")


def _parsed(data: str) -> tuple[Any, str | None]:
    """The value `data` holds, or why it holds none."""
    try:
        return json.loads(data, parse_constant=_not_json), None
    except RecursionError:
        return None, "it nests too deeply"
    except ValueError as exc:  # json.JSONDecodeError among them
        return None, str(exc)


def _judged(schema: dict[str, Any], value: Any) -> Judged:
    module = importlib.import_module("bot.vocabulary.compliance")  # jsonschema: see above
    return cast("Judged", module.judge(schema, value, MAX_ERRORS, MAX_MESSAGE))


@tool(read_only=True, isolation="process")
def validate_json(
    ctx: ToolContext,
    data: Annotated[str, Field(description="The JSON to check, as text")],
    json_schema: Annotated[
        dict[str, Any], Field(description="The JSON Schema (draft 2020-12) it must match")
    ],
) -> dict[str, Any]:
    """Check JSON against a JSON Schema before relying on it: whether it is valid, what is
    wrong where (the first 20 errors), and a compliance score from 0 (not JSON) to 100
    (valid). It changes nothing."""
    if len(data) > MAX_DATA:
        raise ToolError(
            f"The data is {len(data)} characters long; at most {MAX_DATA} can be checked."
        )
    if (refused := schema_refusal(json_schema)) is not None:
        raise ToolError(refused)
    value, unreadable = _parsed(data)
    if unreadable is not None:
        problem = {"path": "$", "message": f"not JSON: {unreadable}"[:MAX_MESSAGE]}
        return {"valid": False, "compliance": 0, "errors": [problem]}
    judged = _judged(json_schema, value)
    if judged.valid:
        return {"valid": True, "compliance": 100}
    errors = [{"path": place, "message": message} for place, message in judged.problems]
    answer: dict[str, Any] = {"valid": False, "compliance": judged.compliance, "errors": errors}
    if judged.more:
        answer["more_errors"] = judged.more
    return answer
