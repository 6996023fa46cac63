"""A stdio server's stdout cut into messages within bounds, whatever order its SDK writes a
message's keys in and however the pipe splits it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from mcp.shared.message import SessionMessage
from mcp_types import CallToolResult, JSONRPCError, JSONRPCRequest, JSONRPCResponse

from bot.mcp.output import MESSAGE_LIMIT, Garbled, StdoutLines, was_cut

LIMIT = 1000  # characters of a result the model may see


def lines(chunks: Iterable[bytes], limit: int = LIMIT) -> list[SessionMessage]:
    reader = StdoutLines(limit)
    return [message for chunk in chunks for message in reader.feed(chunk)]


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def result_line(text: str, *, id_last: bool, **extra: Any) -> bytes:
    """A tool's result as the Python SDK writes it (id first) or the TypeScript one (last),
    with the `extra` keys of the result before its content."""
    result = {**extra, "content": [{"type": "text", "text": text}], "structuredContent": {}}
    message = (
        {"result": result, "jsonrpc": "2.0", "id": 7}
        if id_last
        else {"jsonrpc": "2.0", "id": 7, "result": result}
    )
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def test_messages_split_anywhere_are_read_whole_and_blank_lines_are_let_through() -> None:
    stream = b"\n" + result_line("héllo", id_last=False) + b"  \n" + result_line("x", id_last=True)
    for size in (1, 7, 64, len(stream)):
        read = lines(pieces(stream, size))
        assert [type(m.message) for m in read] == [JSONRPCResponse, JSONRPCResponse]
        first = read[0].message
        assert isinstance(first, JSONRPCResponse)
        assert first.result["content"][0]["text"] == "héllo"


@pytest.mark.parametrize("id_last", [False, True])
def test_a_huge_result_answers_its_call_with_its_start_and_a_true_note(id_last: bool) -> None:
    text = "début " + "é" * 3_000_000
    line = result_line(text, id_last=id_last, isError=True)
    (read,) = lines(pieces(line, 65536))
    assert isinstance(read.message, JSONRPCResponse) and read.message.id == 7
    result = CallToolResult.model_validate(read.message.result)
    assert was_cut(result) and result.is_error
    shown = result.content[0].text  # type: ignore[union-attr]
    assert shown.startswith("début éé") and len(shown) <= LIMIT
    note = f"cut as it arrived: {len(line) - 1:,} bytes, of which the first 8,096 were read]"
    assert shown.endswith(note)
    assert result.structured_content is None


def test_a_huge_message_that_is_no_result_answers_its_request_with_an_error() -> None:
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(120_000)]
    line = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"tools": tools}}).encode() + b"\n"
    assert len(line) > MESSAGE_LIMIT
    (read,) = lines(pieces(line, 65536))
    assert isinstance(read.message, JSONRPCError) and read.message.id == 3
    assert read.message.error.message == (
        f"the answer was {len(line) - 1:,} bytes, past the limit of {MESSAGE_LIMIT:,}"
    )


def test_a_huge_request_of_the_server_answers_none_of_ours() -> None:
    big = {"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}}
    big["params"] = {"text": "x" * (MESSAGE_LIMIT + 10)}
    ping = {"jsonrpc": "2.0", "id": 8, "method": "ping"}
    stream = json.dumps(big).encode() + b"\n" + json.dumps(ping).encode() + b"\n"
    (read,) = lines(pieces(stream, 65536))
    assert isinstance(read.message, JSONRPCRequest) and read.message.id == 8


def test_a_few_lines_that_are_not_json_rpc_are_let_through_then_the_server_is_given_up() -> None:
    reader = StdoutLines(LIMIT)
    banner = b"Server running on stdio\n" * 4
    assert list(reader.feed(banner + result_line("ok", id_last=False)))  # the message counts
    with pytest.raises(Garbled) as raised:
        list(reader.feed(b"{not json\n"))
    assert str(raised.value) == (
        "it wrote 5 lines that are not JSON-RPC to stdout, the first: 'Server running on stdio'"
    )
