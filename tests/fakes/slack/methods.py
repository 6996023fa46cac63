"""The Web API methods the fake serves (all but streaming), each checked as Slack checks it.

Error names follow Slack's documentation; where Slack's own answer is unknown the fake picks
one name and uses it everywhere (see `content`): markdown_text over 12,000 characters is
`msg_too_long`, as for a stream, and a missing required argument is `invalid_arguments`.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from tests.fakes.slack.blocks import check_blocks
from tests.fakes.slack.model import (
    BOT_ID,
    BOT_USER_ID,
    MARKDOWN_LIMIT,
    TEAM_DOMAIN,
    TEAM_ID,
    TEXT_LIMIT,
    ApiError,
    Posted,
    SlackChannel,
)

if TYPE_CHECKING:
    from tests.fakes.slack.server import FakeSlack

MAX_PROMPTS = 4


def text_param(params: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = params.get(name)
    if value is None or value == "":
        if required:
            raise ApiError("invalid_arguments")
        return None
    if not isinstance(value, str):
        raise ApiError("invalid_arguments")
    return value


def json_param(params: dict[str, Any], name: str, error: str = "invalid_arguments") -> Any:
    """A structured argument; form-encoded calls carry it as a JSON string."""
    value = params.get(name)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise ApiError(error) from None
    return value


class Content:
    """The visible content of a message in a call: text, markdown_text, blocks."""

    def __init__(self, params: dict[str, Any], *, required: bool = True) -> None:
        text = params.get("text")
        markdown = params.get("markdown_text")
        blocks = json_param(params, "blocks", "invalid_blocks_format")
        if markdown is not None and (text or blocks is not None):
            raise ApiError("markdown_text_conflict")
        if required and not text and not blocks and not markdown:
            raise ApiError("no_text")
        if text is not None and not isinstance(text, str):
            raise ApiError("invalid_arguments")
        if markdown is not None and not isinstance(markdown, str):
            raise ApiError("invalid_arguments")
        if text is not None and len(text) > TEXT_LIMIT:
            raise ApiError("msg_too_long")
        if markdown is not None and len(markdown) > MARKDOWN_LIMIT:
            raise ApiError("msg_too_long")
        self.text: str = text or ""
        self.markdown: str | None = markdown
        self.blocks: list[dict[str, Any]] | None = None if blocks is None else check_blocks(blocks)
        self.given = bool(text or blocks or markdown)

    def apply(self, message: Posted) -> None:
        message.text = self.text
        message.markdown_text = self.markdown
        message.blocks = self.blocks
        message.streamed = ""  # an update replaces what a stream showed


class Methods:
    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.handlers = {
            "auth.test": self.auth_test,
            "chat.postMessage": self.post_message,
            "chat.update": self.update,
            "chat.delete": self.delete,
            "chat.postEphemeral": self.post_ephemeral,
            "assistant.threads.setStatus": self.set_status,
            "assistant.threads.setSuggestedPrompts": self.set_suggested_prompts,
            "assistant.threads.setTitle": self.set_title,
        }

    # --- lookups -----------------------------------------------------------------------------

    def channel(self, params: dict[str, Any], name: str = "channel") -> SlackChannel:
        channel = self.fake.channels.get(str(params.get(name) or ""))
        if channel is None:
            raise ApiError("channel_not_found")
        return channel

    def thread(self, channel: SlackChannel, thread_ts: str | None) -> str | None:
        """A thread is a top-level message of the channel; replying to a reply's ts is refused
        (Slack advises against it; the fake is strict so the mistake shows)."""
        if thread_ts is None or thread_ts == "":
            return None
        parent = self.fake.find(channel.id, str(thread_ts))
        if parent is None or parent.thread_ts is not None:
            raise ApiError("thread_not_found")
        return parent.ts

    def message(self, params: dict[str, Any]) -> tuple[SlackChannel, Posted]:
        channel = self.channel(params)
        found = self.fake.find(channel.id, str(params.get("ts") or ""))
        if found is None:
            raise ApiError("message_not_found")
        self.fake.expire(found)
        return channel, found

    # --- methods -----------------------------------------------------------------------------

    def auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": f"https://{TEAM_DOMAIN}.slack.com/",
            "team": "Parley Test",
            "user": "parley",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.channel(params)
        thread_ts = self.thread(channel, params.get("thread_ts"))
        content = Content(params)
        message = Posted(
            ts=self.fake.clock.next(),
            channel=channel.id,
            user=BOT_USER_ID,
            bot_id=BOT_ID,
            thread_ts=thread_ts,
        )
        content.apply(message)
        self.fake.store(message)
        self.fake.echo(message)
        return {"channel": channel.id, "ts": message.ts, "message": message.wire()}

    def update(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, message = self.message(params)
        if not message.is_bot:
            raise ApiError("cant_update_message")
        if message.streaming == "streaming":
            raise ApiError("message_is_streaming")
        content = Content(params)
        content.apply(message)
        message.edits += 1
        return {
            "channel": channel.id,
            "ts": message.ts,
            "text": message.text,
            "message": message.wire(),
        }

    def delete(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, message = self.message(params)
        if not message.is_bot:
            raise ApiError("cant_delete_message")
        message.deleted = True
        return {"channel": channel.id, "ts": message.ts}

    def post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.channel(params)
        user = str(params.get("user") or "")
        if user not in self.fake.users:
            raise ApiError("user_not_found")
        thread_ts = self.thread(channel, params.get("thread_ts"))
        content = Content(params)
        self.fake.ephemerals.append(
            {
                "channel": channel.id,
                "user": user,
                "text": content.text or content.markdown or "",
                "thread_ts": thread_ts,
                "blocks": content.blocks,
            }
        )
        return {"message_ts": self.fake.clock.next()}

    def _assistant_thread(self, params: dict[str, Any]) -> str | None:
        """An assistant thread's channel_id and thread_ts, both required by each method."""
        channel = self.channel(params, "channel_id")
        thread_ts = params.get("thread_ts")
        if not thread_ts or not isinstance(thread_ts, str):
            raise ApiError("invalid_arguments")
        return self.thread(channel, thread_ts)

    def set_status(self, params: dict[str, Any]) -> dict[str, Any]:
        thread_ts = self._assistant_thread(params)
        status = params.get("status")
        if not isinstance(status, str):
            raise ApiError("invalid_arguments")
        loading = json_param(params, "loading_messages")
        if loading is not None and (
            not isinstance(loading, list) or not all(isinstance(m, str) for m in loading)
        ):
            raise ApiError("invalid_arguments")
        self.fake.statuses.append(
            {
                "channel_id": params["channel_id"],
                "thread_ts": thread_ts,
                "status": status,
                "loading_messages": loading,
                "at": time.monotonic(),
            }
        )
        return {}

    def set_suggested_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        thread_ts = self._assistant_thread(params)
        title = params.get("title")
        if title is not None and not isinstance(title, str):
            raise ApiError("invalid_arguments")
        prompts = json_param(params, "prompts")
        if not isinstance(prompts, list) or not 0 < len(prompts) <= MAX_PROMPTS:
            raise ApiError("invalid_arguments")
        for prompt in prompts:
            if not (
                isinstance(prompt, dict)
                and isinstance(prompt.get("title"), str)
                and isinstance(prompt.get("message"), str)
                and prompt["title"]
                and prompt["message"]
            ):
                raise ApiError("invalid_arguments")
        self.fake.suggested.append(
            {
                "channel_id": params["channel_id"],
                "thread_ts": thread_ts,
                "title": params.get("title"),
                "prompts": prompts,
            }
        )
        return {}

    def set_title(self, params: dict[str, Any]) -> dict[str, Any]:
        thread_ts = self._assistant_thread(params)
        title = text_param(params, "title")
        self.fake.titles.append(
            {"channel_id": params["channel_id"], "thread_ts": thread_ts, "title": title}
        )
        return {}
