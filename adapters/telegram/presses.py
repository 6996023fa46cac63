"""Presses of the approval buttons in Telegram: answered at once, shown to everyone.

The decision itself is shared by every platform (`adapters.chat.decisions`); here is only how
Telegram shows it: the callback query is answered (an alert for a press that changed
nothing), and the prompt's message loses its buttons and says what was decided and by whom.
A press on an `ask_user` prompt is answered the same way (`adapters.chat.questions`), and
the prompt is drawn again: the answer so far, the next question's options, or who answered.
"""

from __future__ import annotations

from aiogram import Router
from aiogram.methods import AnswerCallbackQuery
from aiogram.types import CallbackQuery, MessageEntity
from aiogram.types import Message as TgMessage

from adapters.chat.decisions import Press, PromptState, decide
from adapters.chat.questions import QuestionPress, answer_press
from adapters.places.telegram import PLATFORM
from adapters.telegram import ask, confirm, ephemeral
from adapters.telegram.deps import IngressDeps
from adapters.telegram.place import sender_of

STALE = "This button no longer works."


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher."""
    presses = Router(name="presses")
    presses.callback_query.register(on_press)
    return presses


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    parsed = confirm.parse(query.data)
    if parsed is None:
        await _on_question(query, deps)
        return
    confirmation_id, choice = parsed
    person = sender_of(query.from_user, deps.settings)
    press = Press(confirmation_id, choice, person, PLATFORM)
    answer = await decide(press, deps.confirmations, deps.mailbox)
    await _answer(deps, query, answer.text, alert=answer.alert)
    if answer.prompt is not None:
        await _show_outcome(deps, query, answer.prompt)


async def _answer(deps: IngressDeps, query: CallbackQuery, text: str, alert: bool = False) -> None:
    await deps.calls.quietly(
        AnswerCallbackQuery(callback_query_id=query.id, text=text, show_alert=alert)
    )


async def _show_outcome(deps: IngressDeps, query: CallbackQuery, state: PromptState) -> None:
    """The prompt without its buttons: "Approved by Ann" names the presser as Telegram shows
    them; an earlier decider is named by id."""
    message = query.message
    if not isinstance(message, TgMessage) or not message.text:
        return
    by = query.from_user.full_name if state.by_presser else state.decided_by
    entities = [e.model_dump(exclude_none=True) for e in message.entities or []]
    shown = confirm.with_outcome(confirm.Prompt(message.text, entities), state.status, by)
    where = ephemeral.pressed(message, query.from_user.id)
    kept = [MessageEntity.model_validate(e) for e in shown.entities]
    await deps.calls.quietly(ephemeral.edit(where, shown.text, kept), message.chat.id)


async def _on_question(query: CallbackQuery, deps: IngressDeps) -> None:
    """A press on a question's option (or data that is none of Parley's buttons)."""
    parsed = ask.parse(query.data)
    if parsed is None:
        await _answer(deps, query, STALE)
        return
    confirmation_id, question, option = parsed
    person = sender_of(query.from_user, deps.settings)
    press = QuestionPress(confirmation_id, question, option, person, PLATFORM)
    answer = await answer_press(press, deps.confirmations, deps.mailbox)
    await _answer(deps, query, answer.text, alert=answer.alert)
    message = query.message
    if answer.shown is None or not isinstance(message, TgMessage):
        return
    where = ephemeral.pressed(message, query.from_user.id)
    text, markup = ask.text(answer.shown), ask.keyboard(answer.shown)
    await deps.calls.quietly(ephemeral.edit(where, text, markup=markup), message.chat.id)
