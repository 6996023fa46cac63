"""Images posted with a message (`attachments`, base64 in JSON) reach the model as image
blocks, made to fit; a bad file gets a 4xx that names it, and nothing is queued for it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from PIL import Image

from bot.vocabulary.files import LONG_EDGE
from tests.fakes.llm import OPENAI_KEY, Reply
from tests.support.images import image_bytes, png_claiming
from tests.support.stack import Stack, read_events, recorded, texts

pytestmark = pytest.mark.e2e


def attached(data: bytes, name: str) -> dict[str, str]:
    return {"name": name, "media_type": "image/png", "data": base64.b64encode(data).decode()}


async def post(client: httpx.AsyncClient, session: str, body: dict[str, Any]) -> httpx.Response:
    async with client.stream("POST", f"/api/sessions/{session}/messages", json=body) as response:
        if response.status_code == 200:
            response.extensions["events"] = await read_events(response)
        else:
            await response.aread()
        return response


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_a_photo_reaches_the_model_scaled_and_the_reply_streams(
    stack: Stack, api: str
) -> None:
    """With the defaults: a 2400×1800 photo and a question, then a screenshot alone, through
    each API's SDK to its fake, which checks the images as the real API does."""
    if api == "openai":
        stack.env |= {"PARLEY_MODEL": "gpt-4o", "OPENAI_API_KEY": OPENAI_KEY,
                      "OPENAI_BASE_URL": stack.fake.openai_base_url}  # fmt: skip
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="A noisy photo."), Reply(text="A screenshot."))
    photo, screenshot = image_bytes((2400, 1800), "JPEG"), image_bytes((600, 400), "PNG")
    async with stack.client() as client:
        session = await stack.session(client)
        asked = await post(
            client, session, {"text": "What's this?", "attachments": [attached(photo, "a.jpg")]}
        )
        alone = await post(client, session, {"attachments": [attached(screenshot, "s.png")]})
    assert asked.status_code == alone.status_code == 200
    assert texts(asked.extensions["events"]) == "A noisy photo."
    assert texts(alone.extensions["events"]) == "A screenshot."
    first, second = stack.fake.requests
    assert first.api == api
    [(kind, sent)] = first.images()
    with Image.open(io.BytesIO(sent)) as seen:
        assert (kind, seen.format, seen.size) == (
            "image/jpeg", "JPEG", (LONG_EDGE, LONG_EDGE * 3 // 4),
        )  # fmt: skip
    assert "What's this?" in first.last_user_text()
    assert second.images() == [("image/png", screenshot)]  # it fits: as it was


ZIP = b"PK\x03\x04" + bytes(range(256))  # an archive: neither an image nor text
SMALL = {"PARLEY_MAX_FILE_MB": "0.25", "PARLEY_MAX_TURN_MB": "0.5"}


@pytest.mark.parametrize("stack", [SMALL], indirect=True)
async def test_bad_files_are_refused_by_name_and_nothing_is_queued(stack: Stack) -> None:
    fine = attached(image_bytes((20, 20)), "fine.png")
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"text": "hi", "attachments": [{"name": "x.png", "data": "not*base64"}]}, 422,
         "file 1 (x.png) is not valid base64"),
        ({"attachments": [fine, attached(b"%PDF-1.7\n%\xe2\xe3", "invoice.pdf")]}, 422,
         "“invoice.pdf”: the PDF is damaged"),
        ({"attachments": [attached(ZIP, "archive.zip")]}, 422,
         "“archive.zip”: this kind of file is not read"),
        ({"attachments": [attached(png_claiming(30_000, 30_000), "bomb.png")]}, 422,
         "“bomb.png”: the image is 30000×30000 pixels"),
        ({"attachments": [attached(image_bytes((400, 400)), "big.png")]}, 413,
         "files of at most 0.2 MB are read"),
        ({"attachments": [attached(b"x" * 700_000, "huge.png")]}, 413,
         "the body is larger than"),
        ({"attachments": [fine] * 11}, 422, "attachments: List should have at most 10 items"),
        ({"text": "  "}, 422, "the text is only whitespace"),
        ({}, 422, "a message needs a text or a file"),
    ]  # fmt: skip
    async with stack.client() as client:
        session = await stack.session(client)
        for body, status, said in cases:
            response = await post(client, session, body)
            answer = response.json()
            assert (response.status_code, response.headers["content-type"]) == (
                status, "application/json; charset=utf-8",
            ), answer  # fmt: skip
            assert said in str(answer), answer
        long_key = await client.post(
            f"/api/sessions/{session}/messages", json={"attachments": [fine]},
            headers={"Idempotency-Key": "k" * 201},
        )  # fmt: skip
    assert long_key.status_code == 400, long_key.text
    assert stack.fake.requests == []
    stored = [path for path in (stack.tmp / "files").rglob("*") if path.is_file()]
    assert stored == []  # nothing stored, not even the good file of a refused message


