"""An MCP tool result as the text a model reads.

Text blocks are joined; structured content stands in as JSON when there is no text; images
and audio become a short note (the model cannot see them through a tool result here), an
embedded resource its text, a resource link its URI. `isError` becomes a `ToolError` with the
server's own words, so the model reads them as a failed call.
"""

from __future__ import annotations

import json

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from bot.tools.base import ToolError


def result_text(server: str, result: CallToolResult) -> str:
    parts = [_block(block) for block in result.content]
    has_text = any(isinstance(block, TextContent) for block in result.content)
    if not has_text and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = "\n".join(part for part in parts if part)
    if result.is_error:
        raise ToolError(text or f"the MCP server {server} reported an error without a message")
    return text


def _block(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        return f"[{block.mime_type}, {_size(block.data)}]"
    if isinstance(block, EmbeddedResource):
        inner = block.resource
        if isinstance(inner, BlobResourceContents):
            kind = inner.mime_type or "binary data"
            return f"[{kind}, {_size(inner.blob)}: {inner.uri}]"
        return inner.text
    if isinstance(block, ResourceLink):
        return str(block.uri)
    return f"[{getattr(block, 'type', 'unknown')} content]"  # a kind newer than this client


def _size(base64_data: str) -> str:
    """The decoded size of base64 data, as a person would say it."""
    size = len(base64_data) * 3 // 4 - base64_data[-2:].count("=")
    return f"{size} bytes" if size < 1024 else f"{round(size / 1024):,} KB"
