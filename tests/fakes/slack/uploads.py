"""Files an app uploads, as Slack takes them since files.upload was retired: three steps.

1. `files.getUploadURLExternal` with `filename` and `length` (both required; a length that is
   no positive whole number, or past 1 GB, is `invalid_arguments`) gives a `file_id` and an
   `upload_url` on the fake's own host.
2. The bytes are POSTed to that URL; a body whose length is not the one announced is refused
   with a 400 (and the file stays unfinished), as is a URL that was used already.
3. `files.completeUploadExternal` with `files` (JSON: `[{"id", "title"}]`) shares them in
   `channel_id` (and the thread `thread_ts`, which must be a top-level message there) with an
   optional `initial_comment`. A file nobody got a URL for is `file_not_found`; one whose
   bytes never arrived is `file_upload_incomplete` (the fake's name: Slack's own answer is not
   documented).

Both methods are Tier 4 (`limits`). What was shared is kept, bytes included, for the tests.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.slack.model import TEXT_LIMIT, ApiError

if TYPE_CHECKING:
    from tests.fakes.slack.server import FakeSlack

MAX_BYTES = 1024 * 1024 * 1024
BODY_LIMIT = 64 * 1024 * 1024  # what the fake's server reads of one upload (tests stay below)


@dataclass
class Pending:
    filename: str
    length: int
    data: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Uploaded:
    """A file shared in a channel or thread."""

    id: str
    name: str
    title: str
    data: bytes = field(repr=False)
    channel: str = ""
    thread_ts: str | None = None
    comment: str | None = None


class Uploads:
    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.pending: dict[str, Pending] = {}
        self.shared: list[Uploaded] = []
        self.handlers = {
            "files.getUploadURLExternal": self.get_upload_url,
            "files.completeUploadExternal": self.complete,
        }

    def get_upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        filename = params.get("filename")
        if not isinstance(filename, str) or not filename:
            raise ApiError("invalid_arguments")
        try:
            length = int(str(params.get("length", "")))
        except ValueError:
            raise ApiError("invalid_arguments") from None
        if not 0 < length <= MAX_BYTES:
            raise ApiError("invalid_arguments")
        file_id = "F0" + secrets.token_hex(5).upper()
        self.pending[file_id] = Pending(filename, length)
        url = f"http://127.0.0.1:{self.fake.port}/upload/v1/{file_id}"
        return {"file_id": file_id, "upload_url": url}

    async def receive(self, request: web.Request) -> web.Response:
        pending = self.pending.get(request.match_info["file_id"])
        if pending is None or pending.data is not None:
            return web.Response(status=404, text="upload_url_invalid")
        data = await request.read()
        if len(data) != pending.length:
            return web.Response(status=400, text="length_mismatch")
        pending.data = data
        return web.Response(text=f"OK - {len(data)}")

    def complete(self, params: dict[str, Any]) -> dict[str, Any]:
        raw = params.get("files")
        try:
            files = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            raise ApiError("invalid_arguments") from None
        if not isinstance(files, list) or not files:
            raise ApiError("invalid_arguments")
        channel = self.fake.methods.channel(params, "channel_id")
        thread_ts = self.fake.methods.thread(channel, params.get("thread_ts"))
        comment = params.get("initial_comment")
        if comment is not None and len(str(comment)) > TEXT_LIMIT:
            raise ApiError("msg_too_long")
        ready = [self._ready(item) for item in files]
        answer = []
        for file_id, title in ready:
            pending = self.pending.pop(file_id)
            assert pending.data is not None
            self.shared.append(
                Uploaded(file_id, pending.filename, title or pending.filename, pending.data,
                         channel.id, thread_ts, comment)
            )  # fmt: skip
            answer.append({"id": file_id, "title": title or pending.filename})
        return {"files": answer}

    def _ready(self, item: Any) -> tuple[str, str]:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ApiError("invalid_arguments")
        pending = self.pending.get(item["id"])
        if pending is None:
            raise ApiError("file_not_found")
        if pending.data is None:
            raise ApiError("file_upload_incomplete")
        return item["id"], str(item.get("title") or "")
