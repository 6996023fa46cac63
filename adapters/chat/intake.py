"""One message for the bot on a chat platform, taken in the same steps on every platform:
the sender admitted (a stranger told once), a text the bot will not read answered instead
(past `MAX_TEXT`), files too many or too large for what the platform announced refused, the
person's limits counted (told once per window), the files fetched, voice notes transcribed,
the other files checked and stored (`bot.files.intake`, holding room for them: a few
messages' files in memory at once, each person's in their lane), and only then the envelope
submitted to the session's mailbox; once it is in, a chat that chose `/steer interrupt` has
its sender's running turn stopped (`adapters.chat.steer_commands`).

The order is the promise. A stranger learns only that they are not let in, never what their
text would have cost; a message refused for its length is not counted against the limits;
and a message is counted under its envelope's id, so a platform's redelivery is neither
counted twice nor answered twice. Nothing is downloaded for a stranger, nor for a message
refused by its files' announced sizes or by the limits. A platform reads its wire into an
`Arrival` and says how a refusal is shown (`Tell`): Telegram answers in the chat, Slack sends
a note only the sender sees. Commands and button presses do not come this way: they count
against no limit.

A voice note is refused before its download when nothing transcribes voice here, or when its
platform says it is too long. Its transcript is the message's text as the model reads it
(after the caption, marked as heard), and `heard` on the envelope for the reply to show. In a
group, a voice note that neither mentions nor answers the bot may still name it aloud: it
comes with `for_bot`, which reads the transcript; until that says yes, nothing is shown to
its sender (a stranger's, or one past the limits, is dropped without a word, undownloaded).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from adapters.chat import steer_commands
from adapters.chat.access import Admission, Gate, too_long
from bot.files.intake import Arrived, Refused, let_go
from bot.files.intake import Intake as FileIntake
from bot.files.voice import with_transcripts
from bot.mailbox.inbox import Mailbox, Submitted
from bot.people.pairing import PrivateChat
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.files import FileRef

Tell = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Files:
    """The files a message carries: (name, bytes) of each as its platform announced them,
    and how to download them, called only once the message passed every other step."""

    announced: tuple[tuple[str, int], ...]
    fetch: Callable[[], Awaitable[list[Arrived]]]
    # One length (s) per recording (voice note, audio, video note) it announces, 0 when its
    # platform gave none; empty when it announces none (a recording sent as a plain file is
    # still heard once its bytes say what it is).
    recordings: tuple[float, ...] = ()


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
    # Whether a transcript names the bot, for a message only that can show is for it.
    for_bot: Callable[[str], bool] | None = None
    context: str = ""  # where the person is as they write (`Envelope.context`)
    # A private chat, where PARLEY_DM_POLICY decides who is let in (`adapters.chat.access`).
    private: PrivateChat | None = None

    def envelope(
        self,
        kind: Literal["message", "command"] = "message",
        files: list[FileRef] | None = None,
        said: tuple[str, ...] = (),
    ) -> Envelope:
        """The envelope for the session's mailbox (a command is one too, taken without the
        intake's steps), with the message's `files` once stored and what was `said` in its
        voice notes."""
        return Envelope(
            id=self.id,
            session=self.session,
            kind=kind,
            text=with_transcripts(self.text, said),
            attachments=files or [],
            heard="\n\n".join(said),
            context=self.context,
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
        if arrival.for_bot is not None:  # not known to be for the bot: nothing is said
            if not await self.gate.lets_in(person, arrival.private is not None):
                return None  # a stranger's: not even remembered as refused
            tell = _unsaid
        admission = await self.gate.admit(person, arrival.where, arrival.scope, arrival.private)
        if not await _passed(admission, tell):
            return None
        if admission.paired:  # a user by an admin's approval: the policy's rules see it
            arrival = replace(arrival, sender=arrival.sender.model_copy(update={"paired": True}))
        files = arrival.files
        unread = _unread(arrival)
        if unread is None and files is not None:
            unread = _refusal(lambda: self._check(files))
        if unread is not None:
            await tell(unread)
            return None
        if not await _passed(await self.gate.take_message(person, arrival.id), tell):
            return None
        try:
            envelope = await self._envelope(arrival)
        except Refused as exc:
            await tell(str(exc))
            return None
        if envelope is None:
            return None
        submitted = await self.mailbox.submit(envelope)
        if submitted.accepted:  # in the mailbox: a stop now costs the message nothing
            await steer_commands.interrupt(self.mailbox, envelope, self.gate.settings.steer_mode)
        return submitted

    def _check(self, files: Files) -> None:
        self.files.check_sizes(files.announced)
        if files.recordings:
            self.files.check_voice(files.recordings)

    async def _envelope(self, arrival: Arrival) -> Envelope | None:
        """The envelope once the message's files are fetched, its voice notes heard and its
        other files stored; None when the transcript shows it is not for the bot."""
        if arrival.files is None:
            return arrival.envelope()
        async with self.files.holding(arrival.sender.id):
            fetched, heard = await arrival.files.fetch(), None
            try:
                heard = await self.files.hear(fetched)
                if arrival.for_bot is not None and not any(map(arrival.for_bot, heard.said)):
                    return None
                if (unread := too_long(with_transcripts(arrival.text, heard.said))) is not None:
                    raise Refused(unread)  # a long recording's transcript
                stored = await self.files.accept(heard.files, None)
            finally:
                let_go(fetched, heard)
        return arrival.envelope(files=stored, said=tuple(heard.said))


async def _unsaid(text: str) -> None:
    """A refusal kept to itself."""


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
