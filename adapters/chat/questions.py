"""`ask_user`'s questions on every chat platform: what a prompt says, and a press on one.

Questions are answered one after another on one prompt: its buttons are the options of the
first question still open, and each press answers that question and moves the prompt on,
until the last answer resumes the turn. One question's buttons at a time fit every surface
(a Telegram keyboard, a Slack actions block of at most 25 elements, a terminal's numbered
list), and a press names the question it was shown for, so a press on an old prompt is
told it came late instead of answering the wrong question. The HTTP API and the web chat
answer them all at once; a typed reply in the chat answers those still open.

As for approvals (`decisions.py`), only the person who asked or an admin may answer; the
first answer wins in Redis; the last answer queues a decision whose id is the dedup key, so
a press redelivered after a failure queues it again safely.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from adapters.chat.decisions import FORBIDDEN, decision
from bot.mailbox.inbox import Mailbox
from bot.redis.confirmations import Confirmation, Confirmations
from bot.vocabulary.envelope import Sender
from bot.vocabulary.events import ConfirmationRequired
from bot.vocabulary.questions import Answer

TYPE_IT = "Reply to the question with your answer, in your own words."
LATE = {
    "stale": "That question was answered already.",
    "expired": "This question has expired; nothing was answered.",
    "answered": "This was answered already.",
    "declined": "A newer message came instead of an answer.",
    "unknown": "This question is no longer available.",
}


@dataclass(frozen=True)
class QuestionPress:
    """One press on a question's prompt: which question it was shown for, and which option
    (None: "other", which the person then types)."""

    confirmation_id: str
    question: int
    option: int | None
    person: Sender
    platform: str


@dataclass(frozen=True)
class QuestionAnswer:
    """The answer to a press (an alert for one that changed nothing), and the question's
    confirmation as it stands now, for the prompt to show (None: leave it as it is)."""

    text: str
    alert: bool
    shown: Confirmation | None


async def answer_press(
    press: QuestionPress, confirmations: Confirmations, mailbox: Mailbox
) -> QuestionAnswer:
    """Answer the question `press` is for, if the presser may; queue the decision once the
    last question has its answer; say what to show."""
    asked = await confirmations.get(press.confirmation_id)
    if asked is None or not asked.is_question:
        return QuestionAnswer(LATE["unknown"], alert=True, shown=None)
    person = press.person
    if person.id != asked.requester and not person.is_admin:
        return QuestionAnswer(FORBIDDEN, alert=True, shown=None)
    if not 0 <= press.question < len(asked.questions):
        return QuestionAnswer(LATE["unknown"], alert=True, shown=None)
    options = asked.questions[press.question].options
    if press.option is None:
        return QuestionAnswer(TYPE_IT, alert=False, shown=None)
    if not 0 <= press.option < len(options):
        return QuestionAnswer(LATE["unknown"], alert=True, shown=None)
    label = options[press.option]
    outcome = await confirmations.answer(
        asked.id, [Answer(text=label)], person.id, start=press.question,
        is_admin=person.is_admin, name=person.name,
    )  # fmt: skip
    now = await confirmations.get(asked.id)
    if outcome in ("ok", "partial"):
        if outcome == "ok" and now is not None:
            await mailbox.submit(decision(now, person, "answer", "answered", press.platform))
        return QuestionAnswer(f"Noted: {label}", alert=False, shown=now)
    if outcome == "forbidden":
        return QuestionAnswer(FORBIDDEN, alert=True, shown=None)
    if now is not None and now.status == "answered":
        # Answered, perhaps never queued (Redis failed after the answer and this is the
        # platform's redelivery): queueing again is safe, the envelope id is the dedup key.
        answerer = Sender(id=now.decided_by or "", name=now.decided_name)
        await mailbox.submit(decision(now, answerer, "answer", "answered", press.platform))
    status = now.status if now is not None and outcome == "decided" else outcome
    return QuestionAnswer(LATE.get(status, LATE["unknown"]), alert=True, shown=now)


SHOWN_CHARS = 300  # of an answer in one's own words, so three fit a message on every platform


def answer_shown(answer: Answer) -> str:
    """An answer as the prompt shows it: one's own words cut short (the model reads them
    whole), so a prompt stays within a message's limits."""
    if not answer.other:
        return answer.text
    text = answer.text if len(answer.text) <= SHOWN_CHARS else answer.text[:SHOWN_CHARS] + "…"
    return f"“{text}” (own words)"


def question_lines(confirmation: Confirmation) -> list[tuple[str, str | None]]:
    """Each question as (its line, the answer shown under it, or None while it is open);
    the first open one is the one the buttons answer."""
    answers = confirmation.answers
    shown: list[tuple[str, str | None]] = []
    for index, question in enumerate(confirmation.questions):
        if index < len(answers):
            shown.append((f"✅ {question.question}", answer_shown(answers[index])))
        else:
            mark = "❓" if index == len(answers) else "…"
            shown.append((f"{mark} {question.question}", None))
    return shown


def footer(confirmation: Confirmation, by: str = "") -> str:
    """The prompt's last line: how to answer while it waits, else how it ended."""
    status = confirmation.status
    if status == "pending":
        minutes = max(1, round((confirmation.expires_at - time.time()) / 60))
        return f"Press an option, or reply with your own answer. Expires in {minutes} min."
    who = by or confirmation.decided_name or confirmation.decided_by or ""
    lines = {
        "answered": f"Answered by {who}",
        "expired": "⌛ Expired: no answer came in time.",
        "declined": "↩️ Set aside: a new message came instead of an answer.",
    }
    return lines.get(status, f"Ended: {status}")


def current(confirmation: Confirmation) -> int | None:
    """The question the buttons answer now, or None once none waits."""
    if confirmation.status != "pending":
        return None
    index = len(confirmation.answers)
    return index if index < len(confirmation.questions) else None


def as_asked(event: ConfirmationRequired) -> Confirmation:
    """The question's confirmation as it is when its prompt is posted: nothing answered."""
    return Confirmation(
        id=event.confirmation_id or "",
        session="",
        envelope_id="",
        requester="",
        calls=[],
        expires_at=event.expires_at or time.time(),
        questions=event.questions,
    )
