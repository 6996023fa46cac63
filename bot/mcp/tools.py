"""An MCP server's tools as Parley `Tool`s named `{server}__{tool}`.

The server's input schema is given to the model as is, and the model's arguments are
checked against it with `jsonschema` before the call, so a wrong call is answered at once
with what is wrong, without a round trip. Its patterns are matched by RE2 in linear time
(`bot.vocabulary.json_schema.lenient`): arguments the model wrote never stall the worker. The result
is always `untrusted` (another program wrote it), and the call is never `read_only`: a
server's hints are its own claim, and a retried call could act twice. Whether a call needs
approval follows the server's `trust`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from fnmatch import fnmatchcase
from typing import Any, ClassVar

import mcp_types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import (
    SchemaError,
    ValidationError,
    best_match,
)
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from bot.mcp.config import TOOL_NAME_LIMIT, ServerConfig
from bot.tools.base import NAME, Tool, ToolContext
from bot.vocabulary.json_schema import lenient

log = logging.getLogger(__name__)
Call = Callable[[str, dict[str, Any]], Awaitable[str]]


class SchemaArguments(BaseModel):
    """Arguments of an MCP tool: any JSON object its input schema accepts."""

    model_config = ConfigDict(extra="allow")
    schema_validator: ClassVar[Validator]

    @model_validator(mode="before")
    @classmethod
    def _matches_schema(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise PydanticCustomError("arguments", "must be a JSON object")
        error = best_match(cls.schema_validator.iter_errors(data))
        if error is not None:
            raise PydanticCustomError("schema", "{problem}", {"problem": _described(error)})
        return data


def _described(error: ValidationError) -> str:
    where = ".".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def arguments_model(name: str, schema: dict[str, Any]) -> type[SchemaArguments]:
    """A model that validates against `schema`; raises SchemaError if it is no schema."""
    kind = validator_for(schema, default=Draft202012Validator)
    kind.check_schema(schema)
    checker = lenient(kind)(schema)
    return type(f"{name}_arguments", (SchemaArguments,), {"schema_validator": checker})


def offered(server: ServerConfig, tool: str) -> bool:
    """Whether the server's `tools` globs let `tool` through."""
    rules = server.tools
    return any(fnmatchcase(tool, glob) for glob in rules.allow) and not any(
        fnmatchcase(tool, glob) for glob in rules.deny
    )


def mcp_tools(
    server: str,
    config: ServerConfig,
    listed: Iterable[mcp_types.Tool],
    call: Call,
    *,
    timeout: float,
    skipped: set[str],
) -> dict[str, Tool]:
    """Parley's tools for the tools `listed` by `server`, by their Parley name. A tool whose
    name cannot be a tool name is skipped with a warning, once per name (`skipped`)."""
    tools: dict[str, Tool] = {}
    for spec in listed:
        if not offered(config, spec.name):
            continue
        name = f"{server}__{spec.name}"
        problem = _name_problem(name)
        try:
            arguments = arguments_model(name, spec.input_schema) if problem is None else None
        except SchemaError as exc:
            problem = f"its input schema is not valid JSON Schema ({exc.message})"
            arguments = None
        if arguments is None:
            if spec.name not in skipped:
                skipped.add(spec.name)
                log.warning("MCP server %s: tool %r skipped: %s", server, spec.name[:100], problem)
            continue
        tools[name] = _tool(server, config, spec, arguments, call, timeout)
    return tools


def _name_problem(name: str) -> str | None:
    if len(name) > TOOL_NAME_LIMIT:
        return f"{name[:100]} is longer than {TOOL_NAME_LIMIT} characters"
    if not NAME.match(name):
        return "its name may only use letters, digits, _ and -"
    return None


def _tool(
    server: str,
    config: ServerConfig,
    spec: mcp_types.Tool,
    arguments: type[SchemaArguments],
    call: Call,
    timeout: float,
) -> Tool:
    remote = spec.name

    async def call_remote(ctx: ToolContext, /, **values: Any) -> str:
        return await call(remote, values)

    about = spec.description or spec.title or remote
    return Tool(
        name=f"{server}__{remote}",
        description=f"{about}\n\n(A tool of the MCP server {server!r}.)",
        function=call_remote,
        arguments=arguments,
        sensitive=config.trust != "allow",
        read_only=False,
        timeout=timeout,
        isolation="loop",
        untrusted=True,
        input_schema=spec.input_schema,
    )
