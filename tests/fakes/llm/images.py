"""OpenAI's `POST /v1/images/generations` and `POST /v1/images/edits`, as the fake serves them.

A generation is a JSON object with `prompt` and optionally `model` (OpenAI's default is
`dall-e-2`), `n`, `size`, `quality`, `response_format`, `output_format`, `background`,
`moderation`, `output_compression`, `style` and `user`; an edit is `multipart/form-data` with
the image file (`image`, or several as `image[]`), `prompt`, and the same options less the
JSON-only ones. Each is checked as OpenAI documents it for the model named: GPT image models
(`gpt-image-*`, `chatgpt-image-*`) take `1024x1024`, `1536x1024`, `1024x1536` or `auto`, answer
in base64 only, refuse `response_format`, and say the tokens used; `dall-e-3` takes one image
of `1024x1024`, `1792x1024` or `1024x1792`; any other model is taken as DALL·E 2 (a square of
256, 512 or 1024 px; a link unless `b64_json` is asked for, and a square PNG to edit). An
unknown field, a value out of its set, an edit's file that is not the image its type says, is
a 400 with OpenAI's error body.

The picture is a real PNG (or the JPEG or WebP asked for) of the size asked for, filled with a
colour taken from the prompt; `script` answers the next request with other bytes (a page, not
an image), `links` answers with a URL even where base64 was asked for, and `fail_next` answers
the next request with an error. Every request that passed the checks is recorded (`requests`),
with the files an edit sent.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web
from PIL import Image

from tests.fakes.llm.media import sniff
from tests.fakes.llm.openai_api import error_response

GPT_SIZES = ("1024x1024", "1536x1024", "1024x1536", "auto")
SIZES = {"dall-e-2": ("256x256", "512x512", "1024x1024"),
         "dall-e-3": ("1024x1024", "1792x1024", "1024x1792")}  # fmt: skip
PROMPT_MOST = {"gpt": 32_000, "dall-e-3": 4000, "dall-e-2": 1000}
OPTIONS = {"model", "n", "size", "quality", "response_format", "output_format", "background",
           "output_compression", "user"}  # fmt: skip
GENERATION = {"prompt", "moderation", "style", *OPTIONS}
EDIT = {"prompt", "input_fidelity", *OPTIONS}
OUTPUT = {"png": "PNG", "jpeg": "JPEG", "webp": "WEBP"}
EDITABLE = ("image/png", "image/jpeg", "image/webp")
OUTPUT_TOKENS = {"1024x1024": 1056, "1536x1024": 1584, "1024x1536": 1584, "auto": 1056}
EDIT_IMAGE_TOKENS = 323  # what OpenAI counts for an input image of about a megapixel


@dataclass(frozen=True)
class Drawn:
    """One request the endpoint answered: which (`generations` or `edits`), its fields as
    sent, and an edit's files (field name, filename, content type, bytes)."""

    endpoint: str
    fields: dict[str, Any]
    files: tuple[tuple[str, str, str, bytes], ...] = ()