async def test_a_small_body_that_arrives_in_pieces_is_read_whole(stack: Stack) -> None:
    """A JSON body under the in-place size, its Content-Length announced, that comes in two
    packets a moment apart (a phone on a slow network): read to its end, not the first part."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="A small picture."))
    raw = json.dumps(
        {"text": "what is this?", "attachments": [attached(image_bytes((200, 120)), "p.png")]}
    ).encode()

    async def pieces() -> AsyncIterator[bytes]:
        yield raw[: len(raw) // 2]
        await asyncio.sleep(0.3)
        yield raw[len(raw) // 2 :]

    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", content=pieces(),
            headers={"Content-Length": str(len(raw)), "Content-Type": "application/json"},
        ) as answer:  # fmt: skip
            assert answer.status_code == 200, await answer.aread()
            assert texts(await read_events(answer)) == "A small picture."
    [request] = stack.fake.requests
    assert len(request.images()) == 1


async def test_sent_files_are_served_back_by_their_hash_only(stack: Stack) -> None:
    """GET /api/files/{sha256}: an image inline, anything else a download, the type read from
    the bytes and never sniffed by the browser; a name that is no SHA-256 is unknown."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Seen."))
    screenshot, table = image_bytes((60, 40), "PNG"), b"a,b\n1,2\n"
    async with stack.client() as client:
        session = await stack.session(client)
        body = {"attachments": [attached(screenshot, "s.png"), attached(table, "t.csv")]}
        assert (await post(client, session, body)).status_code == 200
        image = await client.get(f"/api/files/{hashlib.sha256(screenshot).hexdigest()}")
        text = await client.get(f"/api/files/{hashlib.sha256(table).hexdigest()}")
        unknown = await client.get(f"/api/files/{'0' * 64}")
        odd = await client.get("/api/files/..%2F..%2Fetc%2Fpasswd")
    assert (image.content, image.headers["content-type"]) == (screenshot, "image/png")
    assert image.headers["content-disposition"] == "inline"
    assert text.headers["content-type"] == "text/plain; charset=utf-8"
    assert text.headers["content-disposition"] == "attachment"
    assert {image.headers["x-content-type-options"], text.headers["x-content-type-options"]} == {
        "nosniff"
    }
    assert [unknown.status_code, odd.status_code] == [404, 404]
    assert unknown.json() == {"error": "unknown file"}


async def test_a_multipart_message_is_read_part_by_part(stack: Stack) -> None:
    """`curl -F text=... -F file=@...`: the text field and the files, each bounded as it is
    read; a field that is neither, or a file past the cap, is refused with nothing queued."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Two files."))
    screenshot, table = image_bytes((80, 60), "PNG"), b"a,b\n1,2\n"
    files = [("file", ("s.png", screenshot, "image/png")), ("file", ("t.csv", table, "text/csv"))]
    path = "/api/sessions/{}/messages"
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", path.format(session), data={"text": "Look."}, files=files
        ) as answer:
            assert answer.status_code == 200, await answer.aread()
            assert texts(await read_events(answer)) == "Two files."
        stranger = await client.post(path.format(session), data={"colour": "red"}, files=files[:1])
        huge = await client.post(
            path.format(session), files=[("file", ("big.bin", b"x" * (21 << 20), "x/y"))]
        )
        broken = await client.post(
            path.format(session), content=b"--nope\r\n",
            headers={"Content-Type": "multipart/form-data; boundary=elsewhere"},
        )  # fmt: skip
    [request] = stack.fake.requests
    assert request.images() == [("image/png", screenshot)]
    assert "a,b\\n1,2" in json.dumps(request.body["messages"])  # the CSV, as a document
    assert request.last_user_text().endswith("Look.")
    assert stranger.status_code == 422 and "colour: not a field" in stranger.text
    assert huge.status_code == 413 and "“big.bin” is larger than" in huge.json()["error"]
    assert broken.status_code in (400, 422), broken.text


async def test_a_deleted_session_s_files_go_with_it_unless_another_keeps_them(
    stack: Stack,
) -> None:
    """With the defaults: Ann's own photo goes with her session, the photo both sessions were
    sent stays for the other."""
    await stack.start_worker()
    stack.fake.responder = lambda request: Reply(text="Seen.")
    own, shared = image_bytes((300, 200), "PNG"), image_bytes((320, 200), "PNG")
    store = stack.tmp / "files"
    async with stack.client() as client:
        ann, ben = await stack.session(client), await stack.session(client)
        for session, photos in ((ann, [own, shared]), (ben, [shared])):
            body = {"text": "look", "attachments": [attached(p, "p.png") for p in photos]}
            assert (await post(client, session, body)).status_code == 200
        await recorded(stack, f"http:{ann}", 2)
        await recorded(stack, f"http:{ben}", 2)
        deleted = await client.delete(f"/api/sessions/http:{ann}")
    kept = {path.name for path in store.glob("*/*")}
    assert deleted.status_code == 200 and deleted.json()["files"] == 1
    assert hashlib.sha256(own).hexdigest() not in kept
    assert hashlib.sha256(shared).hexdigest() in kept
