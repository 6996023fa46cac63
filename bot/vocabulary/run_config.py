"""How one run is to be made, when it is not the chat's usual way: the agent mode, the model
and its temperature, the step cap, the tools offered, the output schema, retries, timeout,
reasoning, a token budget.

An API run carries one in its envelope (`POST /api/agent/run`), a scheduled task may keep
one, and a chat may set its mode (and a web chat its model, tools and output schema, kept as
JSON among the chat's options: `kept_tools`, `kept_schema`). Every field left out keeps the
deployment's setting.
The schema is checked here, when the run is asked for, so a run never starts with a schema
it cannot apply: it must be a valid JSON Schema, of bounded size and nesting, whose patterns
RE2 can match (`bot.vocabulary.json_schema`, imported with jsonschema at the first schema
checked: every process reads the settings, which use this module, and few check a schema).
Every field takes only its own JSON type (`true` is not a step count, `"2"` not a number of
repairs; a whole number is a temperature), so a caller's mistake is refused, naming the
field, rather than read as something it did not mean.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Mode = Literal["react", "plan_execute"]
MODES: tuple[Mode, ...] = ("react", "plan_execute")
# Whether the model thinks before it answers (extended thinking, reasoning effort), and how
# its thinking is shown: `hidden` thinks and shows nothing, `on` shows each thought whole
# (folded, above the answer), `stream` as it comes.
Reasoning = Literal["off", "hidden", "on", "stream"]
REASONINGS: tuple[Reasoning, ...] = ("off", "hidden", "on", "stream")
Effort = Literal["low", "medium", "high"]
MAX_SCHEMA_BYTES = 16 * 1024
MAX_SCHEMA_DEPTH = 12
MAX_TOOLS = 100


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_SCHEMA_DEPTH:
        return level  # deep enough to refuse; no need to walk the rest
    if isinstance(value, dict):
        return max((_depth(item, level + 1) for item in value.values()), default=level)
    if isinstance(value, list):
        return max((_depth(item, level + 1) for item in value), default=level)
    return level


class RetryConfig(BaseModel):
    """How often a model call that failed for a passing reason (overloaded, a rate limit, the
    network) is made again, in all, before the run gives up."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    attempts: int = Field(default=3, ge=1, le=10)


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    mode: Mode = "react"
    model: str | None = Field(default=None, min_length=1, max_length=200)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_steps: int | None = Field(default=None, ge=1, le=100)  # model calls, at most
    # None: all. Not strict, so a JSON array is a tuple; its items are strings all the same.
    tools: tuple[str, ...] | None = Field(default=None, max_length=MAX_TOOLS, strict=False)
    output_schema: dict[str, Any] | None = None
    repair_attempts: int = Field(default=2, ge=0, le=5)  # answers re-asked for the schema
    retry: RetryConfig | None = None
    timeout: float | None = Field(default=None, gt=0, le=3600)  # seconds of the run
    reasoning: Reasoning | None = None
    # Tokens the run may use in all (input and output of every model call): a helper's
    # share of its parent's budget (`delegate`). None: no cap but the person's day.
    token_budget: int | None = Field(default=None, ge=1)

    @field_validator("tools")
    @classmethod
    def _names(cls, tools: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if tools is not None and any(not name or len(name) > 128 for name in tools):
            raise ValueError("a tool name is 1 to 128 characters")
        return tools

    @field_validator("output_schema")
    @classmethod
    def _schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is None:
            return None
        if len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
            raise ValueError(f"the schema is larger than {MAX_SCHEMA_BYTES} bytes")
        if _depth(schema) > MAX_SCHEMA_DEPTH:
            raise ValueError(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        from jsonschema.exceptions import SchemaError  # noqa: PLC0415  (see the docstring)

        from bot.vocabulary.json_schema import check_schema  # noqa: PLC0415

        try:
            check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return schema

    @property
    def is_default(self) -> bool:
        return self == RunConfig()


def reasoning_of(value: str | None) -> Reasoning | None:
    """A stored choice of reasoning (a chat's option), if it is one."""
    return next((known for known in REASONINGS if known == value), None)


def kept_tools(value: str | None) -> tuple[str, ...] | None:
    """The tools a chat chose (its option, a JSON array of names), None for all. ValueError
    for a value that is not one, which nothing here writes."""
    if value is None:
        return None
    names = json.loads(value)
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError("the chat's tools are not a list of names")
    return tuple(names)


def kept_schema(value: str | None) -> dict[str, Any] | None:
    """The output schema a chat chose (its option, a JSON object), None for none; ValueError
    for a value that is not one."""
    if value is None:
        return None
    schema = json.loads(value)
    if not isinstance(schema, dict):
        raise ValueError("the chat's output schema is not a JSON object")
    return schema


def reasoning_in(chat_kind: str, chosen: Reasoning | None, deployment: Reasoning) -> Reasoning:
    """How a turn reasons: as its run or its chat chose, else as the deployment does; in a
    chat shared with others, unless the chat chose, thinking is not shown (everyone would
    read it, and it is long)."""
    if chosen is not None:
        return chosen
    if chat_kind != "private" and deployment in ("on", "stream"):
        return "hidden"
    return deployment