@dataclass
class Images:
    requests: list[Drawn] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each 400 was answered
    scripted: list[bytes] = field(default_factory=list)  # the next answers' bytes
    failing: list[tuple[int, str, str | None]] = field(default_factory=list)
    links: bool = False  # answer with a URL, whatever was asked

    def script(self, data: bytes) -> None:
        """Answer the next request with `data` (base64-encoded) instead of a picture."""
        self.scripted.append(data)

    def fail_next(self, status: int, message: str, code: str | None = None) -> None:
        """Answer the next request that passes the checks with this error."""
        self.failing.append((status, message, code))

    async def generations(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._bad("We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return self._bad("The request body must be a JSON object.")
        problem = _unknown(body, GENERATION) or _problem(body, "generations")
        return self._bad(problem) if problem else self._answer(Drawn("generations", body))

    async def edits(self, request: web.Request) -> web.Response:
        if request.content_type != "multipart/form-data":
            return self._bad("Invalid Content-Type header: the request must be multipart/form-data")
        read = await _form(request)
        if isinstance(read, str):
            return self._bad(read)
        problem = _problem(read.fields, "edits") or _files_problem(read)
        return self._bad(problem) if problem else self._answer(read)

    def _bad(self, message: str) -> web.Response:
        self.rejected.append(message)
        return error_response(400, "invalid_request_error", message)

    def _answer(self, drawn: Drawn) -> web.Response:
        self.requests.append(drawn)
        if self.failing:
            status, message, code = self.failing.pop(0)
            kind = "invalid_request_error" if status < 500 else "server_error"
            return error_response(status, kind, message, code=code)
        fields, family = drawn.fields, _family(str(drawn.fields.get("model", "dall-e-2")))
        size = str(fields.get("size", "1024x1024"))
        data = self.scripted.pop(0) if self.scripted else picture(fields, size)
        wanted = "b64_json" if family == "gpt" else fields.get("response_format", "url")
        item = {"url": f"https://images.fake.invalid/{hashlib.sha256(data).hexdigest()}.png"}
        if wanted == "b64_json" and not self.links:
            item = {"b64_json": base64.b64encode(data).decode()}
        body: dict[str, Any] = {"created": int(time.time()), "data": [item]}
        if family == "gpt":
            body |= {"size": size if size != "auto" else "1024x1024",
                     "usage": _usage(drawn, size)}  # fmt: skip
        return web.json_response(body)


def picture(fields: dict[str, Any], size: str) -> bytes:
    """A picture of `size` (auto: a square of 1024 px) in the format asked for, of one
    colour taken from the prompt."""
    width, height = (int(n) for n in ("1024x1024" if size == "auto" else size).split("x"))
    colour = tuple(hashlib.sha256(str(fields["prompt"]).encode()).digest()[:3])
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(
        out, OUTPUT[str(fields.get("output_format", "png"))]
    )
    return out.getvalue()


def _family(model: str) -> str:
    if model.startswith(("gpt-image", "chatgpt-image")):
        return "gpt"
    return "dall-e-3" if model == "dall-e-3" else "dall-e-2"


def _unknown(body: dict[str, Any], known: set[str]) -> str | None:
    unknown = sorted(set(body) - known)
    return f"Unrecognized request argument supplied: {unknown[0]}" if unknown else None


def _problem(fields: dict[str, Any], endpoint: str) -> str | None:
    prompt = fields.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        return "'prompt' is a required property" if prompt is None else "Invalid 'prompt'."
    model = fields.get("model", "dall-e-2")
    if not isinstance(model, str) or not model:
        return f"{model!r} is not of type 'string' - 'model'"
    family = _family(model)
    most = PROMPT_MOST[family]
    if len(prompt) > most:
        return (
            f"Invalid 'prompt': string too long. Expected a string with maximum length {most}, "
            f"but got a string with length {len(prompt)} instead."
        )
    return _options_problem(fields, family, endpoint)


def _options_problem(fields: dict[str, Any], family: str, endpoint: str) -> str | None:
    sizes = GPT_SIZES if family == "gpt" else SIZES[family]
    if "size" in fields and fields["size"] not in sizes:
        listed = ", ".join(map(repr, sizes))
        return f"Invalid value: '{fields['size']}'. Supported values are: {listed}."
    n = fields.get("n", 1)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 10:
        return f"Invalid 'n': {n!r}. Expected an integer between 1 and 10."
    if family == "dall-e-3" and n != 1:
        return "Invalid 'n': dall-e-3 only supports n=1."
    if family == "dall-e-3" and endpoint == "edits":
        return "Invalid value for 'model': dall-e-3 does not support edits."
    if family == "gpt" and "response_format" in fields:
        return "Unknown parameter: 'response_format'."
    if fields.get("response_format", "url") not in ("url", "b64_json"):
        given = fields["response_format"]
        return f"Invalid value: '{given}'. Supported values are: 'url' and 'b64_json'."
    for name in ("output_format", "background", "output_compression", "moderation"):
        if family != "gpt" and name in fields:
            return f"Unknown parameter: '{name}'."
    if fields.get("output_format", "png") not in OUTPUT:
        given = fields["output_format"]
        return f"Invalid value: '{given}'. Supported values are: 'png', 'jpeg' and 'webp'."
    return None


async def _form(request: web.Request) -> Drawn | str:
    """An edit's multipart body: its text fields (numbers as numbers) and its files."""
    fields: dict[str, Any] = {}
    files: list[tuple[str, str, str, bytes]] = []
    reader = await request.multipart()
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            return "nested multipart bodies are not supported"
        name = part.name or ""
        if name in ("image", "image[]", "mask"):
            if not part.filename:
                return f"{name}: a file part needs a filename"
            kind = part.headers.get("Content-Type", "application/octet-stream")
            files.append((name, part.filename, kind, await part.read()))
        elif name in EDIT:
            text = (await part.read()).decode()
            number = name in ("n", "output_compression") and text.isdigit()
            fields[name] = int(text) if number else text
        else:
            return f"Unrecognized request argument supplied: {name}"
    return Drawn("edits", fields, tuple(files))


def _files_problem(drawn: Drawn) -> str | None:
    images = [f for f in drawn.files if f[0] in ("image", "image[]")]
    if not images:
        return "'image' is a required property"
    family = _family(str(drawn.fields.get("model", "dall-e-2")))
    if family == "dall-e-2" and len(images) > 1:
        return "Invalid 'image': dall-e-2 edits take one image."
    for field_name, filename, kind, data in drawn.files:
        if kind not in EDITABLE:
            return (
                f"Invalid file '{field_name}': unsupported mimetype ('{kind}'). Supported file "
                "formats are 'image/jpeg', 'image/png', and 'image/webp'."
            )
        if sniff(data) != kind:
            return f"Invalid image file '{filename}': the file is not a valid {kind} image."
        if family == "dall-e-2" and not _square_png(data):
            return f"Invalid image file '{filename}': dall-e-2 edits a square PNG."
    return None


def _square_png(data: bytes) -> bool:
    with Image.open(io.BytesIO(data)) as image:
        return image.format == "PNG" and image.width == image.height


def _usage(drawn: Drawn, size: str) -> dict[str, Any]:
    text = max(1, len(str(drawn.fields["prompt"])) // 4)
    image = EDIT_IMAGE_TOKENS * sum(1 for f in drawn.files if f[0] != "mask")
    out = OUTPUT_TOKENS[size] * int(drawn.fields.get("n", 1))
    return {
        "input_tokens": text + image,
        "input_tokens_details": {"text_tokens": text, "image_tokens": image},
        "output_tokens": out,
        "total_tokens": text + image + out,
    }
