"""`/steer`: what a message sent while the bot works does, the same on every platform; and
the intake's part of `interrupt`.

`steer` joins the running turn at its next step (the worker's part, `bot.session.steering`),
`queue` waits for the answer, `interrupt` stops the running turn, what it said so far kept,
and starts the next with the new message (`bot.vocabulary.steering`). The choice belongs to the
chat, as `/mode`'s does (`bot.vocabulary.chats.chat_of`); in a group only an admin may change
it, since it changes what everyone's messages do. Unchosen, `PARLEY_STEER_MODE` decides.

`interrupt` is applied where a message is taken (`adapters.chat.intake`, and the HTTP API's
messages), only once the message is in the mailbox, so a stop never costs it. It stops the
turn of the message's own person: the envelope at the head of the inbox is the running
turn's (a turn's envelopes stay there until it is committed), so a message that is itself
the head started the turn and stops nothing, and one behind another person's turn waits, as
a steering message would (`bot.vocabulary.steering`). What is left to chance is one round
trip: a turn that ends between the read of the head and the stop, and whose worker has the
next turn (the message's own) already playing by then, would stop that one; a worker needs
longer than that to load and start a turn. A chat that did not choose `interrupt` pays one
read of its option per message, nothing more.
"""

from __future__ import annotations

import logging

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.steering import OPTION, STEER_MODES, SteerMode, steer_mode

log = logging.getLogger(__name__)
SAID: dict[SteerMode, str] = {
    "steer": "a message you send while I work joins what I am doing at the next step",
    "queue": "a message you send while I work waits until I have answered",
    "interrupt": "a message you send while I work stops what I am doing and I start on it",
}
HOW = "Say /steer steer, /steer queue or /steer interrupt to change it."


async def answer(
    mailbox: Mailbox, session: str, said: str, *, default: SteerMode, may_change: bool
) -> str:
    """What `/steer [steer | queue | interrupt]` says in `session`'s chat, and the choice
    kept when it is one and the asker `may_change` it (`default`: the deployment's)."""
    chat = chat_of(session)
    current = steer_mode(await mailbox.option(chat, OPTION), default)
    wanted = said.strip().lower()
    if not wanted:
        return f"Here {SAID[current]}. {HOW}"
    mode = next((mode for mode in STEER_MODES if mode == wanted), None)
    if mode is None:
        return f"There is no steer mode {wanted[:40]!r}: say steer, queue or interrupt."
    if not may_change:
        return f"Here {SAID[current]}. Only an admin may change it."
    # Kept even when it is the default: the chat's word holds if the deployment's changes.
    await mailbox.set_option(chat, OPTION, mode)
    return f"From now on {SAID[mode]}."


async def interrupt(mailbox: Mailbox, envelope: Envelope, default: SteerMode) -> bool:
    """Stop the turn `envelope`'s person has running in its session, as `/stop` does, when
    its chat chose `interrupt`; call it once `envelope` is in the mailbox. True if a turn
    was asked to stop."""
    session = envelope.session
    chosen = await mailbox.option(chat_of(session), OPTION)
    if steer_mode(chosen, default) != "interrupt" or not await mailbox.busy(session):
        return False
    head = await mailbox.peek(session)
    if not head or head[0].id == envelope.id or head[0].sender.id != envelope.sender.id:
        return False  # nothing ahead of it, or another person's turn: it waits
    log.info("a message in %s interrupts the turn running there", session)
    await mailbox.stop(session)
    return True
