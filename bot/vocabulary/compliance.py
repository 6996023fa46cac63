"""How close a JSON value comes to its JSON Schema: the verdict, the errors where they are, and
a compliance score from 0 to 100.

Valid or not says whether an answer can be used; the score says how far an unusable one was,
so that models, prompts and repairs can be compared by more than a pass rate. It is the share
of the schema's checks the value passes, 100 × passed / made, the checks counted as the
schema applies them to the value:

- each assertion (`type`, `enum`, `const`, `minimum`, `maxLength`, `pattern`, `minItems`,
  `uniqueItems`, `minProperties`, `dependentRequired`, …) is one check at each place of the
  value it applies to, passed when jsonschema finds nothing wrong there: one bad item of ten
  costs a tenth of what ten cost. An assertion about another type than the value's
  (`minLength` on a number) makes no check, and neither does `format`, which jsonschema
  asserts only when asked to;
- `required` makes one check per name;
- what only leads to other schemas (`properties`, `patternProperties`, `prefixItems`,
  `additionalProperties` and `items` with a schema, `allOf`, a `$ref` to a part of this
  schema) makes no check of its own: the schemas it leads to make theirs where they apply;
  `additionalProperties: false` (`items: false`) makes one check when nothing is extra, else
  one failed check per extra property (item);
- what chooses between schemas or judges a value whole (`anyOf`, `oneOf`, `not`, `if`,
  `contains`, `dependentSchemas`, `propertyNames`, `unevaluated…`, any other reference) is one
  check: the branches not taken say nothing of how close the value came;
- a missing required property fails its `required` check and every check its schema makes of
  the smallest value it asks for (its assertions, and its own required properties the same
  way), and so does a value of the wrong `type`: otherwise `{}` would pass most of a schema,
  and `"many"` where an object belongs would lose less than an empty object.

So a valid value scores 100 and nothing else does (an invalid one that would round to 100
is 99); no JSON at all scores 0, and so does a value of the wrong type for the whole schema.
Fixing an error (a type put right, a property supplied, a bound met, an extra removed) turns
failed checks into passed ones, or drops a failed one, and raises the score. The walk is
bounded like the check itself: it visits at most MAX_VISITS schemas and goes MAX_DEPTH levels
deep (references included); past either, what is left of the value is one check, passed when
jsonschema finds it valid, so the work stays a small multiple of one validation.

This module imports jsonschema, so it is imported where a schema is first applied
(`importlib.import_module`), never by a module every process loads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from bot.vocabulary.json_schema import PatternError, compiled, validator

MAX_VISITS = 20_000  # schemas applied to a part of the value, or weighed, in one score
MAX_DEPTH = 32  # levels of the value, and references followed, in one walk
ENDLESS = "the schema's references lead to each other without end, or the value nests too deeply"
# Assertions that only say something about values of one type.
APPLIES_TO = {
    "minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
    "minimum": "number", "maximum": "number", "exclusiveMinimum": "number",
    "exclusiveMaximum": "number", "multipleOf": "number",
    "minItems": "array", "maxItems": "array", "uniqueItems": "array", "contains": "array",
    "unevaluatedItems": "array",
    "minProperties": "object", "maxProperties": "object", "dependentRequired": "object",
    "dependentSchemas": "object", "propertyNames": "object", "unevaluatedProperties": "object",
}  # fmt: skip
# What leads to other schemas and makes no check of its own (see the module's docstring).
LEADS = ("properties", "patternProperties", "additionalProperties", "prefixItems", "items")


@dataclass(frozen=True)
class Judged:
    """A value against a schema: `problems` are the first errors as (place, message), the
    place like `$.items[2].price` ("" for a problem of the schema itself), each cut to its
    bound; `more` counts the errors beyond."""

    valid: bool
    compliance: int
    problems: list[tuple[str, str]] = field(default_factory=list)
    more: int = 0


def where(error: ValidationError) -> str:
    """The place of an error in the value, as `$.items[2].price`."""
    place = "$"
    for part in error.absolute_path:
        place += f"[{part}]" if isinstance(part, int) else f".{part}"
    return place


def judge(schema: dict[str, Any], value: Any, limit: int, size: int) -> Judged:
    """`value` against `schema` (which `json_schema.check_schema` accepted): the verdict, at
    most `limit` errors ordered by place, their places and messages cut to `size` characters,
    and the compliance score. What stops the check itself (a schema kept from before its
    patterns were checked, whose pattern RE2 cannot run; references without end) is one
    problem, at no place ("")."""
    try:
        found = sorted(
            validator(schema).iter_errors(value),
            key=lambda e: [str(part) for part in e.absolute_path],
        )
    except PatternError as exc:
        return Judged(False, 0, [("", str(exc)[:size])])
    except RecursionError:
        return Judged(False, 0, [("", ENDLESS)])
    if not found:
        return Judged(True, 100)
    problems = [(where(error)[:size], error.message[:size]) for error in found[:limit]]
    return Judged(False, _partial(schema, value), problems, len(found) - len(problems))


def score(schema: dict[str, Any], value: Any) -> int:
    """The compliance score of `value` against `schema`, from 0 to 100 (the module's doc)."""
    try:
        if validator(schema).is_valid(value):
            return 100
    except (PatternError, RecursionError):
        return 0
    return _partial(schema, value)


def _partial(schema: dict[str, Any], value: Any) -> int:
    """The score of a value known to be invalid: at most 99."""
    walk = _Walk(schema)
    try:
        walk.apply(schema, value, 0)
    except (PatternError, RecursionError):  # a pattern RE2 cannot run; references without end
        return 0
    if walk.made == 0:
        return 0
    return min(99, round(100 * walk.passed / walk.made))


def _has_ids(schema: Any, root: bool = True) -> bool:
    """Whether a part of the schema names a resource of its own, against which references
    resolve differently from the root: then references are not followed by hand."""
    if isinstance(schema, dict):
        if not root and ("$id" in schema or "$dynamicAnchor" in schema):
            return True
        return any(_has_ids(part, False) for part in schema.values())
    if isinstance(schema, list):
        return any(_has_ids(part, False) for part in schema)
    return False


class _Walk:
    """One score's count: the checks made and passed, and the visits left."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.validator: Validator = validator(root)
        self.checks: Mapping[str, Callable[..., Any]] = self.validator.VALIDATORS
        self.follows = not _has_ids(root)
        self.asserts_formats = getattr(self.validator, "format_checker", None) is not None
        self.made = self.passed = 0
        self.visits = MAX_VISITS
        self._at: dict[int, Validator] = {}  # a validator per part of the schema, by its id

    def count(self, passed: bool, checks: int = 1) -> None:
        self.made += checks
        self.passed += checks if passed else 0

    def apply(self, schema: Any, value: Any, depth: int) -> None:
        """Count the checks `schema` makes of `value`."""
        if isinstance(schema, bool):
            if not schema:
                self.count(False)
            return
        if not isinstance(schema, dict):
            return
        self.visits -= 1
        if self.visits < 0 or depth > MAX_DEPTH:
            self.count(self._here(schema).is_valid(value))
            return
        if "type" in schema and not self._holds("type", schema, value):
            self.count(False, max(1, self.weight(schema, depth)))
            return
        for keyword in schema:
            self._keyword(keyword, schema, value, depth)

    def _keyword(self, keyword: str, schema: dict[str, Any], value: Any, depth: int) -> None:
        argument = schema[keyword]
        if keyword == "type":  # `apply` found it holds
            self.count(True)
        elif keyword in LEADS:
            self._lead(keyword, schema, value, depth)
        elif keyword == "allOf":
            for part in argument:
                self.apply(part, value, depth + 1)
        elif keyword == "required":
            if self.validator.is_type(value, "object"):
                self._required(argument, schema.get("properties", {}), value, depth)
        elif keyword == "$ref" and (target := self._target(argument)) is not None:
            self.apply(target, value, depth + 1)
        elif keyword in self.checks and self._applies(keyword, value):
            self.count(self._holds(keyword, schema, value))

    def _lead(self, keyword: str, schema: dict[str, Any], value: Any, depth: int) -> None:
        """Apply the schemas `keyword` leads to, to the parts of `value` they are for."""
        argument = schema[keyword]
        if self.validator.is_type(value, "object"):
            if keyword == "properties":
                for name, part in argument.items():
                    if name in value:
                        self.apply(part, value[name], depth + 1)
            elif keyword == "patternProperties":
                for pattern, part in argument.items():
                    for key in [key for key in value if compiled(pattern).search(key)]:
                        self.apply(part, value[key], depth + 1)
            elif keyword == "additionalProperties":
                self._rest(argument, [value[key] for key in _extras(schema, value)], depth)
        elif self.validator.is_type(value, "array"):
            if keyword == "prefixItems":
                for part, item in zip(argument, value, strict=False):
                    self.apply(part, item, depth + 1)
            elif keyword == "items":
                self._rest(argument, value[len(schema.get("prefixItems", ())) :], depth)

    def _rest(self, schema: Any, values: list[Any], depth: int) -> None:
        """The properties or items no other keyword spoke for, against `schema`."""
        if schema is False:
            self.count(not values, max(1, len(values)))
        else:
            for item in values:
                self.apply(schema, item, depth + 1)

    def _required(
        self, names: list[str], properties: dict[str, Any], value: dict[str, Any], depth: int
    ) -> None:
        for name in names:
            if name in value:
                self.count(True)
            else:
                self.count(False, 1 + self.weight(properties.get(name, True), depth + 1))

    def weight(self, schema: Any, depth: int) -> int:
        """The checks `schema` makes of the smallest value it asks for: those a value that is
        missing, or of the wrong type, fails."""
        if isinstance(schema, bool) or not isinstance(schema, dict):
            return int(schema is False)
        self.visits -= 1
        if self.visits < 0 or depth > MAX_DEPTH:
            return 1
        total = 0
        for keyword, argument in schema.items():
            if keyword == "required":
                parts = schema.get("properties", {})
                total += sum(1 + self.weight(parts.get(name, True), depth + 1) for name in argument)
            elif keyword == "allOf":
                total += sum(self.weight(part, depth + 1) for part in argument)
            elif keyword == "$ref" and (target := self._target(argument)) is not None:
                total += self.weight(target, depth + 1)
            elif keyword in LEADS:
                total += argument is False and keyword in ("additionalProperties", "items")
            elif keyword in self.checks and (keyword != "format" or self.asserts_formats):
                total += 1
        return total

    def _applies(self, keyword: str, value: Any) -> bool:
        if keyword == "format" and not self.asserts_formats:
            return False
        kind = APPLIES_TO.get(keyword)
        return kind is None or bool(self.validator.is_type(value, kind))

    def _holds(self, keyword: str, schema: dict[str, Any], value: Any) -> bool:
        """Whether jsonschema finds nothing wrong with `value` under `keyword` alone, read
        in its schema (some keywords read their neighbours: `contains` its bounds)."""
        errors = self.checks[keyword](self._here(schema), schema[keyword], value, schema)
        return errors is None or next(iter(errors), None) is None

    def _here(self, schema: dict[str, Any]) -> Validator:
        """The validator of a part of the schema, made once per walk."""
        here = self._at.get(id(schema))
        if here is None:
            here = self._at[id(schema)] = self.validator.evolve(schema=schema)
        return here

    def _target(self, reference: Any) -> Any:
        """The part of this schema a `#/…` reference names, else None (one check)."""
        if not self.follows or not isinstance(reference, str) or not reference.startswith("#"):
            return None
        if reference == "#":
            return self.root
        if not reference.startswith("#/"):
            return None
        found: Any = self.root
        for token in reference[2:].split("/"):
            step = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(found, dict) and step in found:
                found = found[step]
            elif isinstance(found, list) and step.isdigit() and int(step) < len(found):
                found = found[int(step)]
            else:
                return None
        return found if isinstance(found, dict | bool) else None


def _extras(schema: dict[str, Any], value: dict[str, Any]) -> list[str]:
    """The properties of `value` neither `properties` nor `patternProperties` speak for."""
    named = schema.get("properties", {})
    patterns = [compiled(pattern) for pattern in schema.get("patternProperties", {})]
    return [
        key
        for key in value
        if key not in named and not any(pattern.search(key) for pattern in patterns)
    ]
