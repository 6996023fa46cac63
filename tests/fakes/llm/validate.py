"""The request checks the real APIs make, with their error messages, so bad requests fail here."""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.llm import blocks, thinking

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
BLIND = "gpt-3.5"  # the models the fake says have no vision
BLOCK_TYPES = {
    "text", "tool_use", "tool_result", "image", "document", "thinking", "redacted_thinking",
}  # fmt: skip


def anthropic_request(body: dict[str, Any]) -> str | None:
    """The Messages API's 400 message for `body`, or None if it is acceptable."""
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if not _in_range(body.get("temperature", 0), 1):
        return "temperature: range: 0..1"
    return (
        thinking.request_problem(body)
        or _anthropic_tools(body.get("tools", []))
        or _anthropic_system(body.get("system"))
        or _anthropic_messages(messages)
        or _cache_marks(body)
    )


def _in_range(value: Any, top: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= top


def _anthropic_tools(tools: Any) -> str | None:
    names: set[str] = set()
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        name = tool.get("name", "")
        if not TOOL_NAME.match(str(name)):
            return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
        if name in names:
            return "tools: Tool names must be unique."
        names.add(name)
        if (
            not isinstance(tool.get("input_schema"), dict)
            or tool["input_schema"].get("type") != "object"
        ):
            return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
    return None


def _anthropic_system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    for i, block in enumerate(system):
        if block.get("type") != "text" or not block.get("text"):
            return f"system.{i}: text content blocks must be non-empty"
    return None


def _anthropic_messages(messages: list[dict[str, Any]]) -> str | None:
    if messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        if isinstance(content, str):
            if not content and i < len(messages) - 1:
                return f"messages.{i}: all messages must have non-empty content"
            continue
        if not isinstance(content, list) or not content:
            return f"messages.{i}: all messages must have non-empty content"
        problem = _anthropic_blocks(i, message, messages, seen_ids)
        if problem:
            return problem
    return None


def _anthropic_blocks(
    i: int, message: dict[str, Any], messages: list[dict[str, Any]], seen_ids: set[str]
) -> str | None:
    content = message["content"]
    for j, block in enumerate(content):
        problem = _anthropic_block(f"messages.{i}.content.{j}", block, message["role"], seen_ids)
        if problem:
            return problem
    kinds = [b.get("type") for b in content]
    if (
        "tool_result" in kinds
        and kinds.index("tool_result") > 0
        and any(k != "tool_result" for k in kinds[: kinds.index("tool_result")])
    ):
        return f"messages.{i}: tool_result blocks must come first in the content of a user message"
    if message["role"] == "user" and "tool_result" in kinds:
        previous = messages[i - 1] if i > 0 else {}
        asked = {b.get("id") for b in _blocks(previous) if b.get("type") == "tool_use"}
        for j, block in enumerate(content):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    "`tool_result` blocks: " + str(block.get("tool_use_id")) + ". Each "
                    "`tool_result` block must have a corresponding `tool_use` block in the "
                    "previous message."
                )
    if message["role"] == "assistant":
        uses = [str(b["id"]) for b in content if b.get("type") == "tool_use"]
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = {
            b.get("tool_use_id") for b in _blocks(following) if b.get("type") == "tool_result"
        }
        missing = [use for use in uses if use not in answered]
        if missing and following is not None:
            return (
                f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    return None


def _anthropic_block(path: str, block: dict[str, Any], role: str, seen_ids: set[str]) -> str | None:
    """The checks of one content block on its own; `seen_ids` gathers the `tool_use` ids."""
    kind = block.get("type")
    if kind not in BLOCK_TYPES:
        return f"{path}: Input tag '{kind}' does not match any expected tag"
    if kind == "text" and not block.get("text"):
        return "messages: text content blocks must be non-empty"
    if kind in ("image", "document"):
        return blocks.anthropic_media(path, block, role)
    if kind in thinking.KEYS:
        return thinking.block_problem(path, block, role)
    if kind == "tool_result":
        return blocks.anthropic_tool_result(path, block)
    if kind == "tool_use":
        if block.get("id") in seen_ids:
            return f"{path}: `tool_use` ids must be unique"
        seen_ids.add(block.get("id", ""))
    return None


def _blocks(message: dict[str, Any] | None) -> list[dict[str, Any]]:
    content = (message or {}).get("content")
    return content if isinstance(content, list) else []


def _cache_marks(body: dict[str, Any]) -> str | None:
    """The API's checks of `cache_control`: at most four, each `ephemeral` with a TTL of 5m
    or 1h, and no hour-long one after a 5-minute one (tools → system → messages)."""
    system = body.get("system")
    marked = [t for t in body.get("tools", []) if "cache_control" in t]
    marked += [b for b in system if "cache_control" in b] if isinstance(system, list) else []
    marked += [b for m in body["messages"] for b in _blocks(m) if "cache_control" in b]
    if len(marked) > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {len(marked)}."
    ttls: list[str] = []
    for block in marked:
        mark = block["cache_control"]
        if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
            return "cache_control.type: Input should be 'ephemeral'"
        ttl = mark.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            return "cache_control.ttl: Input should be '5m' or '1h'"
        ttls.append(ttl)
    if "1h" in ttls and "5m" in ttls[: len(ttls) - ttls[::-1].index("1h")]:
        return (
            "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
            "block. Note that blocks are processed in the following order: `tools`, `system`, "
            "`messages`."
        )
    return None


def openai_request(body: dict[str, Any]) -> str | None:
    """Chat Completions' 400 message for `body`, or None."""
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'"
    if not _in_range(body.get("temperature", 1), 2):
        return "Invalid 'temperature': decimal above maximum value. Expected a value <= 2."
    problem = _openai_reasoning(body) or _openai_vision(body)
    if problem:
        return problem
    if "stream_options" in body and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    for i, tool in enumerate(body.get("tools", [])):
        function = tool.get("function", {}) if tool.get("type") == "function" else {}
        if not TOOL_NAME.match(str(function.get("name", ""))) or len(function["name"]) > 64:
            return f"Invalid 'tools[{i}].function.name': string does not match pattern."
    return _openai_messages(messages)


def _openai_vision(body: dict[str, Any]) -> str | None:
    """A model without vision (the fake's: `gpt-3.5…`) refuses an image part."""
    if not str(body["model"]).startswith(BLIND):
        return None
    for message in body["messages"]:
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        if any(isinstance(p, dict) and p.get("type") == "image_url" for p in parts):
            return "Invalid content type. image_url is only supported by certain models."
    return None


def _openai_reasoning(body: dict[str, Any]) -> str | None:
    """A reasoning model (o-series, gpt-5) takes an effort and no sampling settings; other
    models take no effort."""
    model = str(body["model"])
    effort = body.get("reasoning_effort")
    if not REASONING_MODEL.match(model):
        if effort is not None:
            return "Unrecognized request argument supplied: reasoning_effort"
        return None
    if effort is not None and effort not in ("minimal", "low", "medium", "high"):
        return (
            f"Invalid value: '{effort}'. Supported values are: 'minimal', 'low', 'medium', "
            "and 'high'."
        )
    for name in ("temperature", "top_p", "max_tokens"):
        if name in body:
            return f"Unsupported parameter: '{name}' is not supported with this model."
    return None


def _openai_messages(messages: list[dict[str, Any]]) -> str | None:
    open_calls: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return (
                f"Invalid value: '{role}'. Supported values are: "
                "'system', 'assistant', 'user', 'tool'"
            )
        problem = blocks.openai_content(i, message)
        if problem:
            return problem
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_calls)}"
            )
        if role == "assistant":
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
            if message.get("content") is None and not open_calls:
                return f"Invalid value for 'content' of messages[{i}]: expected a string, got null."
        elif not message.get("content") and message.get("content") != "":
            return f"Invalid value for 'content' of messages[{i}]: expected a string, got null."
    if open_calls:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(open_calls)}"
        )
    return None
