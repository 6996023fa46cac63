"""Block Kit checks: the limits Slack enforces on the blocks of a message.

Slack refuses the whole message with `invalid_blocks` and a list of reasons; the fake does the
same, so an app that builds a button label of 80 characters or a 4,000-character section learns
it here rather than in production. Only the block and element types Parley may send are known;
anything else is refused as Slack refuses an unknown type.
"""

from __future__ import annotations

import secrets
from typing import Any

from tests.fakes.slack.model import MARKDOWN_LIMIT, ApiError

KNOWN = {"section", "actions", "context", "header", "divider", "markdown", "rich_text"}
MAX_BLOCKS = 50
SECTION_TEXT = 3_000
SECTION_FIELDS = 10
FIELD_TEXT = 2_000
HEADER_TEXT = 150
ACTIONS_ELEMENTS = 25
CONTEXT_ELEMENTS = 10
BUTTON_TEXT = 75
ACTION_ID = 255
BUTTON_VALUE = 2_000
BLOCK_ID = 255
STYLES = {"primary", "danger"}


def check_blocks(blocks: Any) -> list[dict[str, Any]]:
    """The blocks as Slack stores them (a block_id on each), or `ApiError("invalid_blocks")`."""
    if not isinstance(blocks, list):
        raise ApiError("invalid_blocks_format")
    errors: list[str] = []
    if len(blocks) > MAX_BLOCKS:
        errors.append(f"no more than {MAX_BLOCKS} items allowed [json-pointer:/blocks]")
    seen: set[str] = set()
    markdown_total = 0
    for index, block in enumerate(blocks):
        where = f"/blocks/{index}"
        if not isinstance(block, dict):
            errors.append(f"must be an object [json-pointer:{where}]")
            continue
        kind = block.get("type")
        if kind not in KNOWN:
            errors.append(f"unsupported type: {kind} [json-pointer:{where}/type]")
            continue
        errors += _block_id(block.get("block_id"), seen, where)
        if kind == "markdown":
            text = block.get("text")
            if not isinstance(text, str) or not text:
                errors.append(f"must provide a string [json-pointer:{where}/text]")
            else:
                markdown_total += len(text)
        else:
            errors += _check(kind, block, where)
    if markdown_total > MARKDOWN_LIMIT:
        errors.append(
            f"markdown blocks may hold at most {MARKDOWN_LIMIT} characters in total "
            "[json-pointer:/blocks]"
        )
    if errors:
        raise ApiError("invalid_blocks", extra={"errors": errors})
    return [_with_block_id(block) for block in blocks]


def _check(kind: str, block: dict[str, Any], where: str) -> list[str]:
    if kind == "section":
        return _section(block, where)
    if kind == "header":
        return _text(block.get("text"), f"{where}/text", HEADER_TEXT, plain_only=True)
    if kind == "actions":
        return _actions(block, where)
    if kind == "context":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 0 < len(elements) <= CONTEXT_ELEMENTS:
            return [f"must hold 1..{CONTEXT_ELEMENTS} elements [json-pointer:{where}/elements]"]
        errors: list[str] = []
        for i, element in enumerate(elements):
            if isinstance(element, dict) and element.get("type") == "image":
                continue
            errors += _text(element, f"{where}/elements/{i}", SECTION_TEXT)
        return errors
    if kind == "rich_text" and not isinstance(block.get("elements"), list):
        return [f"must provide an array [json-pointer:{where}/elements]"]
    return []  # divider


def _block_id(block_id: Any, seen: set[str], where: str) -> list[str]:
    """At most 255 characters and unique within the message."""
    if block_id is None:
        return []
    if not isinstance(block_id, str) or not 0 < len(block_id) <= BLOCK_ID:
        return [f"must be 1..{BLOCK_ID} characters [json-pointer:{where}/block_id]"]
    if block_id in seen:
        return [f"duplicate block_id {block_id} [json-pointer:{where}/block_id]"]
    seen.add(block_id)
    return []


def _section(block: dict[str, Any], where: str) -> list[str]:
    text, fields = block.get("text"), block.get("fields")
    if text is None and fields is None:
        return [f"must provide text or fields [json-pointer:{where}]"]
    errors: list[str] = []
    if text is not None:
        errors += _text(text, f"{where}/text", SECTION_TEXT)
    if fields is not None:
        if not isinstance(fields, list) or not 0 < len(fields) <= SECTION_FIELDS:
            errors.append(f"must hold 1..{SECTION_FIELDS} items [json-pointer:{where}/fields]")
        else:
            for i, item in enumerate(fields):
                errors += _text(item, f"{where}/fields/{i}", FIELD_TEXT)
    accessory = block.get("accessory")
    if isinstance(accessory, dict) and accessory.get("type") == "button":
        errors += _button(accessory, f"{where}/accessory")
    return errors


def _actions(block: dict[str, Any], where: str) -> list[str]:
    elements = block.get("elements")
    if not isinstance(elements, list) or not 0 < len(elements) <= ACTIONS_ELEMENTS:
        return [f"must hold 1..{ACTIONS_ELEMENTS} elements [json-pointer:{where}/elements]"]
    errors: list[str] = []
    action_ids: set[str] = set()
    for i, element in enumerate(elements):
        at = f"{where}/elements/{i}"
        if not isinstance(element, dict) or element.get("type") != "button":
            kind = element.get("type") if isinstance(element, dict) else None
            errors.append(f"unsupported type: {kind} [json-pointer:{at}/type]")
            continue
        errors += _button(element, at)
        action_id = element.get("action_id")
        if isinstance(action_id, str):
            if action_id in action_ids:
                errors.append(f"duplicate action_id {action_id} [json-pointer:{at}/action_id]")
            action_ids.add(action_id)
    return errors


def _button(element: dict[str, Any], at: str) -> list[str]:
    errors = _text(element.get("text"), f"{at}/text", BUTTON_TEXT, plain_only=True)
    action_id = element.get("action_id")
    if action_id is not None and (
        not isinstance(action_id, str) or not 0 < len(action_id) <= ACTION_ID
    ):
        errors.append(f"must be 1..{ACTION_ID} characters [json-pointer:{at}/action_id]")
    value = element.get("value")
    if value is not None and (not isinstance(value, str) or len(value) > BUTTON_VALUE):
        errors.append(f"must be at most {BUTTON_VALUE} characters [json-pointer:{at}/value]")
    style = element.get("style")
    if style is not None and style not in STYLES:
        errors.append(f"must be one of primary, danger [json-pointer:{at}/style]")
    return errors


def _text(obj: Any, at: str, limit: int, *, plain_only: bool = False) -> list[str]:
    """A text object: {"type": "plain_text"|"mrkdwn", "text": "..."} within `limit`."""
    if not isinstance(obj, dict):
        return [f"must provide an object [json-pointer:{at}]"]
    kinds = {"plain_text"} if plain_only else {"plain_text", "mrkdwn"}
    if obj.get("type") not in kinds:
        return [f"must be one of {', '.join(sorted(kinds))} [json-pointer:{at}/type]"]
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        return [f"must be more than 0 characters [json-pointer:{at}/text]"]
    if len(text) > limit:
        return [f"must be less than {limit + 1} characters [json-pointer:{at}/text]"]
    return []


def _with_block_id(block: dict[str, Any]) -> dict[str, Any]:
    """Slack gives every stored block a block_id; interactivity payloads name it."""
    if "block_id" in block:
        return dict(block)
    return {**block, "block_id": secrets.token_urlsafe(4)}
