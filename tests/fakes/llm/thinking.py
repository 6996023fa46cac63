"""Extended thinking as the Messages API does it: the `thinking` parameter and what it rules
out, thinking blocks streamed with a signature the fake makes, and the blocks a client sends
back checked against it, so a client that edits, drops or misplaces them fails here as it
would there.

The wording of the errors is the API's where we have seen it (the budget, the temperature,
the final assistant message that must start with its thinking); the signature's is the
fake's own, in the API's style.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Any

KEY = secrets.token_bytes(32)  # the fake's own: a signature from elsewhere does not verify
LEAST_BUDGET = 1024
EFFORTS = ("low", "medium", "high", "xhigh", "max")
# The models that think on a budget only (before adaptive thinking), and those that think
# adaptively only.
BUDGET_ONLY = re.compile(r"^claude-(3-7-|(opus|sonnet)-4(-[015])?(-\d{8})?$|haiku-4-5)")
ADAPTIVE_ONLY = re.compile(r"^claude-(opus-4-7|opus-5|sonnet-5|mythos|fable)")
KEYS = {
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
}


def sign(shown: str) -> str:
    """A signature of the thinking as the client was given it (empty when omitted)."""
    nonce = secrets.token_bytes(16)
    return base64.b64encode(nonce + _mac(nonce + shown.encode())).decode()


def _verifies(signature: str, shown: str) -> bool:
    try:
        raw = base64.b64decode(signature, validate=True)
    except ValueError:
        return False
    return len(raw) > 16 and hmac.compare_digest(raw[16:], _mac(raw[:16] + shown.encode()))


def _mac(data: bytes) -> bytes:
    return hmac.digest(KEY, data, hashlib.sha256)


def redacted_data() -> str:
    """What a redacted thinking block carries: opaque to the client, known to the API."""
    return sign("")


def enabled(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def shown(body: dict[str, Any]) -> bool:
    """Whether the thinking is returned, or only its signature (`display: omitted`)."""
    return bool(body["thinking"].get("display") != "omitted")


def request_problem(body: dict[str, Any]) -> str | None:
    """The 400 message for the request's `thinking` and what it rules out, or None."""
    thinking = body.get("thinking")
    if thinking is None:
        return _effort(body)
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "disabled":
        return None
    if kind not in ("enabled", "adaptive"):
        return (
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'enabled', 'disabled', 'adaptive'"
        )
    problem = _adaptive(body) if kind == "adaptive" else _budget(body)
    if problem:
        return problem
    if "temperature" in body and body["temperature"] != 1:
        return (
            "`temperature` may only be set to 1 when thinking is enabled. Please consult our "
            "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        )
    if "top_k" in body:
        return "`top_k` cannot be set when thinking is enabled."
    if "top_p" in body and body["top_p"] < 0.95:
        return "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled."
    return _final_starts_with_thinking(body["messages"])


def _budget(body: dict[str, Any]) -> str | None:
    thinking, model = body["thinking"], str(body["model"])
    if ADAPTIVE_ONLY.match(model):
        return f"thinking.type: 'enabled' is not supported for {model}; use 'adaptive'"
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        return "thinking.enabled.budget_tokens: Field required"
    if budget < LEAST_BUDGET:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if budget >= body["max_tokens"]:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    return _effort(body)


def _adaptive(body: dict[str, Any]) -> str | None:
    thinking, model = body["thinking"], str(body["model"])
    if BUDGET_ONLY.match(model):
        return f"thinking.type: 'adaptive' is not supported for {model}"
    if thinking.get("display") not in (None, "summarized", "omitted"):
        return "thinking.adaptive.display: Input should be 'summarized' or 'omitted'"
    return _effort(body)


def _effort(body: dict[str, Any]) -> str | None:
    config = body.get("output_config")
    if config is None:
        return None
    if not isinstance(config, dict) or config.get("effort") not in EFFORTS:
        return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    return None


def block_problem(path: str, block: dict[str, Any], role: str) -> str | None:
    """The 400 message for a thinking or redacted thinking block sent back, or None."""
    kind = str(block["type"])
    if role != "assistant":
        return f"{path}: {kind} blocks may only appear in assistant messages"
    extra = [key for key in block if key not in KEYS[kind]]
    if extra:
        return f"{path}.{kind}.{extra[0]}: Extra inputs are not permitted"
    if kind == "redacted_thinking":
        return None if _known(block.get("data")) else f"{path}: Invalid `data` in redacted_thinking"
    thinking, signature = block.get("thinking"), block.get("signature")
    if not isinstance(thinking, str) or not isinstance(signature, str):
        return f"{path}.thinking: Field required"
    if not _verifies(signature, thinking):
        return f"{path}: Invalid `signature` in `thinking` block"
    return None


def _known(data: Any) -> bool:
    return _verifies(str(data), "")


def _final_starts_with_thinking(messages: list[dict[str, Any]]) -> str | None:
    """Within a turn of tool calls (the conversation ends with tool results), the assistant
    message that asked for them must start with the thinking that led to them."""
    if len(messages) < 2 or not _is_tool_results(messages[-1]):
        return None
    last = len(messages) - 2
    content = messages[last].get("content")
    first = content[0] if isinstance(content, list) and content else {}
    kind = first.get("type") if isinstance(first, dict) else None
    if kind in KEYS:
        return None
    return (
        f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{kind}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
        "We recommend you include thinking blocks from previous turns. To avoid this "
        "requirement, disable `thinking`."
    )


def _is_tool_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )
