"""OpenAI's `POST /v1/embeddings`, as the fake serves it.

Parley's tests need vectors that behave like a model's without a model: the same text always
gets the same vector, texts that share words are near, and other texts are far. So a text's
vector is the normalised sum of one pseudo-random unit vector per lower-cased word (each
seeded by the word's hash), unless the test scripted an exact vector for it (`script`).

The request is checked as OpenAI checks it, so code that passes here passes there: a JSON
object with `model` (a string) and `input` (a non-empty string, or a list of at most 2048
non-empty strings), and optionally `encoding_format` ("float" or "base64"; the SDK sends
"base64" when its caller gives none), `dimensions` (1 up to the model's `dimension`; the
vector is cut and normalised again, as OpenAI's text-embedding-3 models do) and `user`.
Anything else is a 400 with OpenAI's error body; so are token-array inputs (lists of ints),
which OpenAI takes but this fake does not support. Every request it answered is recorded;
`failing` answers the next ones with an error status, after `delay` seconds if one is set.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import random
import re
import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from aiohttp import web

from tests.fakes.llm.openai_api import error_response

FIELDS = {"model", "input", "encoding_format", "dimensions", "user"}
ENCODINGS = ("float", "base64")
MAX_INPUTS = 2048
MAX_INPUT_TOKENS = 8192
MAX_REQUEST_TOKENS = 300_000
WORD = re.compile(r"\w+")
INVALID_INPUT = (
    "'$.input' is invalid. Please check the API reference: "
    "https://platform.openai.com/docs/api-reference."
)


@dataclass(frozen=True)
class Asked:
    """One request the endpoint answered: the model, the texts and the other fields sent."""

    model: str
    inputs: tuple[str, ...]
    fields: dict[str, Any]  # encoding_format, dimensions, user: those the request had


@dataclass
class Embeddings:
    dimension: int = 384  # the model's: what a request without `dimensions` gets
    requests: list[Asked] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each 400 was answered
    scripted: dict[str, tuple[float, ...]] = field(default_factory=dict)  # text → vector
    failing: list[int] = field(default_factory=list)  # statuses for the next requests
    delay: float = 0.0  # seconds to wait before answering (for timeout tests)

    def script(self, text: str, vector: Sequence[float]) -> None:
        """Answer `vector` (as given, `dimension` long) for exactly `text`."""
        if len(vector) != self.dimension or not all(math.isfinite(x) for x in vector):
            raise ValueError(f"a scripted vector needs {self.dimension} finite floats")
        self.scripted[text] = tuple(float(x) for x in vector)

    def vector(self, text: str, dimensions: int | None = None) -> list[float]:
        """The vector answered for `text`: the scripted one, else one derived from its words."""
        full = list(self.scripted.get(text) or derived(text, self.dimension))
        if dimensions is None or dimensions == len(full):
            return full
        return _normalised(full[:dimensions])

    @staticmethod
    def tokens(text: str) -> int:
        """About how many tokens OpenAI counts in `text` (four characters a token)."""
        return max(1, (len(text) + 3) // 4)

    async def handle(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._bad("We could not parse the JSON body of your request.")
        problem = _problem(body, self.dimension)
        if problem is not None:
            return self._bad(problem)
        asked = Asked(
            model=body["model"],
            inputs=tuple(_inputs(body["input"])),
            fields={k: v for k, v in body.items() if k not in ("model", "input")},
        )
        too_long = _too_long([self.tokens(text) for text in asked.inputs])
        if too_long is not None:
            return self._bad(too_long)
        self.requests.append(asked)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.failing:
            status = self.failing.pop(0)
            return error_response(status, "server_error", "The server had an error")
        return self._answer(asked)

    def _bad(self, message: str) -> web.Response:
        self.rejected.append(message)
        return error_response(400, "invalid_request_error", message)

    def _answer(self, asked: Asked) -> web.Response:
        encoding = asked.fields.get("encoding_format", "float")
        dimensions = asked.fields.get("dimensions")
        data = [
            {
                "object": "embedding",
                "index": index,
                "embedding": _encoded(self.vector(text, dimensions), encoding),
            }
            for index, text in enumerate(asked.inputs)
        ]
        used = sum(self.tokens(text) for text in asked.inputs)
        headers = {"x-request-id": "req_" + uuid.uuid4().hex[:24], "openai-model": asked.model}
        body = {
            "object": "list",
            "data": data,
            "model": asked.model,
            "usage": {"prompt_tokens": used, "total_tokens": used},
        }
        return web.json_response(body, headers=headers)


def derived(text: str, dimension: int) -> list[float]:
    """A unit vector for `text`: the normalised sum of its lower-cased words' vectors."""
    words = WORD.findall(text.lower()) or [text]  # a text of no words: its own vector
    total = [0.0] * dimension
    for word in words:
        for i, x in enumerate(_word_vector(word, dimension)):
            total[i] += x
    if not any(total):  # words that cancel out exactly (all but impossible)
        return list(_word_vector(text, dimension))
    return _normalised(total)


