"""Files people share in Slack, as the Web API describes and serves them: a file object in
the message event (`files`, with the subtype `file_share` on `message` events), and its bytes
at `url_private_download`, for a request that carries the bot token (held back, while a
test holds them, like a slow file server). A request without it gets
what Slack serves then: a 200 with the HTML of its sign-in page, not the file. A voice clip
recorded in Slack is a file with the subtype `slack_audio` and its length (`clip`)."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.slack.model import BOT_TOKEN, TEAM_ID

SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


@dataclass
class Shared:
    data: bytes
    name: str
    mimetype: str


@dataclass
class SlackFiles:
    """The workspace's files by id, and the downloads made with the bot token."""

    files: dict[str, Shared] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)  # file ids, in order
    waiting: int = 0  # downloads held back now
    _held: asyncio.Event | None = None

    def hold(self) -> asyncio.Event:
        """Downloads wait until the returned event is set (`waiting` counts them)."""
        self._held = asyncio.Event()
        return self._held

    def add(
        self,
        data: bytes,
        name: str,
        mimetype: str,
        user: str,
        root: str,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new file, as the file object Slack puts in the event; `root` is the fake's
        address (its files are served next to its API, as Slack's are on files.slack.com);
        `extra`, fields of its kind (a clip's)."""
        file_id = "F0" + secrets.token_hex(5).upper()
        self.files[file_id] = Shared(data, name, mimetype)
        path = f"{root}files-pri/{TEAM_ID}-{file_id}/"
        now = int(time.time())
        return {
            "id": file_id, "created": now, "timestamp": now, "name": name, "title": name,
            "mimetype": mimetype, "filetype": name.rsplit(".", 1)[-1] if "." in name else "",
            "user": user, "size": len(data), "mode": "hosted", "is_external": False,
            "url_private": path + name, "url_private_download": f"{path}download/{name}",
            "permalink": f"https://fake.slack.test/files/{user}/{file_id}/{name}",
            **(extra or {}),
        }  # fmt: skip

    async def serve(self, request: web.Request) -> web.Response:
        team_file = request.match_info["team_file"]
        file_id = team_file.removeprefix(f"{TEAM_ID}-")
        shared = self.files.get(file_id)
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            return web.Response(text=SIGN_IN_PAGE, content_type="text/html")
        if shared is None:
            return web.Response(status=404, text="file_not_found")
        if self._held is not None:
            self.waiting += 1
            try:
                await self._held.wait()
            finally:
                self.waiting -= 1
        self.downloads.append(file_id)
        return web.Response(body=shared.data, content_type=shared.mimetype)


def clip(data: bytes, seconds: float) -> tuple[bytes, str, str, dict[str, Any]]:
    """A voice clip recorded in Slack (WebM, as a browser records it), for `FakeSlack.say`."""
    extra = {"subtype": "slack_audio", "media_display_type": "audio",
             "duration_ms": int(seconds * 1000)}  # fmt: skip
    return data, "audio_message.webm", "audio/webm", extra
