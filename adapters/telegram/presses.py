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

from adapters.approvals import FORBIDDEN, already, decision
from adapters.telegram import confirm
from adapters.telegram.place import PLATFORM, sender_of
from bot.confirmations import Status

if TYPE_CHECKING:
    from adapters.telegram.ingress import Ingress


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
        await _answer(ingress, query, already(status_now, outcome), alert=True)
        if current is not None and current.status in ("approved", "denied"):
            # Decided, but perhaps never queued (Redis failed after the decision and this is
            # Telegram's redelivery): queueing again is safe, the envelope id is the dedup key.
            await deps.mailbox.submit(decision(current, person, choice, current.status, PLATFORM))
        if current is not None and current.status != "pending":
            await _settle_prompt(ingress, query, current.status, current.decided_by or "")
        return
    await deps.mailbox.submit(decision(record, person, choice, status, PLATFORM))
    shown = "remembered" if choice == "remember" else status
    await _answer(ingress, query, "Approved." if status == "approved" else "Denied.")
    await _settle_prompt(ingress, query, shown, query.from_user.full_name)


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
