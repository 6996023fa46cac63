"""The compliance score: 100 for a valid value and for nothing else, 0 for no JSON, in between
for a value partly right; fixing an error raises it; the work stays bounded whatever the
schema and the value."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bot.agent.output import check
from bot.vocabulary import compliance
from bot.vocabulary.compliance import judge, score

ORDER = {
    "type": "object",
    "required": ["customer", "items"],
    "properties": {
        "customer": {"type": "string", "minLength": 1},
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["sku", "qty"],
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z]{3}$"},
                    "qty": {"type": "integer", "minimum": 1},
                },
                "additionalProperties": False,
            },
        },
    },
}
# One answer made right one error at a time: each step fixes one thing and nothing else.
FIXED_STEP_BY_STEP: list[Any] = [
    [],  # the wrong type for the whole schema
    {},  # the right type; everything required missing
    {"customer": ""},
    {"customer": "Ann"},
    {"customer": "Ann", "items": [{"sku": "abc", "qty": "2", "note": "x"}]},
    {"customer": "Ann", "items": [{"sku": "abc", "qty": "2"}]},
    {"customer": "Ann", "items": [{"sku": "abc", "qty": 0}]},
    {"customer": "Ann", "items": [{"sku": "ABC", "qty": 0}]},
    {"customer": "Ann", "items": [{"sku": "ABC", "qty": 2}]},
]


def test_a_valid_value_scores_100_and_no_json_scores_0() -> None:
    good = '{"customer": "Ann", "items": [{"sku": "ABC", "qty": 2}]}'
    assert check(ORDER, good).valid and check(ORDER, good).compliance == 100
    for text in ("Sorry, I cannot do that.", '{"customer": "Ann",', "x" * 300_000):
        verdict = check(ORDER, text)
        assert not verdict.valid and verdict.compliance == 0, text[:40]
    assert score(ORDER, FIXED_STEP_BY_STEP[0]) == 0  # JSON, but nothing it could be judged by


def test_a_partly_right_value_scores_in_between() -> None:
    """Of the fifteen checks made, two fail (the sku's pattern, the qty's minimum): 13 of 15."""
    partly = {"customer": "Ann", "items": [{"sku": "abc", "qty": 0}]}
    verdict = check(ORDER, f"Here it is: {partly}".replace("'", '"'))
    assert not verdict.valid and verdict.value == partly
    assert verdict.compliance == score(ORDER, partly) == 87
    assert verdict.errors == [
        "at $.items[0].qty: 0 is less than the minimum of 1",
        "at $.items[0].sku: 'abc' does not match '^[A-Z]{3}$'",
    ]


def test_fixing_an_error_raises_the_score() -> None:
    scores = [score(ORDER, value) for value in FIXED_STEP_BY_STEP]
    assert scores[0] == 0 and scores[-1] == 100
    assert all(0 < s < 100 for s in scores[1:-1]), scores
    assert scores == sorted(set(scores)), scores  # strictly rising


def test_one_bad_item_costs_less_than_many() -> None:
    item, bad = {"sku": "ABC", "qty": 1}, {"sku": "ABC", "qty": "one"}
    one = score(ORDER, {"customer": "Ann", "items": [bad] + [item] * 9})
    five = score(ORDER, {"customer": "Ann", "items": [bad] * 5 + [item] * 5})
    ten = score(ORDER, {"customer": "Ann", "items": [bad] * 10})
    assert 100 > one > five > ten > 0


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        # A branch not taken says nothing: `anyOf` is one check, failed here, of two.
        ({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {}, 50),
        # A reference inside the schema leads to its checks: 2 of the 3 made pass.
        (
            {
                "$defs": {"n": {"type": "integer", "minimum": 0}},
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/n"}},
            },
            {"a": -1},
            67,
        ),
        # An assertion about another type makes no check: `minLength` on a number.
        ({"type": "string", "minLength": 2}, 5, 0),
        ({"minLength": 2, "enum": ["ab", 5]}, 6, 0),
        # Extras against `additionalProperties: false`: one failed check each.
        ({"type": "object", "additionalProperties": False}, {"x": 1, "y": 2}, 33),
    ],
)
def test_how_the_checks_are_counted(schema: dict[str, Any], value: Any, expected: int) -> None:
    assert score(schema, value) == expected


def test_an_invalid_value_never_scores_100() -> None:
    """99 passed checks of 100 would round to 100."""
    schema = {"type": "array", "items": {"type": "integer"}}
    assert score(schema, [*range(300), "x"]) == 99


def test_errors_are_bounded_in_number_and_size() -> None:
    long = "y" * 1000
    judged = judge({"type": "array", "items": {"type": "integer"}}, [long] * 50, 10, 300)
    assert not judged.valid and len(judged.problems) == 10 and judged.more == 40
    assert all(len(place) <= 300 and len(message) <= 300 for place, message in judged.problems)
    assert judged.problems[0][0] == "$[0]"


def test_references_without_end_are_one_problem_not_a_crash() -> None:
    judged = judge({"$ref": "#"}, 5, 10, 300)
    assert (judged.valid, judged.compliance) == (False, 0)
    assert judged.problems == [("", compliance.ENDLESS)]


def test_the_work_is_bounded_for_a_large_answer_and_a_recursive_schema() -> None:
    """About 8,000 items (an answer near its 200,000 characters), each wrong: the walk stops
    at its visits and counts the rest one check an item; a schema that refers to itself is
    walked as deep as the value, no deeper than MAX_DEPTH."""
    items = [{"sku": "abc", "qty": 0}] * 8000
    started = time.process_time()
    big = score(ORDER, {"customer": "Ann", "items": items})
    assert 0 < big < 100 and time.process_time() - started < 5
    node: dict[str, Any] = {"type": "object", "properties": {"next": {"$ref": "#"}, "v": {}}}
    node["properties"]["v"] = {"type": "integer"}
    chain: dict[str, Any] = {"v": 1}
    for depth in range(200):
        chain = {"v": "x" if depth == 100 else 1, "next": chain}
    assert 90 < score(node, chain) < 100
