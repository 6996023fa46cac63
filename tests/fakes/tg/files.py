"""Files people send the bot, as the Bot API serves them: `getFile` gives a `file_path` for a
`file_id` (refused past the 20 MB a bot may download), and the bytes are read from
`/file/bot<token>/<file_path>`. A photo comes in the sizes Telegram makes of it (the long
edge at 90, 320, 800 and 1280 px, and 2560 where the original is that large), each a file of
its own; a document is the file as it was sent; a voice note, an audio file and a video note
are the recording as it was sent, with the length and type the client announced."""

from __future__ import annotations

import asyncio
import io
import itertools
import secrets
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from PIL import Image

from tests.fakes.tg.model import ApiError, bad

DOWNLOAD_CAP = 20 * 1024 * 1024  # what the Bot API lets a bot download
PHOTO_EDGES = (90, 320, 800, 1280, 2560)


@dataclass
class Stored:
    data: bytes
    unique_id: str
    path: str


@dataclass
class Shelf:
    """The files of the fake, by file_id, and what bots downloaded."""

    files: dict[str, Stored] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)  # file paths, in order
    failing: int = 0  # downloads still to answer 502, as a file server that is down
    held: asyncio.Event | None = None  # while set to an unset event, downloads wait on it
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, data: bytes, folder: str, suffix: str) -> tuple[str, Stored]:
        file_id = "AgAC" + secrets.token_urlsafe(24)
        path = f"{folder}/file_{next(self._numbers)}{suffix}"
        stored = Stored(data, secrets.token_urlsafe(8), path)
        self.files[file_id] = stored
        return file_id, stored

    def photo_sizes(self, data: bytes) -> list[dict[str, Any]]:
        """The PhotoSize list of a photo, smallest first, as Telegram resizes it (JPEG)."""
        with Image.open(io.BytesIO(data)) as original:
            picture = original.convert("RGB")
        long_edge = max(picture.size)
        sizes = []
        for edge in [e for e in PHOTO_EDGES if e < long_edge] + [min(long_edge, 2560)]:
            scaled = picture.copy()
            scaled.thumbnail((edge, edge))
            out = io.BytesIO()
            scaled.save(out, "JPEG", quality=87)
            file_id, stored = self.add(out.getvalue(), "photos", ".jpg")
            width, height = scaled.size
            size = {"width": width, "height": height, "file_size": len(stored.data)}
            sizes.append({"file_id": file_id, "file_unique_id": stored.unique_id, **size})
        return sizes

    def document(self, data: bytes, name: str, mime_type: str) -> dict[str, Any]:
        suffix = "." + name.rsplit(".", 1)[1] if "." in name else ""
        file_id, stored = self.add(data, "documents", suffix)
        return {"file_id": file_id, "file_unique_id": stored.unique_id, "file_name": name,
                "mime_type": mime_type, "file_size": len(data)}  # fmt: skip

    def recording(
        self, kind: str, data: bytes, duration: int, mime_type: str, name: str = ""
    ) -> dict[str, Any]:
        """A `voice`, `audio` or `video_note` object (a video note is square, MP4, no type)."""
        suffix = {"voice": ".oga", "audio": ".mp3", "video_note": ".mp4"}[kind]
        file_id, stored = self.add(data, f"{kind}s", suffix)
        found: dict[str, Any] = {"file_id": file_id, "file_unique_id": stored.unique_id,
                                 "duration": duration, "file_size": len(data)}  # fmt: skip
        if kind == "video_note":
            return found | {"length": 240}
        if name:
            found["file_name"] = name
        return found | {"mime_type": mime_type}

    def get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = params.get("file_id")
        if not file_id:
            raise bad("file_id is empty")
        stored = self.files.get(str(file_id))
        if stored is None:
            raise bad("invalid file_id")
        if len(stored.data) > DOWNLOAD_CAP:
            raise bad("file is too big")
        return {"file_id": file_id, "file_unique_id": stored.unique_id,
                "file_size": len(stored.data), "file_path": stored.path}  # fmt: skip

    async def serve(self, request: web.Request, token: str) -> web.StreamResponse:
        if request.match_info["token"] != token:
            return web.json_response(ApiError(401, "Unauthorized").wire(), status=401)
        path = request.match_info["path"]
        found = next((s for s in self.files.values() if s.path == path), None)
        if found is None or len(found.data) > DOWNLOAD_CAP:
            return web.json_response(ApiError(404, "Not Found").wire(), status=404)
        if self.failing:
            self.failing -= 1
            return web.Response(status=502, text="Bad Gateway")
        if self.held is not None:
            await self.held.wait()
        self.downloads.append(path)
        return web.Response(body=found.data, content_type="application/octet-stream")
