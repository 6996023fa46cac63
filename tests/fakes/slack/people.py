"""The people's side of the fake Slack: who is there, what they say, which buttons they press.

Each helper stores what the person did, as Slack would show it, and hands the app the same
events Slack would send, then returns once the app acknowledged them (or Slack gave up).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tests.fakes.slack import events
from tests.fakes.slack.methods import Content
from tests.fakes.slack.model import (
    BOT_ID,
    MENTION,
    VERIFICATION_TOKEN,
    Posted,
    SlackChannel,
    SlackUser,
    TsClock,
)

if TYPE_CHECKING:
    from tests.fakes.slack.files import SlackFiles


class People:
    """Mixed into `FakeSlack`, which holds the state and the delivery these helpers use."""

    users: dict[str, SlackUser]
    channels: dict[str, SlackChannel]
    clock: TsClock
    ephemeral_messages: list[Posted]  # slash commands' answers, each seen by one user
    shared: SlackFiles
    base_url: str

    # these come from FakeSlack
    def find(self, channel_id: str, ts: str) -> Posted | None:
        raise NotImplementedError

    def store(self, message: Posted) -> None:
        raise NotImplementedError

    def response_url(self, user: SlackUser, message: Posted) -> str:
        raise NotImplementedError

    async def deliver(
        self,
        payload: dict[str, Any],
        retry_num: int = 0,
        *,
        secret: str | None = None,
        timestamp: int | None = None,
        retry: bool = True,
    ) -> tuple[int, str]:
        raise NotImplementedError

    # --- people and places -------------------------------------------------------------------

    def user(self, user_id: str, name: str) -> SlackUser:
        user = SlackUser(user_id, name)
        self.users[user_id] = user
        return user

    def channel(self, channel_id: str, name: str) -> SlackChannel:
        channel = SlackChannel(channel_id, name)
        self.channels[channel_id] = channel
        return channel

    def dm(self, user: SlackUser) -> SlackChannel:
        """The app's DM with `user`: "D0" followed by the user id after its "U0"/"U"."""
        suffix = user.id[2:] if user.id.startswith("U0") else user.id[1:]
        channel = SlackChannel("D0" + suffix, user.name, is_im=True, user=user)
        return self.channels.setdefault(channel.id, channel)

    # --- what people do ----------------------------------------------------------------------

    async def say(
        self,
        user: SlackUser,
        channel: SlackChannel,
        text: str,
        thread_ts: str | None = None,
        files: Sequence[tuple[bytes, str, str] | tuple[bytes, str, str, dict[str, Any]]]
        | None = None,
    ) -> Posted:
        """`user` writes `text`, sharing `files` (bytes, name, MIME type, and the fields of
        its kind, as `files.clip` gives them) with it if any; the
        app gets a `message` event and, when the bot is mentioned outside a DM, an
        `app_mention` event too (two deliveries, concurrently, as Slack)."""
        if user.id not in self.users:
            raise AssertionError(f"{user.id} is not a member of the workspace; use fake.user()")
        root = self.base_url.removesuffix("api/")
        shared = [self.shared.add(*file[:3], user.id, root, *file[3:]) for file in files or []]
        message = Posted(
            ts=self.clock.next(),
            channel=channel.id,
            user=user.id,
            bot_id=None,
            thread_ts=self._thread(channel, thread_ts),
            text=text,
            files=shared or None,
        )
        await self._post(message, channel, mentioned=MENTION in text)
        return message

    async def bot_says(
        self,
        channel: SlackChannel,
        text: str,
        bot_id: str = "B0OTHER",
        thread_ts: str | None = None,
    ) -> Posted:
        """Another app's bot posts (subtype bot_message); the app must not answer bots."""
        message = Posted(
            ts=self.clock.next(),
            channel=channel.id,
            user=None,
            bot_id=bot_id,
            thread_ts=self._thread(channel, thread_ts),
            text=text,
            subtype="bot_message",
        )
        await self._post(message, channel, mentioned=MENTION in text)
        return message

    async def start_assistant_thread(
        self, user: SlackUser, viewing: SlackChannel | None = None
    ) -> str:
        """`user` opens a new chat with the assistant, with the channel `viewing` open beside
        it: a thread in their DM (whose root is not listed by `messages`) and an
        `assistant_thread_started` event; its thread_ts."""
        dm = self.dm(user)
        root = Posted(
            ts=self.clock.next(),
            channel=dm.id,
            user=None,
            bot_id=None,
            thread_ts=None,
            subtype="assistant_app_thread",
        )
        self.store(root)
        started = events.assistant_thread_started(user, dm, root.ts, viewing)
        await self.deliver(events.event_callback(started))
        return root.ts

    async def view_beside(self, user: SlackUser, thread_ts: str, viewing: SlackChannel) -> None:
        """`user` opens `viewing` while the assistant thread `thread_ts` stays open beside it:
        an `assistant_thread_context_changed` event."""
        changed = events.assistant_thread_event(
            "assistant_thread_context_changed", user, self.dm(user), thread_ts, viewing
        )
        await self.deliver(events.event_callback(changed))

    async def press(
        self,
        user: SlackUser,
        message: Posted,
        action_id: str,
        value: str | None = None,
        *,
        check: bool = True,
    ) -> tuple[int, str]:
        """`user` presses a button of `message`; `check=False` presses one that is gone (an
        old client still showing it), or one of an ephemeral message `user` cannot see (a
        forged press)."""
        channel = self.channels[message.channel]
        found = events.find_button(message, action_id, value)
        if check and (found is None or message.deleted):
            raise AssertionError(f"message {message.ts} shows no button {action_id!r}")
        if check and value is not None and found is not None and found[1].get("value") != value:
            raise AssertionError(f"message {message.ts} shows no {action_id!r} with {value!r}")
        if check and message.ephemeral_to not in (None, user.id):
            raise AssertionError(f"{user.id} cannot see the ephemeral message {message.ts}")
        block_id, button = found or (secrets.token_urlsafe(4), {"text": {"text": action_id}})
        action: dict[str, Any] = {
            "action_id": action_id,
            "block_id": block_id,
            "text": {"type": "plain_text", "text": button["text"].get("text", ""), "emoji": True},
            "type": "button",
        }
        chosen = value if value is not None else button.get("value")
        if chosen is not None:
            action["value"] = chosen
        if "style" in button:
            action["style"] = button["style"]
        url = self.response_url(user, message)
        return await self.deliver(events.block_actions(user, channel, message, action, url))

    async def command(
        self, user: SlackUser, channel: SlackChannel, command: str, text: str = ""
    ) -> tuple[int, str]:
        """`user` types `command` in `channel`; the answer is the app's acknowledgement, which
        Slack shows to that user only: a message with buttons, in `ephemeral_messages`, when
        the acknowledgement is one (JSON with blocks)."""
        if channel.id not in self.channels:
            raise AssertionError(f"unknown channel {channel.id}")
        body = events.slash_command(user, channel, command, text)
        status, answer = await self.deliver(body, retry=False)
        if status == 200 and answer.startswith("{"):
            self._keep_answer(user, channel, json.loads(answer))
        return status, answer

    async def verify_url(self) -> tuple[int, str]:
        """The url_verification handshake Slack does when the Request URL is saved."""
        challenge = secrets.token_urlsafe(24)
        body = {"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"}
        return await self.deliver(body, retry=False)

    # --- helpers -----------------------------------------------------------------------------

    def _keep_answer(self, user: SlackUser, channel: SlackChannel, answer: dict[str, Any]) -> None:
        """A slash command's answer as Slack shows it: checked like a posted message (an
        invalid one fails the test), seen by `user` only unless it is `in_channel`."""
        if answer.get("response_type") not in (None, "ephemeral", "in_channel"):
            raise AssertionError(f"no such response_type: {answer['response_type']!r}")
        content = Content(answer)
        message = Posted(
            ts=self.clock.next(),
            channel=channel.id,
            user=None,
            bot_id=BOT_ID,
            thread_ts=None,
            text=content.text,
            blocks=content.blocks,
        )
        if answer.get("response_type") == "in_channel":
            self.store(message)
        else:
            message.ephemeral_to = user.id
            self.ephemeral_messages.append(message)

    def _thread(self, channel: SlackChannel, thread_ts: str | None) -> str | None:
        if channel.id not in self.channels:
            raise AssertionError(f"unknown channel {channel.id}; use fake.channel() or fake.dm()")
        if thread_ts is None:
            return None
        parent = self.find(channel.id, thread_ts)
        if parent is None or parent.thread_ts is not None:
            raise AssertionError(f"no thread {thread_ts} in {channel.id}")
        return thread_ts

    async def _post(self, message: Posted, channel: SlackChannel, *, mentioned: bool) -> None:
        self.store(message)
        parent = self.find(channel.id, message.thread_ts) if message.thread_ts else None
        parent_user = parent.user if parent is not None else None
        bodies = [events.event_callback(events.message_event(message, channel, parent_user))]
        if mentioned and not channel.is_im:
            mention = events.app_mention_event(message, channel)
            if message.bot_id is not None:
                mention["bot_id"] = message.bot_id
            bodies.append(events.event_callback(mention))
        await asyncio.gather(*(self.deliver(body) for body in bodies))
