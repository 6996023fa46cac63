"""`ask_user` over the HTTP API: what a session waits for, and the answers to its questions.

A client learns of a question from the `confirmation_required` event (with `questions`) on
the session's stream, or asks `GET /api/sessions/{id}/confirmations` for what waits now (a
client that joins late, or reloads). It answers every question at once
(`POST /api/confirmations/{id}` with `answers`: per question `{"option": n}` or
`{"other": "text"}`); the web chat shows the questions together with a field for the other
answer, which a page can do and a chat's buttons cannot. As an approval, a question is its
asker's to answer: the API's caller answers only what it asked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.redis.confirmations import Confirmation, Confirmations, Outcome
from bot.vocabulary.envelope import Sender
from bot.vocabulary.questions import ANSWER_CHARS, MAX_OPTIONS, Answer


class AnswerIn(BaseModel):
    """One question's answer: the number of an option (from 0), or the person's own words;
    read strictly (`true` or `"1"` is no option number)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    option: int | None = Field(default=None, ge=0, lt=MAX_OPTIONS)
    other: str | None = Field(default=None, min_length=1, max_length=ANSWER_CHARS)

    @model_validator(mode="after")
    def _one(self) -> AnswerIn:
        if (self.option is None) == (self.other is None):
            raise ValueError("give option or other, not both")
        return self


Answers = list[AnswerIn]


def chosen(confirmation: Confirmation, given: Answers) -> list[Answer] | str:
    """The answers as the record keeps them, or what is wrong with them."""
    questions = confirmation.questions
    if len(given) != len(questions):
        return f"answers: give one for each of the {len(questions)} questions"
    answers: list[Answer] = []
    for index, (question, answer) in enumerate(zip(questions, given, strict=True)):
        if answer.other is not None:
            answers.append(Answer(text=answer.other, other=True))
        elif answer.option is not None and answer.option < len(question.options):
            answers.append(Answer(text=question.options[answer.option]))
        else:
            return f"answers.{index}.option: question {index} has {len(question.options)} options"
    return answers


async def answer(
    confirmations: Confirmations, confirmation: Confirmation, answers: list[Answer], by: Sender
) -> Outcome:
    """Answer every question of `confirmation` at once, as its asker (whom the API knows
    by no name: the model reads that "the person" answered)."""
    return await confirmations.answer(confirmation.id, answers, by.id, start=0, is_admin=False)


def listed(confirmation: Confirmation) -> dict[str, Any]:
    """A waiting confirmation as the API lists it."""
    return confirmation.model_dump(
        mode="json",
        include={"id", "calls", "expires_at", "can_remember", "questions", "answers", "status"},
    )
