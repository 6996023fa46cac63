"""The checks the real APIs make of image and document content, with their 400 messages.

Split from `validate` so that each stays readable. The wording is the real APIs' as seen in
their answers where we have seen it (Anthropic's image type, base64, size and mismatch
messages and its invalid PDF; OpenAI's data URL and role messages). Elsewhere (an image in an
assistant message, a bad image URL, most document fields, an OpenAI image over 20 MB) it is
the fake's own, in the API's style and with the field's path, so a test matching on it still
says what was wrong.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.llm import media

ANTHROPIC_IMAGE_MAX = 5 * 1024 * 1024  # measured on the base64 text, as the API does
OPENAI_IMAGE_MAX = 20 * 1024 * 1024  # of decoded bytes
IMAGE_TYPES_SAID = "'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
BLOCK_KEYS = {
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "title", "context", "citations", "cache_control"},
}
OPENAI_PART_TYPES = ("text", "image_url", "input_audio", "refusal", "audio", "file")
DATA_URL_EXPECTED = (
    "Expected a base64-encoded data URL with an image MIME type "
    "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got "
)


def anthropic_media(path: str, block: dict[str, Any], role: str) -> str | None:
    """The Messages API's 400 message for the `image` or `document` block at `path` (such as
    `messages.0.content.1`) of a `role` message, or None if the block is acceptable."""
    kind = str(block["type"])
    if role != "user":  # the fake's wording: the API takes pictures and files from users only
        return f"{path}.{kind}: {kind} content blocks are only allowed in user messages"
    problem = _extra(f"{path}.{kind}", block, BLOCK_KEYS[kind])
    if problem:
        return problem
    source = block.get("source")
    if not isinstance(source, dict):
        return f"{path}.{kind}.source: Field required"
    if kind == "image":
        return _image_source(f"{path}.image.source", source)
    return _document_fields(f"{path}.document", block) or _document_source(path, source)


def anthropic_tool_result(path: str, block: dict[str, Any]) -> str | None:
    """The 400 message for an image or document inside the `tool_result` block at `path`: the
    API checks them as it checks those of the message itself."""
    content = block.get("content")
    for k, inner in enumerate(content if isinstance(content, list) else []):
        if isinstance(inner, dict) and inner.get("type") in BLOCK_KEYS:
            problem = anthropic_media(f"{path}.tool_result.content.{k}", inner, "user")
            if problem:
                return problem
    return None


def _extra(path: str, value: dict[str, Any], allowed: set[str]) -> str | None:
    extra = [key for key in value if key not in allowed]
    return f"{path}.{extra[0]}: Extra inputs are not permitted" if extra else None


def _string(path: str, value: Any) -> str | None:
    if value is None:
        return f"{path}: Field required"
    return None if isinstance(value, str) else f"{path}: Input should be a valid string"


def _bad_tag(path: str, tag: Any, expected: tuple[str, ...]) -> str:
    tags = ", ".join(f"'{t}'" for t in expected)
    return (
        f"{path}: Input tag '{tag}' found using 'type' does not match any of the "
        f"expected tags: {tags}"
    )


def _image_source(path: str, source: dict[str, Any]) -> str | None:
    """An image's source: base64 data whose bytes are the type it claims, or a URL."""
    if source.get("type") == "url":
        return _extra(f"{path}.url", source, {"type", "url"}) or _url(f"{path}.url.url", source)
    if source.get("type") != "base64":
        return _bad_tag(path, source.get("type"), ("base64", "url"))
    path += ".base64"
    media_type, data = source.get("media_type"), source.get("data")
    problem = _extra(path, source, {"type", "media_type", "data"})
    if problem:
        return problem
    if media_type not in media.IMAGE_TYPES:
        return f"{path}.media_type: Input should be {IMAGE_TYPES_SAID}"
    problem = _string(f"{path}.data", data)
    if problem:
        return problem
    if not data:
        return f"{path}: image cannot be empty"
    if len(data) > ANTHROPIC_IMAGE_MAX:
        return (
            f"{path}: image exceeds 5 MB maximum: {len(data)} bytes > {ANTHROPIC_IMAGE_MAX} bytes"
        )
    raw = media.decode(data)
    if raw is None:
        return f"{path}: invalid base64 data"
    actual = media.sniff(raw)
    if actual is None:
        return f"{path}.data: Image does not match the provided media type {media_type}"
    if actual != media_type:
        return (
            f"{path}: The image was specified using the {media_type} media type, "
            f"but the image appears to be a {actual} image"
        )
    return None


def _url(path: str, source: dict[str, Any]) -> str | None:
    url = source.get("url")
    problem = _string(path, url)
    if problem or str(url).startswith(("https://", "http://")):
        return problem
    return f"{path}: Input should be a valid URL"


