"""chat.startStream / appendStream / stopStream: a bot message that grows in a thread.

A stream lives in a thread, needs its recipient outside DMs, holds at most 12,000 characters
of markdown in total, and expires (keeping what it showed) when nothing is appended for
`stream_ttl` seconds; after that, or after stopStream, appending is refused with
`message_not_in_streaming_state` and the message can only be edited with chat.update.
Chunks are checked as Slack documents them: `markdown_text` adds text, `task_update` creates
or updates a task of the message (its id, title, a status of four, details and output of at
most 256 characters), `plan_update` titles the plan; any other kind is refused.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tests.fakes.slack.blocks import check_blocks
from tests.fakes.slack.methods import json_param
from tests.fakes.slack.model import BOT_ID, BOT_USER_ID, MARKDOWN_LIMIT, ApiError, Posted

if TYPE_CHECKING:
    from tests.fakes.slack.methods import Methods
    from tests.fakes.slack.server import FakeSlack


TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
TASK_TEXT = 256
DISPLAY_MODES = {"timeline", "plan"}


def _task(chunk: dict[str, Any]) -> dict[str, Any]:
    ident, title, status = chunk.get("id"), chunk.get("title"), chunk.get("status")
    if not isinstance(ident, str) or not ident or not isinstance(title, str) or not title:
        raise ApiError("invalid_arguments")
    if status not in TASK_STATUSES:
        raise ApiError("invalid_arguments")
    for name in ("details", "output"):
        value = chunk.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > TASK_TEXT):
            raise ApiError("invalid_arguments")
    return {k: chunk[k] for k in ("id", "title", "status", "details", "output") if k in chunk}


def chunk_text(chunk: Any, tasks: list[dict[str, Any]]) -> str:
    """The text a chunk adds; a task update goes to `tasks`."""
    if not isinstance(chunk, dict) or not isinstance(chunk.get("type"), str):
        raise ApiError("invalid_arguments")
    kind = chunk["type"]
    if kind == "markdown_text" and isinstance(chunk.get("text"), str):
        return str(chunk["text"])
    if kind == "task_update":
        tasks.append(_task(chunk))
        return ""
    if kind == "plan_update" and isinstance(chunk.get("title"), str):
        return ""
    raise ApiError("invalid_arguments")


def streamed_text(
    params: dict[str, Any], *, required: bool, tasks: list[dict[str, Any]] | None = None
) -> str:
    """markdown_text followed by the markdown_text chunks; task updates go to `tasks`."""
    markdown = params.get("markdown_text")
    chunks = json_param(params, "chunks")
    if required and markdown is None and chunks is None:
        raise ApiError("invalid_arguments")
    if markdown is not None and not isinstance(markdown, str):
        raise ApiError("invalid_arguments")
    parts = [markdown or ""]
    if chunks is not None:
        if not isinstance(chunks, list):
            raise ApiError("invalid_arguments")
        parts += [chunk_text(chunk, tasks if tasks is not None else []) for chunk in chunks]
    text = "".join(parts)
    if len(text) > MARKDOWN_LIMIT:
        raise ApiError("msg_too_long")
    return text


class Streams:
    def __init__(self, fake: FakeSlack, methods: Methods) -> None:
        self.fake = fake
        self.methods = methods
        self.handlers = {
            "chat.startStream": self.start,
            "chat.appendStream": self.append,
            "chat.stopStream": self.stop,
        }

    def start(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.fake.streaming_enabled:
            raise ApiError("feature_not_enabled")
        channel = self.methods.channel(params)
        if not params.get("thread_ts"):
            raise ApiError("invalid_arguments")
        thread_ts = self.methods.thread(channel, str(params["thread_ts"]))
        if not channel.is_im:
            if not params.get("recipient_user_id"):
                raise ApiError("missing_recipient_user_id")
            if not params.get("recipient_team_id"):
                raise ApiError("missing_recipient_team_id")
        recipient = params.get("recipient_user_id")
        if recipient is not None and recipient not in self.fake.users:
            raise ApiError("user_not_found")
        if params.get("task_display_mode", "plan") not in DISPLAY_MODES:
            raise ApiError("invalid_arguments")
        tasks: list[dict[str, Any]] = []
        text = streamed_text(params, required=False, tasks=tasks)
        message = Posted(
            ts=self.fake.clock.next(),
            channel=channel.id,
            user=BOT_USER_ID,
            bot_id=BOT_ID,
            thread_ts=thread_ts,
            streaming="streaming",
            streamed=text,
        )
        message.update_tasks(tasks)
        self.fake.store(message)
        self.fake.echo(message)
        return {"channel": channel.id, "ts": message.ts}

    def _streaming(self, params: dict[str, Any]) -> Posted:
        _, message = self.methods.message(params)
        if message.deleted:
            raise ApiError("message_not_found")
        if not message.is_bot or message.streaming != "streaming":
            raise ApiError("message_not_in_streaming_state")
        return message

    def _grow(self, message: Posted, text: str) -> None:
        if len(message.streamed) + len(text) > MARKDOWN_LIMIT:
            raise ApiError("msg_too_long")
        message.streamed += text
        message.touched = time.monotonic()

    def append(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming(params)
        tasks: list[dict[str, Any]] = []
        self._grow(message, streamed_text(params, required=True, tasks=tasks))
        message.update_tasks(tasks)
        return {"channel": message.channel, "ts": message.ts}

    def stop(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming(params)
        tasks: list[dict[str, Any]] = []
        text = streamed_text(params, required=False, tasks=tasks)
        message.update_tasks(tasks)
        blocks = json_param(params, "blocks", "invalid_blocks_format")
        checked = None if blocks is None else check_blocks(blocks)
        self._grow(message, text)
        if checked is not None:
            message.blocks = checked
        message.streaming = "stopped"
        return {"channel": message.channel, "ts": message.ts, "message": message.wire()}
