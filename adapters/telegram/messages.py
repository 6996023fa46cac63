"""Messages to the bot: text, photos, files and recordings (voice notes, audio files, video
notes; `files`), an album as one message, become an envelope in the session's mailbox,
anything else a quick answer; the stop button of a streamed draft stops the session's turn.

In groups only what is meant for the bot counts: a mention of it, a reply to it, or every
message where the group's admins chose `/activation always` (TELEGRAM_GROUP_TRIGGER=all where
they chose nothing), but for what a bot relayed (`via_bot`) and past a burst
(`adapters.chat.activation`). A recording may also say the bot's name aloud: one that
neither mentions nor answers it is heard, and counts if its transcript names the bot
(`IngressDeps.named_aloud`). Other bots are never answered, whatever they send (that could
loop).
"""

from __future__ import annotations

from aiogram import Router
from aiogram.enums import ChatType, MessageEntityType
from aiogram.types import Message as TgMessage
from aiogram.types import MessageGenerationStopped, Update

from adapters.places.telegram import Place, chat_key, person
from adapters.telegram.deps import IngressDeps
from adapters.telegram.files import files_of, recording_of
from adapters.telegram.filters import has_files, has_text

NOT_READ = (
    "I read text, photos, voice notes, PDFs and text files here. Send me your question as a "
    "message."
)
SERVICE_FIELDS = (
    "new_chat_members",
    "left_chat_member",
    "new_chat_title",
    "new_chat_photo",
    "delete_chat_photo",
    "group_chat_created",
    "supergroup_chat_created",
    "pinned_message",
    "forum_topic_created",
    "forum_topic_edited",
    "forum_topic_closed",
    "forum_topic_reopened",
    "migrate_to_chat_id",
    "migrate_from_chat_id",
)


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher."""
    messages = Router(name="messages")
    messages.message.register(on_file, has_files)
    messages.message.register(on_text, has_text)
    messages.message.register(on_other)
    messages.stopped_message_generation.register(on_stop_generation)
    return messages


async def on_text(message: TgMessage, event_update: Update, deps: IngressDeps) -> None:
    if message.from_user is None or message.from_user.is_bot:
        return  # other bots are not people: answering them could start a loop
    text = await for_bot(message, deps)
    if text is None:
        return
    await deps.take(message, deps.arrival(message, event_update, text))  # refusals answered


async def on_file(
    message: TgMessage,
    event_update: Update,
    deps: IngressDeps,
    album: list[TgMessage] | None = None,
) -> None:
    """A photo, a file or a recording, or an album's (`lanes` hands its parts over
    together), with its caption as the text (which may be empty; Telegram puts an album's on
    one part); in a group, a recording not addressed to the bot is heard for its name."""
    if message.from_user is None or message.from_user.is_bot:
        return
    parts = album or [message]
    captioned = next((part for part in parts if part.caption), message)
    text = await for_bot(captioned, deps, require_text=False)
    named_aloud = None
    if text is None:
        if recording_of(message) is None:
            return
        text, named_aloud = message.caption or "", deps.named_aloud
    files = files_of(parts, deps.calls.bot)
    if files is None:  # an album of videos
        if await deps.admit(message, message.from_user):
            await deps.answer(message, NOT_READ)
        return
    await deps.take(message, deps.arrival(message, event_update, text.strip(), files, named_aloud))


async def on_other(message: TgMessage, deps: IngressDeps) -> None:
    """Stickers, voice, locations...; service messages are not for us, nor what bots send.
    Only one addressed to the bot is answered, also where it answers every message."""
    if message.from_user is None or message.from_user.is_bot or _is_service(message):
        return
    if addressed(message, deps, require_text=False) is None:
        return
    if await deps.admit(message, message.from_user):
        await deps.answer(message, NOT_READ)


async def on_stop_generation(stopped: MessageGenerationStopped, deps: IngressDeps) -> None:
    place = Place(
        chat_id=stopped.chat.id,
        thread_id=stopped.message_thread_id,
        chat_type=stopped.chat.type,
    )
    await deps.mailbox.stop(place.session)


async def for_bot(
    message: TgMessage, deps: IngressDeps, *, require_text: bool = True
) -> str | None:
    """The text meant for the bot (see `addressed`; in a group, after what was said there
    before it, PARLEY_GROUP_CONTEXT), or in a group that answers every message the whole text
    of one written by a person, within the group's burst; None if not for it (then kept for
    the group's next turn to see)."""
    text = addressed(message, deps, require_text=require_text)
    if message.chat.type == ChatType.PRIVATE:
        return text
    chat, user = chat_key(message.chat.id), message.from_user
    let_in = user is not None and deps.gate.may_use(person(user.id))
    if text is not None:
        return await deps.group_context.with_recent(chat, text) if let_in else text
    said = message.text or message.caption or ""
    if await _answers_all(message, chat, deps):
        return said if said.strip() or not require_text else None
    if let_in and user is not None:
        await deps.group_context.keep(chat, user.full_name, said)
    return None


async def _answers_all(message: TgMessage, chat: str, deps: IngressDeps) -> bool:
    """Whether a message not addressed to the bot is one for it all the same: its group
    answers every message, a person wrote it (no bot relayed it), within the burst."""
    if not await deps.activations.always(chat, default=deps.group_activation):
        return False
    return message.via_bot is None and await deps.activations.within_burst(chat)


def addressed(message: TgMessage, deps: IngressDeps, *, require_text: bool = True) -> str | None:
    """The text meant for the bot, without its @mention; None if not meant for it."""
    text = message.text or message.caption or ""
    if require_text and not text.strip():
        return None
    if message.chat.type == ChatType.PRIVATE:
        return text
    mention = f"@{deps.username}"
    mentioned = bool(deps.username) and any(
        e.type == MessageEntityType.MENTION and e.extract_from(text).lower() == mention
        for e in (message.entities or message.caption_entities or [])
    )
    replied = message.reply_to_message is not None and (
        message.reply_to_message.from_user is not None
        and message.reply_to_message.from_user.id == deps.me.id
    )
    if not (mentioned or replied):
        return None
    if mentioned:
        cleaned = _strip_mention(text, mention)
        return cleaned or text
    return text


def _strip_mention(text: str, mention: str) -> str:
    index = text.lower().find(mention)
    if index < 0:
        return text.strip()
    return (text[:index] + text[index + len(mention) :]).strip(" \n,:")


def _is_service(message: TgMessage) -> bool:
    return any(getattr(message, field, None) for field in SERVICE_FIELDS)
