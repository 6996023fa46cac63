"""Files a reply posts in Slack: uploaded into the reply's thread (or channel) with files.uploadV2.

slack_sdk's `files_upload_v2` makes Slack's three steps: `files.getUploadURLExternal` with
the name and length, the bytes posted to the URL it gives, and `files.completeUploadExternal`
that shares the file in the channel and thread. The whole upload is one call that must land
under the shared budget, taking a token of both methods' tier (Tier 4 each), so many
uploads from many workers stay inside Slack's limits as the reply's messages do. Slack
shows an image inline, a reply said aloud (Opus in Ogg) as an audio file it plays, and any
other file as a download. The bytes come from the file store
in a thread; when Slack refuses the file (an error of files.completeUploadExternal, such as
`not_in_channel`), or it is gone from the store, the thread is told in one sentence, the log
says why, and the reply is told why (`NotPosted`), for the model to read instead of "sent".
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_sdk.errors import SlackApiError, SlackRequestError

from adapters.chat.reply_stream import NotPosted
from adapters.slack.client import SlackCalls
from adapters.slack.place import Place
from bot.files.store import FileMissing, FileStore
from bot.telemetry import metrics
from bot.vocabulary import events as ev

log = logging.getLogger(__name__)
METHODS = ("files.getUploadURLExternal", "files.completeUploadExternal")
MAX_BYTES = 1024 * 1_048_576  # what Slack takes in one file


class Uploads:
    """Posts a reply's files in `place`."""

    def __init__(self, calls: SlackCalls, place: Place, files: FileStore) -> None:
        self.calls = calls
        self.place = place
        self.files = files

    async def post(self, event: ev.FileSent) -> str:
        """The shared file's id; `NotPosted` when the file could not be posted (told)."""
        ref, place = event.file, self.place
        name = ref.name or "file"
        try:
            data = await asyncio.to_thread(self.files.read, ref)
        except FileMissing as exc:
            log.warning("cannot post a file in %s: %s", place.session, exc)
            await self._tell(f"⚠️ I could not send “{name}”: it is no longer stored.")
            raise NotPosted("it is no longer stored") from None
        if len(data) > MAX_BYTES:
            await self._tell(f"⚠️ I could not send “{name}”: Slack takes files up to 1 GB.")
            raise NotPosted("Slack takes files up to 1 GB")

        async def upload() -> Any:
            return await self.calls.client.files_upload_v2(
                filename=name,
                content=data,
                title=name,
                channel=place.channel,
                thread_ts=place.thread_ts,
                initial_comment=event.caption or None,
            )

        scopes = [s for method in METHODS for s in self.calls.scopes(place.team, method)]
        try:
            done = await self.calls.paced(upload, scopes, must_land=True, method="files.uploadV2")
        except (SlackApiError, SlackRequestError, *SlackCalls.transient) as exc:
            why = self.calls.reason(exc)
            log.warning("Slack refused a file in %s: %s", place.session, why)
            await self._tell(f"⚠️ I could not send “{name}”: Slack refused it.")
            raise NotPosted(f"Slack refused it ({why})") from None
        if done is None:  # pragma: no cover (a call that must land is never skipped)
            raise NotPosted("it was not posted")
        if event.voice_seconds is None:
            kind = "image" if ref.is_image else "document"
            metrics.FILES_SENT.labels("slack", kind).inc()
        return str(done["file"]["id"])

    async def _tell(self, text: str) -> None:
        place = self.place
        await self.calls.quietly(
            "chat.postMessage", place.team, channel=place.channel, thread_ts=place.thread_ts,
            text=text,
        )  # fmt: skip
