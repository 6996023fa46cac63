"""`ask_user`'s arguments, read strictly: a bad call is a message the model can act on."""

from __future__ import annotations

from typing import Any

import pytest

from bot.tools.ask_user import parse
from bot.vocabulary.questions import Answer, Question, answered_text

GOOD = {"question": "Which colour?", "options": ["Red", "Blue"]}


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "questions: Field required"),
        ({"questions": []}, "questions: List should have at least 1 item"),
        ({"questions": [GOOD] * 4}, "questions: List should have at most 3 items"),
        ({"questions": [{"question": "?", "options": ["only"]}]}, "at least 2 items"),
        ({"questions": [{"question": "?", "options": list("abcdefghi")}]}, "at most 8 items"),
        ({"questions": [{"question": "?", "options": ["a", "A"]}]}, "options must differ"),
        ({"questions": [{"question": "?", "options": ["a", "x" * 61]}]}, "at most 60 characters"),
        ({"questions": [{"question": " ", "options": ["a", "b"]}]}, "at least 1 character"),
        ({"questions": [GOOD], "extra": 1}, "extra: Extra inputs are not permitted"),
        ({"questions": [{**GOOD, "multi": True}]}, "Extra inputs are not permitted"),
        ({"questions": "Which colour?"}, "questions: Input should be a valid list"),
    ],
)
def test_bad_calls_say_what_to_fix(arguments: dict[str, Any], problem: str) -> None:
    said = parse(arguments)
    assert isinstance(said, str)
    assert said.startswith("Not asked: the arguments are not valid") and problem in said


def test_a_good_call_gives_its_questions() -> None:
    assert parse({"questions": [GOOD]}) == [
        Question(question="Which colour?", options=["Red", "Blue"])
    ]


def test_the_model_reads_each_answer_and_which_were_in_the_persons_own_words() -> None:
    questions = [Question(**GOOD), Question(question="When?", options=["Now", "Later"])]
    said = answered_text(
        questions, [Answer(text="Blue"), Answer(text="at 5", other=True)], "Ann", complete=True
    )
    assert (
        said
        == 'Ann answered:\n1. "Which colour?" → "Blue"\n2. "When?" → in their own words: "at 5"'
    )
    partly = answered_text(questions, [Answer(text="Red")], "", complete=False)
    assert partly.endswith('2. "When?" → no answer')
