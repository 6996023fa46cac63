"""JSON Schemas that come from outside (a run's output schema), checked without letting a
pattern take the worker hostage.

jsonschema evaluates `pattern`, `patternProperties` and the `regex` format with Python's
`re`, a backtracking engine: `^(a+)+$` against thirty characters runs for many seconds, and
`re` never releases the GIL while it matches, so a thread does not help; the whole worker
stops (other sessions' replies, its liveness key, its leases). Here every such pattern goes
through RE2 (google-re2), which matches in time linear in the text and lets other threads
run meanwhile. RE2 has no backreferences and no lookaround; a schema that uses them is
refused when it is checked (`check_schema`), before any run is queued, rather than run on
`re` after all. Otherwise the JSON Schema semantics are jsonschema's (draft 2020-12).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is reported to the caller, not to stderr


class PatternError(ValueError):
    """A pattern RE2 cannot run: a syntax error, or a feature only backtracking engines have."""


def compiled(pattern: str) -> Any:
    """The pattern compiled by RE2 (cached by re2 itself), or PatternError saying why not."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(
            f"the pattern {pattern!r} cannot be used ({reason}); patterns are matched in "
            "linear time, without backreferences or lookaround"
        ) from None


def _searched(pattern: str, text: str, *, lenient: bool = False) -> bool:
    """Whether RE2 finds `pattern` in `text`; a pattern RE2 cannot run is found when
    `lenient` (left to whoever checks the input after us), else PatternError."""
    try:
        return compiled(pattern).search(text) is not None
    except PatternError:
        if lenient:
            return True
        raise


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: dict[str, Any],
    *, lenient: bool = False,
) -> Iterator[ValidationError]:  # fmt: skip
    if validator.is_type(instance, "string") and not _searched(pattern, instance, lenient=lenient):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any],
    *, lenient: bool = False,
) -> Iterator[ValidationError]:  # fmt: skip
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _searched(pattern, key, lenient=lenient):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        compiled(instance)
    return True


FORMATS = FormatChecker(Draft202012Validator.FORMAT_CHECKER.checkers)
FORMATS.checks("regex", raises=PatternError)(_is_regex)

_extend: Callable[..., type[Validator]] = validators.extend  # untyped in jsonschema
SafeValidator = _extend(
    Draft202012Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties},
    format_checker=FORMATS,
)


def check_schema(schema: dict[str, Any]) -> None:
    """Raise SchemaError unless `schema` is a valid draft 2020-12 schema whose patterns RE2
    can run; the message says what is wrong."""
    try:
        Draft202012Validator.check_schema(schema, format_checker=FORMATS)
    except SchemaError as exc:
        if isinstance(exc.cause, PatternError):
            where = "/".join(str(part) for part in exc.absolute_path)
            raise SchemaError(f"at {where or '/'}: {exc.cause}") from None
        raise


@functools.cache
def lenient(kind: type[Validator]) -> type[Validator]:
    """`kind` (any draft) with its patterns matched by RE2, for schemas whose own program
    checks the input again (an MCP server's): a pattern RE2 cannot run is left to it."""
    return _extend(
        kind,
        {
            "pattern": functools.partial(_pattern, lenient=True),
            "patternProperties": functools.partial(_pattern_properties, lenient=True),
        },
    )


def validator(schema: dict[str, Any]) -> Validator:
    """A validator for a schema `check_schema` accepted."""
    return SafeValidator(schema)
