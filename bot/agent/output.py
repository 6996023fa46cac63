"""A run's final answer against its output schema: find the JSON in it, check it, and say
what to fix when it does not match.

Models wrap JSON in prose or in a fenced block however firmly they are asked not to, so
the answer is read leniently (the whole text, else its first fenced block, else the span
from its first brace or bracket to the last) and checked strictly. The errors handed back
to the model name where each problem is (`$.items[2].price`), a bounded number of them, so
a repair prompt stays small whatever the answer was. The schema's patterns are matched by
RE2, in linear time (`bot.vocabulary.json_schema`): a pattern such as `^(a+)+$` cannot stall
the worker. Each verdict carries the answer's compliance score, how close it came (100 for a
match, 0 for no JSON; `bot.vocabulary.compliance`). That module, with jsonschema, is
imported at the first answer checked: most processes never check one, and it costs each a
twentieth of a second at start.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from bot.vocabulary.compliance import Judged

MAX_ERRORS = 10
MAX_ERROR_TEXT = 300
MAX_ANSWER = 200_000  # characters of an answer worth parsing; a longer one is refused
FENCED = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Verdict:
    """`compliance`: how close the answer came to its schema, from 0 (no JSON) to 100 (valid)."""

    valid: bool
    value: Any = None
    errors: list[str] = field(default_factory=list)
    compliance: int = 0


def instruction(schema: dict[str, Any]) -> str:
    """What the user's message carries when the run has a schema."""
    return (
        "Give your final answer as JSON only, with no other text, matching this JSON Schema:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


def repair_prompt(errors: list[str]) -> str:
    listed = "\n".join(f"- {error}" for error in errors)
    return (
        "Your answer does not match the required JSON Schema:\n"
        f"{listed}\n"
        "Answer again with corrected JSON only, with no other text."
    )


def _candidates(text: str) -> list[str]:
    stripped = text.strip()
    found = [stripped]
    if fence := FENCED.search(text):
        found.append(fence.group(1).strip())
    starts = [i for i in (stripped.find("{"), stripped.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(stripped.rfind("}"), stripped.rfind("]"))
        if end > start:
            found.append(stripped[start : end + 1])
    return found


def _judged(schema: dict[str, Any], value: Any) -> Judged:
    """`bot.vocabulary.compliance.judge`, imported with jsonschema the first time (see above)."""
    module = importlib.import_module("bot.vocabulary.compliance")
    return cast("Judged", module.judge(schema, value, MAX_ERRORS, MAX_ERROR_TEXT))


def _said(place: str, message: str) -> str:
    """One problem as the repair prompt names it: where it is, unless it is the schema's."""
    return (f"at {place}: {message}" if place else message)[:MAX_ERROR_TEXT]


def check(schema: dict[str, Any], text: str) -> Verdict:
    """The answer's JSON if it matches `schema`, else what is wrong with it; its compliance
    score either way."""
    if len(text) > MAX_ANSWER:
        return Verdict(False, errors=[f"the answer is longer than {MAX_ANSWER} characters"])
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        judged = _judged(schema, value)
        errors = [_said(place, message) for place, message in judged.problems]
        return Verdict(judged.valid, value, errors, judged.compliance)
    return Verdict(False, errors=["the answer is not JSON"])
