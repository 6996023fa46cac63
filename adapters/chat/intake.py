"""One message for the bot on a chat platform, taken in the same steps on every platform:
the sender admitted (a stranger told once), a text the bot will not read answered instead
(past `MAX_TEXT`), files too many or too large for what the platform announced refused, the
person's limits counted (told once per window), the files fetched, checked and stored
(`bot.files.intake`), and only then the envelope submitted to the session's mailbox.

The order is the promise. A stranger learns only that they are not let in, never what their
text would have cost; a message refused for its length is not counted against the limits;
and a message is counted under its envelope's id, so a platform's redelivery is neither
counted twice nor answered twice. Nothing is downloaded for a stranger, nor for a message
refused by its files' announced sizes or by the limits. A platform reads its wire into an
`Arrival` and says how a refusal is shown (`Tell`): Telegram answers in the chat, Slack sends
a note only the sender sees. Commands and button presses do not come this way: they count
against no limit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from adapters.chat.access import Admission, Gate, too_long
from bot.files.intake import Arrived, Refused
from bot.files.intake import Intake as FileIntake
from bot.mailbox.inbox import Mailbox, Submitted
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.files import FileRef

Tell = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Files:
    """The files a message carries: (name, bytes) of each as its platform announced them,
    and how to download them, called only once the message passed every other step."""

    announced: tuple[tuple[str, int], ...]
    fetch: Callable[[], Awaitable[list[Arrived]]]


@dataclass(frozen=True)
class Arrival:
    """A message for the bot as its platform read it off the wire; it becomes an envelope only
    once taken, since an envelope holds no text past what the bot reads."""

    id: str  # the platform's unique id: the mailbox's dedup key and the key the limits count
    sender: Sender
    text: str
    session: str
    platform: str
    chat_kind: str
    reply_to: dict[str, Any]
    where: str  # where it was written, for the log
    scope: str = ""  # narrows a stranger's refusal where a person id is not unique (Slack's team)
    # The answer to a message that says nothing (Slack: a bare mention); None where the
    # platform drops those before they come here.
    if_empty: str | None = None
    files: Files | None = None

    def envelope(
        self, kind: Literal["message", "command"] = "message", files: list[FileRef] | None = None
    ) -> Envelope:
        """The envelope for the session's mailbox (a command is one too, taken without the
        intake's steps), with the message's `files` once stored."""
        return Envelope(
            id=self.id,
            session=self.session,
            kind=kind,
            text=self.text,
            attachments=files or [],
            sender=self.sender,
            platform=self.platform,
            chat_kind=self.chat_kind,
            reply_to=self.reply_to,
        )


@dataclass(frozen=True)
class Intake:
    """The steps every chat platform's messages go through; see the module docstring."""

    gate: Gate
    mailbox: Mailbox
    files: FileIntake

    async def take(self, arrival: Arrival, tell: Tell) -> Submitted | None:
        """Submit `arrival` once it passed every step; None when a step refused it, `tell`
        having shown why if the person is to be told (not again within a refusal's memory)."""
        person = arrival.sender.id
        if not await _passed(await self.gate.admit(person, arrival.where, arrival.scope), tell):
            return None
        files = arrival.files
        unread = _unread(arrival)
        if unread is None and files is not None:
            unread = _refusal(lambda: self.files.check_sizes(files.announced))
        if unread is not None:
            await tell(unread)
            return None
        if not await _passed(await self.gate.take_message(person, arrival.id), tell):
            return None
        stored: list[FileRef] = []
        if files is not None:
            try:
                stored = await self.files.accept(await files.fetch())
            except Refused as exc:
                await tell(str(exc))
                return None
        return await self.mailbox.submit(arrival.envelope(files=stored))


def _unread(arrival: Arrival) -> str | None:
    """Why the message's text is not read, if it is not: too long, or empty with no file."""
    if arrival.text:
        return too_long(arrival.text)
    return None if arrival.files is not None else arrival.if_empty


def _refusal(check: Callable[[], None]) -> str | None:
    try:
        check()
    except Refused as exc:
        return str(exc)
    return None


async def _passed(admission: Admission, tell: Tell) -> bool:
    """Whether a step let the message through; its refusal is shown when there is one."""
    if admission.tell is not None:
        await tell(admission.tell)
    return admission.admitted
