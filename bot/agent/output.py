"""A run's final answer against its output schema: find the JSON in it, check it, and say
what to fix when it does not match.

Models wrap JSON in prose or in a fenced block however firmly they are asked not to, so
the answer is read leniently (the whole text, else its first fenced block, else the span
from its first brace or bracket to the last) and checked strictly. The errors handed back
to the model name where each problem is (`$.items[2].price`), a bounded number of them, so
a repair prompt stays small whatever the answer was. The schema's patterns are matched by
RE2, in linear time (`bot.vocabulary.json_schema`): a pattern such as `^(a+)+$` cannot stall
the worker. That module, with jsonschema, is imported at the first answer checked: most
processes never check one, and it costs each a twentieth of a second at start.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

MAX_ERRORS = 10
MAX_ERROR_TEXT = 300
MAX_ANSWER = 200_000  # characters of an answer worth parsing; a longer one is refused
FENCED = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Verdict:
    valid: bool
    value: Any = None
    errors: list[str] = field(default_factory=list)


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


def _path(error: ValidationError) -> str:
    where = "$"
    for part in error.absolute_path:
        where += f"[{part}]" if isinstance(part, int) else f".{part}"
    return where


def check(schema: dict[str, Any], text: str) -> Verdict:
    """The answer's JSON if it matches `schema`, else what is wrong with it."""
    if len(text) > MAX_ANSWER:
        return Verdict(False, errors=[f"the answer is longer than {MAX_ANSWER} characters"])
    from bot.vocabulary.json_schema import PatternError, validator  # noqa: PLC0415  (see above)

    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        found = validator(schema).iter_errors(value)
        try:
            problems = sorted(found, key=lambda e: [str(part) for part in e.absolute_path])
        except PatternError as exc:  # a schema kept from before its patterns were checked
            return Verdict(False, value, [str(exc)[:MAX_ERROR_TEXT]])
        if not problems:
            return Verdict(True, value)
        errors = [f"at {_path(e)}: {e.message}"[:MAX_ERROR_TEXT] for e in problems[:MAX_ERRORS]]
        return Verdict(False, value, errors)
    return Verdict(False, errors=["the answer is not JSON"])
