"""The Bot API methods the fake serves, each checked as Telegram checks it."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from tests.fakes.tg.formatting import check_markup, check_text, formatted
from tests.fakes.tg.model import BOT_USER, ApiError, BotMessage, Draft, Reaction, TgChat, bad
from tests.fakes.tg.uploads import Uploads

if TYPE_CHECKING:
    from tests.fakes.tg.server import FakeTelegram

NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
COMMAND = re.compile(r"^[a-z0-9_]{1,32}$")
ACTIONS = {
    "typing",
    "upload_photo",
    "record_video",
    "upload_video",
    "record_voice",
    "upload_voice",
    "upload_document",
    "choose_sticker",
    "find_location",
    "record_video_note",
    "upload_video_note",
}
FLOODED = {
    "sendMessage",
    "editMessageText",
    "editMessageReplyMarkup",
    "editEphemeralMessageText",
    "sendMessageDraft",
    "sendPhoto",
    "sendDocument",
    "sendVoice",
}


# The emoji a bot may react with (ReactionTypeEmoji in the Bot API's documentation).
REACTION_EMOJI = frozenset(
    (
        "❤",
        "👍",
        "👎",
        "🔥",
        "🥰",
        "👏",
        "😁",
        "🤔",
        "🤯",
        "😱",
        "🤬",
        "😢",
        "🎉",
        "🤩",
        "🤮",
        "💩",
        "🙏",
        "👌",
        "🕊",
        "🤡",
        "🥱",
        "🥴",
        "😍",
        "🐳",
        "❤\u200d🔥",
        "🌚",
        "🌭",
        "💯",
        "🤣",
        "⚡",
        "🍌",
        "🏆",
        "💔",
        "🤨",
        "😐",
        "🍓",
        "🍾",
        "💋",
        "🖕",
        "😈",
        "😴",
        "😭",
        "🤓",
        "👻",
        "👨\u200d💻",
        "👀",
        "🎃",
        "🙈",
        "😇",
        "😨",
        "🤝",
        "✍",
        "🤗",
        "🫡",
        "🎅",
        "🎄",
        "☃",
        "💅",
        "🤪",
        "🗿",
        "🆒",
        "💘",
        "🙉",
        "🦄",
        "😘",
        "💊",
        "🙊",
        "😎",
        "👾",
        "🤷\u200d♂",
        "🤷",
        "🤷\u200d♀",
        "😡",
    )
)


def _int(params: dict[str, Any], name: str, required: bool = True) -> int | None:
    value = params.get(name)
    if value in (None, ""):
        if required:
            raise bad(f"{name} is empty" if name != "chat_id" else "chat_id is empty")
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise bad(f"invalid {name} specified") from None


class Methods:
    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake
        self.uploads = Uploads(fake)

    def chat(self, params: dict[str, Any]) -> TgChat:
        chat_id = _int(params, "chat_id")
        chat = self.fake.chats.get(chat_id or 0)
        if chat is None:
            raise bad("chat not found")
        return chat

    def thread(self, chat: TgChat, params: dict[str, Any]) -> int | None:
        """A topic of a forum, or of a private chat where the bot has topics enabled."""
        thread = _int(params, "message_thread_id", required=False)
        topical = chat.is_forum or (chat.type == "private" and self.fake.private_topics)
        if thread is not None and (not topical or thread not in chat.topics):
            raise bad("message thread not found")
        return thread

    def message(self, chat: TgChat, params: dict[str, Any]) -> BotMessage:
        message_id = _int(params, "message_id")
        for message in self.fake.sent.get(chat.id, []):
            if message.message_id == message_id and not message.deleted:
                return message
        if message_id in self.fake.user_message_ids.get(chat.id, set()):
            raise bad("message can't be edited")
        raise bad("message to edit not found")

    # --- methods ------------------------------------------------------------------------------

    def getMe(self, params: dict[str, Any]) -> Any:
        if self.fake.private_topics:
            return {**BOT_USER, "has_topics_enabled": True, "allows_users_to_create_topics": True}
        return BOT_USER

    def setMessageReaction(self, params: dict[str, Any]) -> Any:
        """Bots set at most one reaction, of the emoji Telegram lists; none removes theirs."""
        chat = self.chat(params)
        message_id = _int(params, "message_id")
        known = self.fake.user_message_ids.get(chat.id, set()) | {
            m.message_id for m in self.fake.sent.get(chat.id, []) if not m.deleted
        }
        if message_id not in known:
            raise bad("message to react not found")
        reaction = self.fake.json_param(params, "reaction") or []
        if not isinstance(reaction, list) or len(reaction) > 1:
            raise bad("REACTIONS_TOO_MANY")
        emoji = []
        for kind in reaction:
            if not isinstance(kind, dict) or kind.get("type") != "emoji":
                raise bad("REACTION_INVALID")
            if kind.get("emoji") not in REACTION_EMOJI:
                raise bad("REACTION_INVALID")
            emoji.append(str(kind["emoji"]))
        is_big = params.get("is_big")
        if is_big is not None and str(is_big).lower() not in ("true", "false"):
            raise bad("invalid is_big specified")
        self.fake.reactions.append(Reaction(chat.id, message_id or 0, tuple(emoji), time.time()))
        return True

    def setMyCommands(self, params: dict[str, Any]) -> Any:
        commands = self.fake.json_param(params, "commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise bad("commands must be a list of at most 100")
        for command in commands:
            if not COMMAND.match(str(command.get("command", ""))):
                raise bad("BOT_COMMAND_INVALID")
            if not 1 <= len(str(command.get("description", ""))) <= 256:
                raise bad("command description must be 1-256 characters")
        self.fake.commands = commands
        return True

    def getMyCommands(self, params: dict[str, Any]) -> Any:
        return self.fake.commands

    def setWebhook(self, params: dict[str, Any]) -> Any:
        url = str(params.get("url", ""))
        secret = params.get("secret_token")
        if secret is not None and not re.match(r"^[A-Za-z0-9_-]{1,256}$", str(secret)):
            raise bad("secret token contains unallowed characters")
        if not url:
            self.fake.webhook = {}
            return True
        self.fake.webhook = {"url": url, "secret_token": secret}
        if str(params.get("drop_pending_updates", "")).lower() == "true":
            self.fake.pending.clear()
        self.fake.start_delivery()
        return True

    def deleteWebhook(self, params: dict[str, Any]) -> Any:
        self.fake.webhook = {}
        return True

    def getWebhookInfo(self, params: dict[str, Any]) -> Any:
        return {
            "url": self.fake.webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self.fake.pending),
        }

    def sendChatAction(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        self.thread(chat, params)
        if params.get("action") not in ACTIONS:
            raise bad("wrong parameter action in request")
        self.fake.actions.append((chat.id, str(params["action"]), time.time()))
        return True

    def sendMessage(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        thread = self.thread(chat, params)
        text, entities = formatted(params)
        check_text(text)
        markup = check_markup(self.fake.json_param(params, "reply_markup"))
        reply = self.fake.json_param(params, "reply_parameters") or {}
        receiver = self.fake.ephemerals.receiver(chat, params)
        if receiver is not None:
            if reply:
                raise bad("replies of ephemeral messages are not supported here")
            alone = self.fake.ephemerals.post(chat, receiver, text, entities, markup, thread)
            return self.fake.ephemerals.wire(chat, alone)
        message = self.fake.post(chat, text, entities, markup, thread, reply.get("message_id"))
        return self.fake.wire(chat, message)

    def editEphemeralMessageText(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        receiver = _int(params, "receiver_user_id")
        message = self.fake.ephemerals.find(chat, receiver, _int(params, "ephemeral_message_id"))
        text, entities = formatted(params)
        check_text(text)
        markup = check_markup(self.fake.json_param(params, "reply_markup"))
        if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
            raise bad(NOT_MODIFIED)
        message.history.append(message.text)
        message.text, message.entities, message.reply_markup = text, entities, markup
        message.edits += 1
        return True

    def deleteEphemeralMessage(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        receiver = _int(params, "receiver_user_id")
        self.fake.ephemerals.find(
            chat, receiver, _int(params, "ephemeral_message_id")
        ).deleted = True
        return True

    def sendPhoto(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        return self.uploads.send("photo", chat, self.thread(chat, params), params)

    def sendDocument(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        return self.uploads.send("document", chat, self.thread(chat, params), params)

    def sendVoice(self, params: dict[str, Any]) -> Any:
        """A voice note; a file Telegram cannot play as one is sent as a document."""
        chat = self.chat(params)
        return self.uploads.send("voice", chat, self.thread(chat, params), params)

    def editMessageText(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        message = self.message(chat, params)
        text, entities = formatted(params)
        check_text(text)
        markup = check_markup(self.fake.json_param(params, "reply_markup"))
        if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
            raise bad(NOT_MODIFIED)
        message.history.append(message.text)
        message.text, message.entities, message.reply_markup = text, entities, markup
        message.edits += 1
        return self.fake.wire(chat, message)

    def editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        message = self.message(chat, params)
        markup = check_markup(self.fake.json_param(params, "reply_markup"))
        if markup == message.reply_markup:
            raise bad(NOT_MODIFIED)
        message.reply_markup = markup
        message.edits += 1
        return self.fake.wire(chat, message)

    def deleteMessage(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        message = self.message(chat, params)
        message.deleted = True
        return True

    def sendMessageDraft(self, params: dict[str, Any]) -> Any:
        chat = self.chat(params)
        if chat.type != "private":
            raise bad("TEXTDRAFT_PEER_INVALID")
        thread = self.thread(chat, params)
        draft_id = _int(params, "draft_id")
        if not draft_id:
            raise bad("DRAFT_ID_INVALID")
        text, entities = formatted(params)
        check_text(text, allow_empty=True)
        self.fake.drafts.append(
            Draft(
                chat_id=chat.id,
                draft_id=draft_id,
                text=text,
                entities=entities,
                can_stop=str(params.get("can_stop", "")).lower() == "true",
                thread_id=thread,
                at=time.time(),
            )
        )
        return True

    def answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        query_id = str(params.get("callback_query_id", ""))
        asked = self.fake.queries.pop(query_id, None)
        if asked is None or time.monotonic() - asked > self.fake.callback_ttl:
            raise bad("query is too old and response timeout expired or query ID is invalid")
        self.fake.callback_answers.append(
            {
                "callback_query_id": query_id,
                "text": params.get("text"),
                "show_alert": str(params.get("show_alert", "")).lower() == "true",
            }
        )
        return True

    def getUpdates(self, params: dict[str, Any]) -> Any:
        raise AssertionError("served by the server itself (it waits)")

    def getFile(self, params: dict[str, Any]) -> Any:
        return self.fake.shelf.get_file(params)

    def handle(self, name: str, params: dict[str, Any]) -> Any:
        method = getattr(self, name, None)
        if name.startswith("_") or name in ("handle", "chat", "thread", "message") or not method:
            raise ApiError(404, "Not Found")
        return method(params)
