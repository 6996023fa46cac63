"""Presses of the approval buttons: answered at once, decided atomically, shown to everyone.

The first decision wins in Redis (see `bot.confirmations`); only the person who asked or an
admin may decide, anyone else gets an alert and changes nothing. The prompt then loses its
buttons and says what was decided and by whom, and the decision goes into the session's
mailbox so the turn resumes in order with the other messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiogram.methods import AnswerCallbackQuery, EditMessageText
from aiogram.types import CallbackQuery, MessageEntity
from aiogram.types import Message as TgMessage

from adapters.telegram import confirm
from adapters.telegram.place import PLATFORM, sender_of
from bot.confirmations import Confirmation, Status
from bot.envelope import Envelope, Sender

if TYPE_CHECKING:
    from adapters.telegram.ingress import Ingress

FORBIDDEN = "Only the person who asked, or an admin, can decide this."
ANSWERS = {
    "expired": "This request has expired; nothing was run.",
    "approved": "This was already approved.",
    "denied": "This was already denied.",
    "declined": "A newer message replaced this request; nothing was run.",
    "unknown": "This request is no longer available.",
}


async def handle_press(ingress: Ingress, query: CallbackQuery) -> None:
    deps = ingress.deps
    parsed = confirm.parse(query.data)
    if parsed is None:
        await _answer(ingress, query, "This button no longer works.")
        return
    confirmation_id, choice = parsed
    person = sender_of(query.from_user, deps.settings)
    status: Status = "denied" if choice == "deny" else "approved"
    record = await deps.confirmations.get(confirmation_id)
    outcome = "unknown"
    if record is not None:
        outcome = await deps.confirmations.decide(
            confirmation_id, status, person.id, is_admin=person.is_admin
        )
    if outcome == "forbidden":
        await _answer(ingress, query, FORBIDDEN, alert=True)
        return
    if outcome != "ok" or record is None:
        current = await deps.confirmations.get(confirmation_id)
        status_now = current.status if current is not None else "unknown"
        known = ANSWERS.get(status_now) or ANSWERS.get(outcome) or f"Already {status_now}."
        await _answer(ingress, query, known, alert=True)
        if current is not None and current.status in ("approved", "denied"):
            # Decided, but perhaps never queued (Redis failed after the decision and this is
            # Telegram's redelivery): queueing again is safe, the envelope id is the dedup key.
            await deps.mailbox.submit(_decision(current, person, choice, current.status))
        if current is not None and current.status != "pending":
            await _settle_prompt(ingress, query, current.status, current.decided_by or "")
        return
    await deps.mailbox.submit(_decision(record, person, choice, status))
    shown = "remembered" if choice == "remember" else status
    await _answer(ingress, query, "Approved." if status == "approved" else "Denied.")
    await _settle_prompt(ingress, query, shown, query.from_user.full_name)


def _decision(record: Confirmation, person: Sender, choice: str, status: Status) -> Envelope:
    return Envelope(
        id=f"decision:{record.id}",
        session=record.session,
        kind="decision",
        sender=person,
        platform=PLATFORM,
        confirmation_id=record.id,
        approve=status == "approved",
        remember=choice == "remember",
        reply_to=record.reply_to,
    )


async def _answer(ingress: Ingress, query: CallbackQuery, text: str, alert: bool = False) -> None:
    await ingress.deps.calls.quietly(
        AnswerCallbackQuery(callback_query_id=query.id, text=text, show_alert=alert)
    )


async def _settle_prompt(ingress: Ingress, query: CallbackQuery, status: str, by: str) -> None:
    message = query.message
    if not isinstance(message, TgMessage) or not message.text:
        return
    entities = [e.model_dump(exclude_none=True) for e in message.entities or []]
    shown = confirm.settled(confirm.Prompt(message.text, entities), status, by)
    await ingress.deps.calls.quietly(
        EditMessageText(
            chat_id=message.chat.id,
            message_id=message.message_id,
            text=shown.text,
            entities=[MessageEntity.model_validate(e) for e in shown.entities],
        ),
        message.chat.id,
    )
