"""How every HTTP request's input is read, the API's and the platform webhooks' alike, and the
one shape of an error answer.

Every JSON body is read by `parse_json`: its size is bounded by the app's `client_max_size`
before it is read, and its nesting is counted on the raw bytes before it is parsed, so a
body of thousands of `[` is refused with a 400 instead of taking the parser's recursion down
with a 500.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from adapters.web.json_text import MAX_DEPTH, NOT_JSON, nesting, problems

# ASCII digits only: `str.isdigit` and `int` also take "²" and "٣".
WHOLE_NUMBER = re.compile(r"[0-9]{1,10}")
Body = TypeVar("Body", bound=BaseModel)


def error(code: int, message: str, **extra: Any) -> web.Response:
    """Every error is JSON with an `error` text a person can act on."""
    return web.json_response({"error": message, **extra}, status=code)


def refusal(
    exception: type[web.HTTPException],
    message: str,
    *,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> web.HTTPException:
    """An HTTP error to raise from deep in a handler, with the same JSON body as `error`."""
    body = json.dumps({"error": message, **extra})
    return exception(text=body, content_type="application/json", headers=headers)


def parse_json(raw: bytes | str, what: str = "the body") -> Any:
    """`raw` parsed, or a JSON 400 that says why not."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    depth = nesting(data)
    if depth is not None and depth > MAX_DEPTH:
        raise refusal(web.HTTPBadRequest, f"{what} nests deeper than {MAX_DEPTH} levels")
    try:
        if depth is None:
            raise ValueError("unclosed string")
        return json.loads(data)
    except ValueError:
        raise refusal(web.HTTPBadRequest, NOT_JSON.format(what=what)) from None


async def read_json(request: web.Request) -> Any:
    """The request's JSON body; more than the app's `client_max_size` is refused (413)."""
    return parse_json(await request.read())


async def read_body(request: web.Request, model: type[Body]) -> Body:
    """The request's JSON body as `model`, or a 422 listing each problem with its field."""
    return validated(await read_json(request), model)


def validated(data: Any, model: type[Body]) -> Body:
    """`data` as `model`, or a 422 listing each problem with its field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        said = problems(exc)
        raise refusal(web.HTTPUnprocessableEntity, "invalid request", problems=said) from None


def query_number(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    """The query parameter `name`, a whole number from `low` to `high`, or a 400 saying so."""
    raw = request.query.get(name, str(default))
    if not WHOLE_NUMBER.fullmatch(raw) or not low <= int(raw) <= high:
        raise refusal(web.HTTPBadRequest, f"{name} must be a whole number from {low} to {high}")
    return int(raw)
