"""`set_preferences`: a person asks the agent to answer in their language, to follow a
standing instruction, or to use another model, from now on and in every chat.

It is built with the store it writes to and the models people may choose
(`people_tools`), and runs on the worker's loop, whose database connections the store's are.
Values are checked by the same rules as the chat commands and the API
(`bot.people.preferences`); a model must be one the person may choose (`PARLEY_USER_MODELS`,
any for an admin) and one this deployment serves. The change applies from the person's next
message.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.people.preferences import MAX_INSTRUCTION, ModelChoices, clean
from bot.store.people import People
from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.vocabulary.preferences import Name, Preferences

CLEAR = "Empty text clears it; leave it out to keep it as it is."


def people_tools(people: People, models: ModelChoices) -> list[Tool]:
    """`set_preferences`, writing to `people` and choosing among `models`."""

    @tool(isolation="loop")
    async def set_preferences(
        ctx: ToolContext,
        language: Language = None,
        instruction: Instruction = None,
        model: Model = None,
    ) -> str:
        """Keep how the person wants to be answered, in every chat from their next message on:
        a language, a standing instruction, a model. Use it only when they ask for a lasting
        change ("always answer in Portuguese", "from now on keep it short"), never for a single
        answer. Tell them what is set now."""
        changes = _changes(language, instruction, model)
        if (wanted := changes.get("model")) is not None:
            try:
                changes["model"] = models.chosen(ctx.user, wanted)
            except ValueError as exc:
                raise ToolError(str(exc)) from None
        now = await people.set(ctx.user.id, changes)
        return "Preferences now: " + described(now)

    return [set_preferences]


Language = Annotated[
    str | None, Field(max_length=64, description=f"Language to answer in. {CLEAR}")
]
Instruction = Annotated[
    str | None,
    Field(
        max_length=MAX_INSTRUCTION,
        description=f"A standing instruction in their words ('answer briefly'). {CLEAR}",
    ),
]
Model = Annotated[
    str | None, Field(max_length=200, description=f"The model to answer with. {CLEAR}")
]


def _changes(
    language: str | None, instruction: str | None, model: str | None
) -> dict[Name, str | None]:
    """What the person asked to set, each value as kept (None clears it)."""
    given: list[tuple[Name, str | None]] = [
        ("language", language),
        ("instruction", instruction),
        ("model", model),
    ]
    changes: dict[Name, str | None] = {}
    for name, value in given:
        if value is None:
            continue
        try:
            changes[name] = clean(name, value)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
    if not changes:
        raise ToolError("Nothing to set: give a language, an instruction or a model.")
    return changes


def described(chosen: Preferences) -> str:
    parts = [
        f"language {chosen.language or 'not set'}",
        f"instruction {chosen.instruction!r}" if chosen.instruction else "no instruction",
        f"model {chosen.model or 'the default'}",
        f"time zone {chosen.timezone or 'the default'}",
    ]
    return "; ".join(parts) + "."
