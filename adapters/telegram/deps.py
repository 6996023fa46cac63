"""What Telegram's handlers are given: one typed object, handed to them by aiogram.

The dispatcher carries it as workflow data (`Dispatcher(deps=...)`), so every handler that
names a `deps` argument receives it; the routers in `messages`, `commands` and `presses`
import this module and never each other. Its methods are what more than one router does:
answer a message, let a person in, read a message into an `Arrival` for the intake
(`adapters.chat.intake`) or submit a command.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial

from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.methods import SendMessage
from aiogram.types import InlineKeyboardMarkup, ReplyParameters, Update, User
from aiogram.types import Message as TgMessage

from adapters.chat.access import Gate
from adapters.chat.intake import Arrival, Files, Intake
from adapters.chat.setting_commands import ChatChoices
from adapters.chat.tool_list import ToolCatalog
from adapters.places.telegram import PLATFORM, account, envelope_id, person
from adapters.telegram.client import TelegramCalls
from adapters.telegram.place import place_of, sender_of
from adapters.telegram.reactions import StatusReactions
from bot.config.settings import Settings
from bot.files.intake import Intake as FileIntake
from bot.mailbox.inbox import Mailbox
from bot.memory.recall import Recall
from bot.people.pairing import PrivateChat
from bot.redis.confirmations import Confirmations
from bot.store.archive import Archive
from bot.store.chats import ChatSettings
from bot.store.grants import Grants
from bot.store.people import People
from bot.tasks.book import TaskBook
from bot.vocabulary.chat_settings import Activation

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngressDeps(ChatChoices):
    settings: Settings
    me: User
    calls: TelegramCalls
    gate: Gate
    mailbox: Mailbox
    confirmations: Confirmations
    archive: Archive
    tasks: TaskBook
    recall: Recall  # the memories, found by meaning with the configured model
    people: People
    grants: Grants
    chats: ChatSettings
    tools: ToolCatalog
    files: FileIntake
    reactions: StatusReactions | None = None  # 👀 while a message waits (PARLEY_TELEGRAM_REACTIONS)

    @property
    def username(self) -> str:
        """The bot's username in lower case, as a mention of it is compared."""
        return (self.me.username or "").lower()

    @cached_property
    def _spoken_name(self) -> re.Pattern[str]:
        """The bot's names as a transcript writes them: its first name, and its username
        with or without the `bot` at its end (`parley_bot`: "parley bot", "parley")."""
        handle = self.username.replace("_", " ").strip()
        names = {self.me.first_name, handle, handle.removesuffix("bot").strip()}
        spoken = sorted((n.lower() for n in names if len(n.strip()) > 1), key=len, reverse=True)
        if not spoken:
            return re.compile(r"(?!)")  # no name to say: never named
        return re.compile(r"\b(?:" + "|".join(map(re.escape, spoken)) + r")\b", re.IGNORECASE)

    def named_aloud(self, transcript: str) -> bool:
        """Whether a recording's transcript says the bot's name: in a group, that makes it
        a message for the bot."""
        return self._spoken_name.search(transcript.replace("_", " ")) is not None

    async def admit(self, message: TgMessage, user: User) -> bool:
        """Whether `user` may talk to the bot; a stranger is told so once, at no model cost."""
        who, private = person(user.id), self.private(message)
        admission = await self.gate.admit(who, _where(message), private=private)
        if admission.tell is not None:
            await self.answer(message, admission.tell)
        return admission.admitted

    @property
    def group_activation(self) -> Activation:
        """A group's activation where its admins chose none: TELEGRAM_GROUP_TRIGGER's."""
        return "always" if self.settings.telegram_group_trigger == "all" else "mention"

    def private(self, message: TgMessage) -> PrivateChat | None:
        """`message`'s chat if it is a private one, where PARLEY_DM_POLICY decides."""
        place = place_of(message)
        if not place.private:
            return None
        return PrivateChat(account(self.me.id), PLATFORM, place.session, place.model_dump())

    @cached_property
    def intake(self) -> Intake:
        """What a message for the bot goes through before its session's mailbox."""
        return Intake(self.gate, self.mailbox, self.files)

    def arrival(
        self,
        message: TgMessage,
        update: Update,
        text: str,
        files: Files | None = None,
        for_bot: Callable[[str], bool] | None = None,
    ) -> Arrival:
        """`text` of `message`, from a person, with its `files`, as the intake takes it; the
        update id makes a redelivery count once. `for_bot`: see `Arrival.for_bot`."""
        assert message.from_user is not None
        place = place_of(message)
        return Arrival(
            id=envelope_id(update.update_id),
            sender=sender_of(message.from_user, self.settings),
            text=text,
            session=place.session,
            platform=PLATFORM,
            chat_kind=place.kind,
            reply_to=place.model_dump(),
            where=_where(message),
            files=files,
            for_bot=for_bot,
            private=self.private(message),
        )

    async def take(self, message: TgMessage, arrival: Arrival) -> None:
        """`arrival` through the intake, refusals answered; with 👀 on it once it is queued."""
        reactions = self.reactions
        if reactions is not None:
            await reactions.marking(arrival.id)
        submitted = await self.intake.take(arrival, partial(self.answer, message))
        if reactions is None:
            return
        if submitted is None:
            await reactions.unmark(arrival.id)
        else:
            reactions.queued_later(arrival.id, message.chat.id, message.message_id)

    async def submit_command(self, message: TgMessage, update: Update, name: str) -> None:
        """Queue the command `name` (`new`, `compact`) in order with the session's messages."""
        await self.mailbox.submit(self.arrival(message, update, name).envelope("command"))

    async def answer(
        self, message: TgMessage, text: str, markup: InlineKeyboardMarkup | None = None
    ) -> None:
        """A direct answer from ingress (help, refusals, the list of tasks with its buttons):
        replied to in groups."""
        place = place_of(message)
        reply = None
        if not place.private:
            reply = ReplyParameters(message_id=message.message_id, allow_sending_without_reply=True)
        method = SendMessage(
            chat_id=place.chat_id,
            message_thread_id=place.thread_id,
            text=text,
            reply_parameters=reply,
            reply_markup=markup,
        )
        try:
            await self.calls.call(method, place.chat_id, must_land=True)
        except (TelegramBadRequest, TelegramForbiddenError) as exc:
            log.warning("cannot answer in chat %s: %s", place.chat_id, exc)


def _where(message: TgMessage) -> str:
    """Where `message` was written, for the log of a refusal."""
    return f"chat {message.chat.id}"
