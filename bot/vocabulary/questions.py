"""Questions the agent asks a person (`ask_user`), their answers, and what the model reads.

A question is a short text with a few options; a person answers each with one of them or in
their own words ("other"). The bounds are the chat platforms': a Telegram button's text and a
Slack button's label stay short, and three questions of eight options fit one message there.
The same records travel in the `ConfirmationRequired` event, the confirmation in Redis and
the decision that resumes the turn, so every surface shows and answers the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

MAX_QUESTIONS = 3
MAX_OPTIONS = 8
QUESTION_CHARS = 300
OPTION_CHARS = 60
ANSWER_CHARS = 2_000  # an "other" answer typed in a chat, as the model reads it

Label = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=OPTION_CHARS)
]


class Question(BaseModel):
    """One question with its options, as the model asked it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=QUESTION_CHARS)
    ]
    options: list[Label] = Field(min_length=2, max_length=MAX_OPTIONS)

    @field_validator("options")
    @classmethod
    def _distinct(cls, options: list[str]) -> list[str]:
        if len({option.casefold() for option in options}) != len(options):
            raise ValueError("options must differ from each other")
        return options


class Answer(BaseModel):
    """One question's answer: the option chosen, or (`other`) the person's own words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=ANSWER_CHARS)
    other: bool = False


def answered_text(
    questions: Sequence[Question], answers: Sequence[Answer], by: str, *, complete: bool
) -> str:
    """What the model reads once a person answered: each question with its answer; a
    question left without one (the time ran out after some were answered) says so."""
    lines = [f"{by or 'The person'} answered:" if complete else "Partly answered:"]
    for index, question in enumerate(questions):
        if index < len(answers):
            answer = answers[index]
            said = f'in their own words: "{answer.text}"' if answer.other else f'"{answer.text}"'
        else:
            said = "no answer"
        lines.append(f'{index + 1}. "{question.question}" → {said}')
    return "\n".join(lines)
