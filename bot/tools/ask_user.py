"""`ask_user`: the model asks the person one to three questions, each with a few options.

The call never runs as a function in a session: the tool step recognises it, checks its
arguments here (strictly: a bad call is a tool error the model can correct), and suspends
the turn as for an approval, without holding a worker. The person's answer comes back as a
decision and becomes the call's result (`bot.vocabulary.questions.answered_text`). Where no
person can answer (an MCP client), calling it says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.vocabulary.questions import MAX_QUESTIONS, Question

NAME = "ask_user"
NO_ANSWER = (
    "No answer: the person did not answer before the question expired. This is not a "
    "refusal; go on without the answer, or ask again later."
)
SET_ASIDE = (
    "No answer: a new message came before the question was answered; it follows. "
    "Read it, and ask again if you still need to."
)
NOT_HERE = "ask_user needs a person to answer in a chat; nobody can answer it here."


class Questions(BaseModel):
    """The arguments of an `ask_user` call."""

    model_config = ConfigDict(extra="forbid")

    questions: list[Question] = Field(min_length=1, max_length=MAX_QUESTIONS)


def parse(arguments: Mapping[str, Any]) -> list[Question] | str:
    """The questions of a call, or what is wrong with its arguments, for the model."""
    try:
        return Questions.model_validate(dict(arguments)).questions
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
            for error in exc.errors(include_url=False)[:5]
        )
        return f"Not asked: the arguments are not valid ({problems}). Fix them and call again."


@tool(name=NAME)
async def ask_user(
    ctx: ToolContext,
    questions: Annotated[
        list[Question],
        Field(
            min_length=1,
            max_length=MAX_QUESTIONS,
            description=(
                "1 to 3 questions; each a short `question` and 2 to 8 short `options` "
                "(at most 60 characters each). The person may also answer in their own words."
            ),
        ),
    ],
) -> str:
    """Ask the person you are helping one to three multiple-choice questions, and wait for
    their answers. Use it when you cannot go on well without their choice; the answers come
    back as this call's result (they may answer in their own words, or not in time)."""
    raise ToolError(NOT_HERE)


def ask_user_tool() -> Tool:
    return ask_user