def _document_fields(path: str, block: dict[str, Any]) -> str | None:
    for key in ("title", "context"):
        if block.get(key) is not None and not isinstance(block[key], str):
            return f"{path}.{key}: Input should be a valid string"
    citations = block.get("citations")
    if citations is None:
        return None
    if not isinstance(citations, dict) or not isinstance(citations.get("enabled", False), bool):
        return f"{path}.citations.enabled: Input should be a valid boolean"
    return None


def _document_source(path: str, source: dict[str, Any]) -> str | None:
    """A document's source: a base64 PDF (that really is one) or plain text."""
    at = f"{path}.document.source"
    kind, media_type, data = source.get("type"), source.get("media_type"), source.get("data")
    if kind not in ("base64", "text"):
        return _bad_tag(at, kind, ("base64", "text"))
    at += f".{kind}"
    problem = _extra(at, source, {"type", "media_type", "data"}) or _string(f"{at}.data", data)
    if problem:
        return problem
    if kind == "text":
        return (
            None if media_type == "text/plain" else f"{at}.media_type: Input should be 'text/plain'"
        )
    if media_type != "application/pdf":
        return f"{at}.media_type: Input should be 'application/pdf'"
    raw = media.decode(str(data))
    if raw is None:
        return f"{at}: invalid base64 data"
    if not media.is_pdf(raw):  # the API names the block `pdf` in this one message
        return f"{path}.pdf.source.base64.data: The PDF specified was not valid."
    return None


def openai_content(i: int, message: dict[str, Any]) -> str | None:
    """Chat Completions' 400 message for the content parts of `messages[i]`, or None: text
    anywhere, images only from the user, as data URLs of real images or web addresses."""
    content = message.get("content")
    if not isinstance(content, list):
        return None
    if not content:
        return (
            f"Invalid 'messages[{i}].content': empty array. Expected an array with minimum "
            "length 1, but got an empty array instead."
        )
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        path = f"messages[{i}].content[{j}]"
        if kind == "image_url" and message.get("role") != "user":
            return (
                f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role "
                f"'user', but this message with role '{message.get('role')}' contains an "
                "image URL."
            )
        if kind == "image_url":
            problem = _image_url(path, part)
        elif kind == "text":
            problem = _openai_text(path, part)
        elif kind not in OPENAI_PART_TYPES:
            supported = ", ".join(f"'{t}'" for t in OPENAI_PART_TYPES[:-1])
            problem = f"Invalid value: '{kind}'. Supported values are: {supported}, and 'file'."
        else:
            problem = None  # audio, files and refusals are not checked here
        if problem:
            return problem
    return None


def _openai_text(path: str, part: dict[str, Any]) -> str | None:
    return (
        None if isinstance(part.get("text"), str) else f"Missing required parameter: '{path}.text'."
    )


def _image_url(path: str, part: dict[str, Any]) -> str | None:
    image = part.get("image_url")
    if not isinstance(image, dict):
        return f"Missing required parameter: '{path}.image_url'."
    url = image.get("url")
    if not isinstance(url, str):
        return f"Missing required parameter: '{path}.image_url.url'."
    detail = image.get("detail", "auto")
    if detail not in ("auto", "low", "high"):
        return f"Invalid value: '{detail}'. Supported values are: 'auto', 'low', and 'high'."
    if url.startswith(("https://", "http://")):
        return None
    return _data_url(f"{path}.image_url.url", url)


def _data_url(path: str, url: str) -> str | None:
    """A `data:` image: an image MIME type the API reads, base64 of at most 20 MB, and bytes
    that are an image of that type. OpenAI may read a mislabelled image anyway; the fake
    refuses it, so that Parley's labels are right for both APIs."""
    expected = f"Invalid '{path}'. {DATA_URL_EXPECTED}"
    parsed = media.data_url(url)
    if parsed is None:
        if not url.startswith("data:"):
            return expected + "a value without the 'data:' prefix."
        return expected + "an invalid base64-encoded value."
    if parsed.mime not in media.IMAGE_TYPES:
        return expected + f"unsupported MIME type '{parsed.mime}'."
    if not parsed.data:
        return expected + "empty base64-encoded bytes."
    raw = media.decode(parsed.data)
    if raw is None:
        return expected + "an invalid base64-encoded value."
    if len(raw) > OPENAI_IMAGE_MAX:
        return f"Invalid '{path}': the image is {len(raw)} bytes, over the 20 MB limit."
    if media.sniff(raw) != parsed.mime:
        return "You uploaded an unsupported image. Please make sure your image is valid."
    return None
