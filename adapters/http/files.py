"""`GET /api/files/{sha256}`: a file a person sent, served back to the API's clients (the web
chat shows a conversation's images from here).

A file is named by its SHA-256 alone, which only the messages that carry it know: the name is
the capability, behind the API's token like every route. What the file is comes from its
bytes, never from a name; only images are shown in the page (`inline`), anything else is a
download, and `nosniff` keeps a browser from taking a text for a page. A file never changes
under its name, so a browser may keep it for good.
"""

from __future__ import annotations

import asyncio
import re

from aiohttp import web

from adapters.web.input import error
from bot.files.intake import kind_of
from bot.files.store import FileMissing, FileStore
from bot.vocabulary.files import IMAGE_TYPES

SHA256 = re.compile(r"[0-9a-f]{64}")


class Files:
    def __init__(self, store: FileStore) -> None:
        self.store = store

    async def get(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["sha256"]
        if not SHA256.fullmatch(name):
            return error(404, "unknown file")
        try:
            data = await asyncio.to_thread(self.store.path(name).read_bytes)
        except (FileMissing, FileNotFoundError):
            return error(404, "unknown file")
        kind = await asyncio.to_thread(kind_of, data)
        shown = "inline" if kind in IMAGE_TYPES else "attachment"
        headers = {
            "Cache-Control": "private, max-age=31536000, immutable",
            "Content-Disposition": shown,
            "X-Content-Type-Options": "nosniff",
        }
        media_type, _, charset = kind.partition("; charset=")
        return web.Response(
            body=data, headers=headers, content_type=media_type, charset=charset or None
        )