@lru_cache(maxsize=4096)
def _word_vector(word: str, dimension: int) -> tuple[float, ...]:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    return tuple(_normalised([rng.gauss(0.0, 1.0) for _ in range(dimension)]))


def _normalised(vector: list[float]) -> list[float]:
    length = math.sqrt(sum(x * x for x in vector))
    return [x / length for x in vector] if length else vector


def _encoded(vector: list[float], encoding: str) -> list[float] | str:
    """The vector as OpenAI sends it: float32s, as JSON numbers or base64 of little-endian."""
    packed = struct.pack(f"<{len(vector)}f", *vector)
    if encoding == "base64":
        return base64.b64encode(packed).decode("ascii")
    return list(struct.unpack(f"<{len(vector)}f", packed))


def _problem(body: object, dimension: int) -> str | None:
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        return f"Unrecognized request argument supplied: {unknown[0]}"
    if not body.get("model"):
        return "you must provide a model parameter"
    if not isinstance(body["model"], str):
        return f"{body['model']!r} is not of type 'string' - 'model'"
    if "input" not in body:
        return "'input' is a required property"
    return _input_problem(body["input"]) or _option_problem(body, dimension)


def _input_problem(given: object) -> str | None:
    if isinstance(given, str):
        return None if given else INVALID_INPUT
    if not isinstance(given, list) or not given:
        return INVALID_INPUT
    if any(isinstance(item, int | list) for item in given):
        return "'input': token arrays are not supported by this fake; send strings."
    if len(given) > MAX_INPUTS:
        return f"'input': the array must have at most {MAX_INPUTS} items, not {len(given)}."
    if not all(isinstance(item, str) and item for item in given):
        return INVALID_INPUT
    return None


def _option_problem(body: dict[str, Any], dimension: int) -> str | None:
    encoding = body.get("encoding_format", "float")
    if encoding not in ENCODINGS:
        return f"{encoding!r} is not one of {list(ENCODINGS)} - 'encoding_format'"
    if "dimensions" in body:
        wanted = body["dimensions"]
        if not isinstance(wanted, int) or isinstance(wanted, bool):
            return f"{wanted!r} is not of type 'integer' - 'dimensions'"
        if not 1 <= wanted <= dimension:
            return f"Invalid value for 'dimensions' = {wanted}. Must be between 1 and {dimension}."
    if "user" in body and not isinstance(body["user"], str):
        return f"{body['user']!r} is not of type 'string' - 'user'"
    return None


def _inputs(given: str | list[str]) -> list[str]:
    return [given] if isinstance(given, str) else given


def _too_long(tokens: list[int]) -> str | None:
    longest = max(tokens)
    if longest > MAX_INPUT_TOKENS:
        return (
            f"This model's maximum context length is {MAX_INPUT_TOKENS} tokens, however you "
            f"requested {longest} tokens ({longest} in your prompt; 0 for the completion). "
            "Please reduce your prompt; or completion length."
        )
    if sum(tokens) > MAX_REQUEST_TOKENS:
        return f"Requested {sum(tokens)} tokens, max {MAX_REQUEST_TOKENS} tokens per request"
    return None
