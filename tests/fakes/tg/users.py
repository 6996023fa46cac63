"""The people's side of the fake Telegram: chats, messages, presses, as updates for the bot."""

from __future__ import annotations

import itertools
import re
import secrets
import time
from typing import TYPE_CHECKING, Any

from tests.fakes.tg.formatting import utf16
from tests.fakes.tg.model import BOT_USERNAME, BotMessage, TgChat, TgUser

if TYPE_CHECKING:
    from tests.fakes.tg.ephemeral import Ephemerals
    from tests.fakes.tg.files import Shelf
    from tests.fakes.tg.model import FloodLimits

COMMAND = re.compile(r"^/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?")
MENTION = re.compile(r"@[A-Za-z0-9_]{5,32}")


class UserSide:
    """Mixed into `FakeTelegram`, which holds the state these helpers use."""

    chats: dict[int, TgChat]
    private_topics: bool
    sent: dict[int, list[BotMessage]]
    user_message_ids: dict[int, set[int]]
    queries: dict[str, float]
    limits: FloodLimits
    shelf: Shelf
    ephemerals: Ephemerals

    def __init__(self) -> None:
        self._update_ids = itertools.count(100_000)
        self._group_ids = itertools.count(1)
        self._album_ids = itertools.count(13_000_000_000_000_000)

    # queue() and next_message_id() come from FakeTelegram
    def queue(self, update: dict[str, Any]) -> None:
        raise NotImplementedError

    def next_message_id(self, chat_id: int) -> int:
        raise NotImplementedError

    def wire(self, chat: TgChat, message: BotMessage) -> dict[str, Any]:
        raise NotImplementedError

    # --- chats -------------------------------------------------------------------------------

    def private_chat(self, user: TgUser) -> TgChat:
        chat = TgChat(id=user.id, type="private", first_name=user.first_name)
        return self.chats.setdefault(chat.id, chat)

    def group(self, title: str) -> TgChat:
        chat = TgChat(id=-(4000 + next(self._group_ids)), type="group", title=title)
        self.chats[chat.id] = chat
        return chat

    def supergroup(self, title: str, *, forum: bool = False) -> TgChat:
        chat_id = -(1_000_000_000_000 + next(self._group_ids))
        chat = TgChat(id=chat_id, type="supergroup", title=title, is_forum=forum)
        self.chats[chat.id] = chat
        return chat

    def topic(self, chat: TgChat, name: str) -> int:
        thread_id = self.next_message_id(chat.id)
        chat.topics[thread_id] = name
        return thread_id

    def private_topic(self, chat: TgChat, name: str) -> int:
        """A topic the person opens in their private chat with the bot (Bot API 9.3), which
        Telegram allows only once the bot has topics enabled there."""
        if chat.type != "private" or not self.private_topics:
            raise AssertionError("topics in a private chat need the bot's topics enabled")
        return self.topic(chat, name)

    # --- updates -----------------------------------------------------------------------------

    def push(self, fields: dict[str, Any]) -> dict[str, Any]:
        update = {"update_id": next(self._update_ids), **fields}
        self.queue(update)
        return update

    def _message(
        self, chat: TgChat, user: TgUser, thread_id: int | None, **fields: Any
    ) -> dict[str, Any]:
        message_id = self.next_message_id(chat.id)
        self.user_message_ids.setdefault(chat.id, set()).add(message_id)
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat.wire(),
            "from": user.wire(),
            **fields,
        }
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        return message

    def send(
        self,
        chat: TgChat,
        user: TgUser,
        text: str,
        *,
        thread_id: int | None = None,
        reply_to: int | None = None,
        entities: list[dict[str, Any]] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A text message from `user`, with the entities Telegram adds for commands/mentions."""
        found = entities if entities is not None else _auto_entities(text)
        message = self._message(chat, user, thread_id, text=text, **fields)
        if found:
            message["entities"] = found
        if reply_to is not None:
            message["reply_to_message"] = self._replied(chat, reply_to)
        return self.push({"message": message})

    def send_photo(
        self, chat: TgChat, user: TgUser, data: bytes, *, caption: str = "", **fields: Any
    ) -> dict[str, Any]:
        """A photo from `user`, in the sizes Telegram makes of it, with its caption."""
        if caption:
            fields["caption"] = caption
            if found := _auto_entities(caption):
                fields["caption_entities"] = found
        photo = self.shelf.photo_sizes(data)
        return self.push({"message": self._message(chat, user, None, photo=photo, **fields)})

    def send_album(
        self, chat: TgChat, user: TgUser, photos: list[bytes], *, caption: str = ""
    ) -> list[dict[str, Any]]:
        """Photos sent together: an update each, sharing a `media_group_id`, the caption on
        the first, as Telegram delivers an album."""
        group = str(next(self._album_ids))
        updates = []
        for index, data in enumerate(photos):
            fields: dict[str, Any] = {"media_group_id": group}
            if caption and index == 0:
                fields["caption"] = caption
                if found := _auto_entities(caption):
                    fields["caption_entities"] = found
            photo = self.shelf.photo_sizes(data)
            message = self._message(chat, user, None, photo=photo, **fields)
            updates.append(self.push({"message": message}))
        return updates

    def send_document(
        self, chat: TgChat, user: TgUser, data: bytes, name: str, mime_type: str, **fields: Any
    ) -> dict[str, Any]:
        """A file sent as a document (uncompressed), as it was."""
        document = self.shelf.document(data, name, mime_type)
        return self.push({"message": self._message(chat, user, None, document=document, **fields)})

    def send_recording(
        self,
        chat: TgChat,
        user: TgUser,
        kind: str,
        data: bytes,
        *,
        duration: int = 1,
        mime_type: str = "audio/ogg",
        caption: str = "",
        reply_to: int | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A `voice` note, an `audio` file or a `video_note` from `user`, as recorded."""
        if caption:
            fields["caption"] = caption
            if found := _auto_entities(caption):
                fields["caption_entities"] = found
        if reply_to is not None:
            fields["reply_to_message"] = self._replied(chat, reply_to)
        name = fields.pop("file_name", "")
        fields[kind] = self.shelf.recording(kind, data, duration, mime_type, name)
        return self.push({"message": self._message(chat, user, None, **fields)})

    def _replied(self, chat: TgChat, message_id: int) -> dict[str, Any]:
        for bot_message in self.sent.get(chat.id, []):
            if bot_message.message_id == message_id:
                return {
                    "message_id": message_id,
                    "date": int(time.time()),
                    "chat": chat.wire(),
                    "from": {"id": 7000001, "is_bot": True, "first_name": "Parley"},
                    "text": bot_message.text,
                }
        raise AssertionError(f"no bot message {message_id} in chat {chat.id}")

    def send_sticker(self, chat: TgChat, user: TgUser) -> dict[str, Any]:
        sticker = {
            "file_id": "sticker-" + secrets.token_hex(4),
            "file_unique_id": secrets.token_hex(4),
            "type": "regular",
            "width": 512,
            "height": 512,
            "is_animated": False,
            "is_video": False,
        }
        return self.push({"message": self._message(chat, user, None, sticker=sticker)})

    def edit(self, chat: TgChat, user: TgUser, message_id: int, text: str) -> dict[str, Any]:
        message = self._message(chat, user, None, text=text, edit_date=int(time.time()))
        message["message_id"] = message_id
        return self.push({"edited_message": message})

    def service_message(self, chat: TgChat, **fields: Any) -> dict[str, Any]:
        members = [
            u.wire() if isinstance(u, TgUser) else u for u in fields.pop("new_chat_members", [])
        ]
        if members:
            fields["new_chat_members"] = members
        actor = TgUser(id=1, first_name="Admin")
        return self.push({"message": self._message(chat, actor, None, **fields)})

    def stop_generation(
        self, chat: TgChat, draft_id: int, thread_id: int | None = None
    ) -> dict[str, Any]:
        stopped: dict[str, Any] = {"chat": chat.wire(), "draft_id": draft_id}
        if thread_id is not None:
            stopped["message_thread_id"] = thread_id
        return self.push({"stopped_message_generation": stopped})

    def press(
        self, chat: TgChat, user: TgUser, message_id: int, data: str, *, check: bool = True
    ) -> str:
        """A press of an inline button; `check=False` presses a button that is gone (an old
        client still showing it)."""
        message = next(m for m in self.sent.get(chat.id, []) if m.message_id == message_id)
        if check:
            markup = message.reply_markup or {}
            datas = [
                b.get("callback_data") for row in markup.get("inline_keyboard", []) for b in row
            ]
            if data not in datas:
                raise AssertionError(f"message {message_id} has no button with data {data!r}")
        query_id = secrets.token_hex(8)
        self.queries[query_id] = time.monotonic()
        query = {
            "id": query_id,
            "from": user.wire(),
            "message": self.wire(chat, message),
            "chat_instance": str(chat.id),
            "data": data,
        }
        self.push({"callback_query": query})
        return query_id

    def press_ephemeral(self, chat: TgChat, user: TgUser, ephemeral_id: int, data: str) -> str:
        """A press of a button of an ephemeral message; only its receiver sees it to press."""
        message = self.ephemerals.find(chat, user.id, ephemeral_id)
        markup = message.reply_markup or {}
        datas = [b.get("callback_data") for row in markup.get("inline_keyboard", []) for b in row]
        if data not in datas:
            raise AssertionError(f"ephemeral message {ephemeral_id} has no button {data!r}")
        query_id = secrets.token_hex(8)
        self.queries[query_id] = time.monotonic()
        query = {
            "id": query_id,
            "from": user.wire(),
            "message": self.ephemerals.wire(chat, message),
            "chat_instance": str(chat.id),
            "data": data,
        }
        self.push({"callback_query": query})
        return query_id


def _auto_entities(text: str) -> list[dict[str, Any]]:
    entities: list[dict[str, Any]] = []
    command = COMMAND.match(text)
    if command:
        entities.append({"type": "bot_command", "offset": 0, "length": utf16(command[0])})
    for match in MENTION.finditer(text):
        if command and match.start() < command.end():
            continue
        offset = utf16(text[: match.start()])
        entities.append({"type": "mention", "offset": offset, "length": utf16(match[0])})
    return entities


__all__ = ["BOT_USERNAME", "UserSide"]
