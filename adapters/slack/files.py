"""A Slack message's files for the intake (`adapters.chat.intake.Files`): what the event
announces (each file's name and size), and the download, made only once the message passed
every other step.

A file is downloaded from its `url_private_download` with the bot token (the app needs the
`files:read` scope), and only from Slack's own hosts: the API's host (`SLACK_API_URL`) or its
`files.` host, over the same scheme, so the token is never sent anywhere an event names. A
download reads at most the largest file a message may carry. Slack answers a request it does
not accept with its sign-in page (HTML, status 200), not an error; that, a file hidden by the
workspace's plan or an external file is refused with one sentence naming the file.

An audio file, and a voice clip recorded in Slack (`subtype` `slack_audio`), is a recording:
its length, when Slack says it, is checked before the download, and its bytes are heard
rather than stored (`bot.files.voice`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from aiohttp import ClientError, ClientTimeout
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.intake import Files
from bot.files.intake import Arrived, Refused, called

CHUNK = 64 * 1024
DOWNLOAD_S = 30.0  # a file that takes longer is asked for again


class SharedFile(BaseModel):
    """The parts of Slack's file object a download needs, read strictly."""

    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(default="", max_length=255)
    size: int = Field(default=0, ge=0)
    url_private_download: str | None = Field(default=None, max_length=2000)
    mimetype: str = Field(default="", max_length=200)
    subtype: str = Field(default="", max_length=100)
    duration_ms: int = Field(default=0, ge=0)

    @property
    def is_recording(self) -> bool:
        return self.mimetype.startswith("audio/") or self.subtype == "slack_audio"


def files_of(
    event: dict[str, Any], client: AsyncWebClient, api_url: str, most: int
) -> Files | None:
    """The files shared with the message of `event`, or None when it has none."""
    raw = event.get("files")
    if not isinstance(raw, list) or not raw:
        return None
    shared = [_read(item) for item in raw]

    async def fetch() -> list[Arrived]:
        return [await _download(file, client, api_url, most) for file in shared]

    recordings = tuple(file.duration_ms / 1000 for file in shared if file.is_recording)
    return Files(tuple((file.name, file.size or 1) for file in shared), fetch, recordings)


def _read(item: Any) -> SharedFile:
    try:
        return SharedFile.model_validate(item)
    except ValidationError:
        return SharedFile()  # refused by name when it is to be downloaded


def allowed(url: str, api_url: str) -> bool:
    """Whether `url` is on Slack's own hosts (see the module doc)."""
    api, there = urlsplit(api_url), urlsplit(url)
    hosts = {api.netloc, f"files.{api.netloc}"}
    return there.scheme == api.scheme and there.netloc in hosts and not there.username


async def _download(file: SharedFile, client: AsyncWebClient, api_url: str, most: int) -> Arrived:
    said = called(file.name)
    url = file.url_private_download
    if url is None or not allowed(url, api_url):
        raise Refused(f"{said} cannot be downloaded from Slack by the app")
    try:
        data = await _bytes(url, client, most, said)
        return Arrived(data, file.name, recording=file.is_recording)
    except (ClientError, TimeoutError):
        raise Refused(f"Slack did not hand {said} over in time; send it again") from None


async def _bytes(url: str, client: AsyncWebClient, most: int, said: str) -> bytes:
    headers = {"Authorization": f"Bearer {client.token}"}
    assert client.session is not None  # `client.make_client` gives it its session
    timeout = ClientTimeout(total=DOWNLOAD_S)
    get = client.session.get(url, headers=headers, allow_redirects=False, timeout=timeout)
    async with get as response:
        kind = response.headers.get("Content-Type", "")
        if response.status != 200 or kind.startswith("text/html"):
            raise Refused(f"Slack did not hand {said} over (is the files:read scope granted?)")
        data = bytearray()
        async for chunk in response.content.iter_chunked(CHUNK):
            data += chunk
            if len(data) > most:
                raise Refused(f"{said} is larger than Slack said; at most {most} bytes are read")
    return bytes(data)
