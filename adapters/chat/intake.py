"""One message for the bot on a chat platform, taken in the same steps on every platform:
the sender admitted (a stranger told once), a text the bot will not read answered instead
(past `MAX_TEXT`), the person's limits counted (told once per window), and only then the
envelope submitted to the session's mailbox.

The order is the promise. A stranger learns only that they are not let in, never what their
text would have cost; a message refused for its length is not counted against the limits;
and a message is counted under its envelope's id, so a platform's redelivery is neither
counted twice nor answered twice. A platform reads its wire into an `Arrival` and says how a
refusal is shown (`Tell`): Telegram answers in the chat, Slack sends a note only the sender
sees. Commands and button presses do not come this way: they count against no limit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from adapters.chat.access import Admission, Gate, too_long
from bot.mailbox.inbox import Mailbox, Submitted
from bot.vocabulary.envelope import Envelope, Sender

Tell = Callable[[str], Awaitable[None]]


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

    def envelope(self, kind: Literal["message", "command"] = "message") -> Envelope:
        """The envelope for the session's mailbox (a command is one too, taken without the
        intake's steps)."""
        return Envelope(
            id=self.id,
            session=self.session,
            kind=kind,
            text=self.text,
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

    async def take(self, arrival: Arrival, tell: Tell) -> Submitted | None:
        """Submit `arrival` once it passed every step; None when a step refused it, `tell`
        having shown why if the person is to be told (not again within a refusal's memory)."""
        person = arrival.sender.id
        if not await _passed(await self.gate.admit(person, arrival.where, arrival.scope), tell):
            return None
        unread = too_long(arrival.text) if arrival.text else arrival.if_empty
        if unread is not None:
            await tell(unread)
            return None
        if not await _passed(await self.gate.take_message(person, arrival.id), tell):
            return None
        return await self.mailbox.submit(arrival.envelope())


async def _passed(admission: Admission, tell: Tell) -> bool:
    """Whether a step let the message through; its refusal is shown when there is one."""
    if admission.tell is not None:
        await tell(admission.tell)
    return admission.admitted
