"""What a JSON body's text says before and after it is parsed, apart from any web framework:
how deep it nests, counted on the raw bytes (a body of thousands of `[` is refused instead
of taking the parser's recursion down), and the problems a model found in it, each after its
field. `adapters.web.input` answers with them; a child process that reads a large body
(`adapters.http.message_body`) uses them without loading the web server.
"""

from __future__ import annotations

import re
from itertools import accumulate

from pydantic import ValidationError

NOT_JSON = "{what} is not valid JSON"
MAX_DEPTH = 32  # far more than any request or platform update nests
# A closed JSON string, and text whose every string is closed; possessive, so matching never
# backtracks: one pass over the bytes, whatever they are.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_CLOSED = re.compile(rb'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL)
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256)]


def nesting(raw: bytes) -> int | None:
    """How deep arrays and objects nest in `raw`, counted without parsing it (brackets in
    strings do not count); None when a string is never closed, which no JSON text has."""
    if _CLOSED.fullmatch(raw) is None:
        return None
    skeleton = _STRING.sub(b"", raw).translate(None, _NOT_STRUCTURE)
    return max(accumulate(map(_STEP.__getitem__, skeleton)), default=0)


def problems(exc: ValidationError) -> list[str]:
    """Each problem pydantic found, after the field it is in."""
    return [f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()]
