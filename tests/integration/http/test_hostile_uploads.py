"""Hostile files and bodies at the API's door, with the defaults: each bomb or broken file in
JSON and in multipart gets a 422 naming the file (never a 500), nothing queued or stored; a
body that says it is too large is refused before a byte of it is read; a multipart body is
bounded in all, not only part by part."""

from __future__ import annotations

import asyncio
import base64
from urllib.parse import urlsplit

import httpx
import pytest

from tests.fakes import hostile_files
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


async def test_every_hostile_file_gets_a_422_that_names_it(stack: Stack) -> None:
    async with stack.client() as client:
        session = await stack.session(client)
        url = f"/api/sessions/{session}/messages"
        for make in hostile_files.ALL.values():
            name, data = make()
            as_json = {"text": "read this", "attachments": [
                {"name": name, "data": base64.b64encode(data).decode()}]}  # fmt: skip
            for response in (
                await client.post(url, json=as_json),
                await client.post(url, data={"text": "read this"}, files={"file": (name, data)}),
            ):
                assert response.status_code == 422, (name, response.text)
                assert f"“{name}”: " in response.json()["problems"][0], response.text
    assert stack.fake.requests == []
    assert [path for path in (stack.tmp / "files").rglob("*") if path.is_file()] == []


async def test_a_body_announced_too_large_is_refused_before_it_is_read(stack: Stack) -> None:
    """Headers that announce 200 MB, and no body at all: the answer comes at once."""
    address = urlsplit(stack.base_url)
    async with stack.client() as client:
        session = await stack.session(client)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    writer.write(
        f"POST /api/sessions/{session}/messages HTTP/1.1\r\nHost: {address.netloc}\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 200000000\r\n\r\n"
        .encode()
    )  # fmt: skip
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    assert status.startswith(b"HTTP/1.1 413"), status


async def test_a_multipart_body_is_bounded_in_all_and_takes_one_text(stack: Stack) -> None:
    """Three files of 19 MB each pass the file cap (20 MB) one by one but not the message's
    (50 MB); the body is sent chunked, so no Content-Length announces it. Two text fields
    are refused too."""

    async def chunked() -> object:
        for index in range(3):
            yield (
                f'--b\r\nContent-Disposition: form-data; name="file"; filename="{index}.txt"'
                "\r\nContent-Type: text/plain\r\n\r\n"
            ).encode()
            for _ in range(19):
                yield b"a" * (1024 * 1024)
            yield b"\r\n"
        yield b"--b--\r\n"

    async with stack.client() as client:
        session = await stack.session(client)
        url = f"/api/sessions/{session}/messages"
        headers = {"Content-Type": "multipart/form-data; boundary=b"}
        too_much = await client.post(url, content=chunked(), headers=headers)  # type: ignore[arg-type]
        twice = await client.post(url, files=[("text", (None, "one")), ("text", (None, "two"))])
    assert too_much.status_code == 413, too_much.text
    assert "a message's files may come to 50 MB" in too_much.text
    assert twice.status_code == 422 and "send one text and files" in twice.text, twice.text
    assert isinstance(too_much, httpx.Response)


async def test_a_large_json_body_is_read_by_a_child_and_bounded_as_it_streams(
    stack: Stack,
) -> None:
    """Bodies past 256 KB are parsed and decoded out of the web process: broken JSON is a 400,
    a bad field a 422 naming it; one sent chunked past the message's limit is a 413."""
    padding = "a" * 400_000

    async def chunked() -> object:
        yield b'{"text": "hi", "attachments": [{"name": "x.bin", "data": "'
        for _ in range(80):
            yield b"QUFB" * (256 * 1024)  # 1 MB of base64 a time: 80 MB, past 50 MB decoded
        yield b'"}]}'

    async with stack.client() as client:
        session = await stack.session(client)
        url = f"/api/sessions/{session}/messages"
        broken = await client.post(url, content=b'{"text": "' + padding.encode())
        extra = await client.post(url, json={"text": "hi", "padding": padding})
        headers = {"Content-Type": "application/json"}
        too_much = await client.post(url, content=chunked(), headers=headers)  # type: ignore[arg-type]
    assert broken.status_code == 400 and "not valid JSON" in broken.text, broken.text
    assert extra.status_code == 422 and "padding: Extra inputs" in extra.text, extra.text
    assert too_much.status_code == 413, too_much.text
    assert stack.fake.requests == []
