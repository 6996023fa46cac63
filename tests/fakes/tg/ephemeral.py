"""Ephemeral messages, as the Bot API documents them (API 10.3): a message in a group that
one member alone sees, sent with `ephemeral_message_parameters` and then addressed by its
`ephemeral_message_id` (its `message_id` is 0) with its receiver, by
`editEphemeralMessageText` and `deleteEphemeralMessage`. Kept apart from the group's
messages, since nobody else sees them; only the receiver can press their buttons."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.fakes.tg.model import BotMessage, TgChat, bad

if TYPE_CHECKING:
    from tests.fakes.tg.server import FakeTelegram

PARAMETERS = {"receiver_user_id", "callback_query_id", "replace_callback_query_message"}


class Ephemerals:
    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake
        self.sent: dict[int, list[BotMessage]] = {}
        self._next: dict[int, int] = {}

    def receiver(self, chat: TgChat, params: dict[str, Any]) -> int | None:
        """The receiver a `sendMessage` names, checked; None for an ordinary message."""
        given = self.fake.json_param(params, "ephemeral_message_parameters")
        if given is None:
            return None
        if not isinstance(given, dict) or set(given) - PARAMETERS:
            raise bad("can't parse ephemeral message parameters JSON object")
        receiver = given.get("receiver_user_id")
        if not isinstance(receiver, int) or isinstance(receiver, bool) or receiver <= 0:
            raise bad("invalid receiver_user_id specified")
        if chat.type not in ("group", "supergroup"):
            raise bad("ephemeral messages can be sent only to group and supergroup chats")
        replacing = given.get("replace_callback_query_message")
        if replacing is not None and not isinstance(replacing, bool):
            raise bad("invalid replace_callback_query_message specified")
        if replacing and not given.get("callback_query_id"):
            raise bad("callback_query_id is required to replace the callback query message")
        return receiver

    def post(
        self,
        chat: TgChat,
        receiver: int,
        text: str,
        entities: list[dict[str, Any]],
        markup: dict[str, Any] | None,
        thread: int | None,
    ) -> BotMessage:
        self._next[chat.id] = self._next.get(chat.id, 0) + 1
        message = BotMessage(
            message_id=0, chat_id=chat.id, text=text, entities=entities, reply_markup=markup,
            thread_id=thread, ephemeral_id=self._next[chat.id], receiver=receiver,
        )  # fmt: skip
        self.sent.setdefault(chat.id, []).append(message)
        return message

    def find(self, chat: TgChat, receiver: int | None, ephemeral_id: int | None) -> BotMessage:
        for message in self.sent.get(chat.id, []):
            here = (message.receiver, message.ephemeral_id) == (receiver, ephemeral_id)
            if here and not message.deleted:
                return message
        raise bad("message to edit not found")

    def wire(self, chat: TgChat, message: BotMessage) -> dict[str, Any]:
        data = self.fake.wire(chat, message)
        receiver = {"id": message.receiver, "is_bot": False, "first_name": "Member"}
        return data | {"ephemeral_message_id": message.ephemeral_id, "receiver_user": receiver}

    def seen_by(self, chat: TgChat, user: int) -> list[BotMessage]:
        """What `user` alone sees in `chat`, oldest first."""
        return [m for m in self.sent.get(chat.id, []) if m.receiver == user and not m.deleted]
