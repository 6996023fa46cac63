"""How an HTTP session (a web-chat conversation) runs its turns: the model, the mode, the
reasoning, the tools its turns may offer and the schema their answers must follow, chosen
when it is made (`POST /api/sessions`) or later (`PATCH /api/sessions/{id}`) and shown by its
record (`GET /api/sessions/{id}`); and `GET /api/models`, the models a choice may name.

The model, the tools and the schema are checked by the rules an API run's config is
(`RunConfig`'s own fields, then `config_problems`), so a conversation never keeps a choice
no run could have: an unknown tool, a model the deployment does not serve, a schema that is
not a valid JSON Schema is a 422 naming its field, and nothing is kept. What is kept goes
with the chat's options, where `/mode` keeps a chat's mode (the model with the session's,
where `/model` keeps it): every turn reads them with its state (`TurnOptions`) and runs with
them as its config (`bot.session.turn.chat_config`), so the tools offered are restricted and
the answer is checked against the schema by the same code as an API run's.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, model_validator

from adapters.http.run_checks import config_problems
from adapters.web.input import refusal, validated
from adapters.web.services import Services
from bot.config.settings import Settings
from bot.llm.served import Served
from bot.mailbox.inbox import Mailbox
from bot.vocabulary.chats import chat_of
from bot.vocabulary.run_config import (
    MAX_TOOLS,
    Mode,
    Reasoning,
    RunConfig,
    kept_schema,
    kept_tools,
    reasoning_in,
    reasoning_of,
)

CHECKED = ("model", "tools", "output_schema")  # the fields a run's config checks too


class SessionIn(BaseModel):
    """A session's settings as it is made. Strict, like a run's config: `"tools": "x"` is
    refused, not read as something it did not say."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str | None = Field(default=None, min_length=1, max_length=200)
    mode: Mode | None = None  # how its turns run: react, or plan_execute (bot.agent.plan)
    reasoning: Reasoning | None = None  # whether the model thinks first, and shows it
    tools: list[str] | None = Field(default=None, max_length=MAX_TOOLS)  # None: every tool
    output_schema: dict[str, Any] | None = None  # what each answer must be: JSON Schema


class SessionChange(SessionIn):
    """Settings changed: only the fields given change, and a field given as null goes back
    to the deployment's (the default model, react, every tool, no schema)."""

    @model_validator(mode="after")
    def _something(self) -> SessionChange:
        if not self.model_fields_set:
            raise ValueError("give mode, reasoning, model, tools or output_schema")
        return self


async def checked(services: Services, body: SessionIn) -> RunConfig:
    """The body's model, tools and schema as an API run's config would hold them (the model
    named as its provider serves it), or a 422 naming each field no run could have."""
    given = {name: getattr(body, name) for name in CHECKED if getattr(body, name) is not None}
    config, problems = await config_problems(services, validated(given, RunConfig), under="")
    if problems:
        raise refusal(web.HTTPUnprocessableEntity, "invalid request", problems=problems)
    return config


async def keep(
    mailbox: Mailbox, session: str, body: SessionIn, config: RunConfig
) -> dict[str, Any]:
    """Keep the settings `body` gives (`config`: as `checked` found them), each field given
    and no other; the answer's fields, as kept (None: the deployment's)."""
    chat, given = chat_of(session), body.model_fields_set
    kept: dict[str, Any] = {}
    if "mode" in given:
        kept["mode"] = body.mode or "react"
        await mailbox.set_option(chat, "mode", None if body.mode == "react" else body.mode)
    if "reasoning" in given:
        kept["reasoning"] = body.reasoning
        await mailbox.set_option(chat, "reasoning", body.reasoning)
    if "model" in given:
        kept["model"] = config.model
        await mailbox.set_option(session, "model", config.model)
    if "tools" in given:
        kept["tools"] = None if config.tools is None else list(config.tools)
        await mailbox.set_option(chat, "tools", _json(kept["tools"]))
    if "output_schema" in given:
        kept["output_schema"] = config.output_schema
        await mailbox.set_option(chat, "output_schema", _json(config.output_schema))
    return kept


def made(settings: Settings, kept: dict[str, Any]) -> dict[str, Any]:
    """A new session's settings as `POST /api/sessions` answers them: the deployment's where
    its body chose none."""
    return {
        "model": kept.get("model") or settings.model,
        "mode": kept.get("mode") or "react",
        "reasoning": kept.get("reasoning") or settings.reasoning,
        "tools": kept.get("tools"),
        "output_schema": kept.get("output_schema"),
    }


async def shown(
    services: Services, session: str, chat_kind: str, recorded: str | None
) -> dict[str, Any]:
    """The settings the session's record shows, so a form opens as its turns run: the model
    chosen, else the one its `recorded` runs used; the mode; the reasoning as its turns
    apply it; the tools (None: all) and the schema (None: none)."""
    mailbox = services.mailbox
    chosen = await mailbox.option(session, "model")
    mode, reasoning, tools, schema = await mailbox.options(
        chat_of(session), "mode", "reasoning", "tools", "output_schema"
    )
    try:
        listed, checks = kept_tools(tools), kept_schema(schema)
    except ValueError:  # not as this module keeps them: the turns leave them out too
        listed, checks = None, None
    return {
        "model": chosen or recorded,
        "mode": mode or "react",
        "reasoning": reasoning_in(chat_kind, reasoning_of(reasoning), services.settings.reasoning),
        "tools": None if listed is None else list(listed),
        "output_schema": checks,
    }


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def mount(app: web.Application, services: Services) -> None:
    async def models(request: web.Request) -> web.Response:
        """The models a session (or a run) may name: the default, PARLEY_MODELS and the
        fallbacks by name, and the aliases; `listed` false: any other model of the
        deployment's APIs is served too."""
        served = Served.of(services.settings)
        answer = {"default": served.default, "models": served.names(),
                  "aliases": served.aliases, "listed": served.listed}  # fmt: skip
        return web.json_response(answer)

    app.router.add_get("/api/models", models)
