"""`/compact` in Telegram, end to end: the older turns folded into a summary the model writes,
the reply saying how much it saved, and the next turn sent the summary instead of them; a
short conversation left as it is; and a summary the model did not write changing nothing.
Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import json
import re

import pytest

from bot.session.commands import SHORT, UNSUMMARISED
from tests.agent.test_context import is_summary_request
from tests.fakes.llm import Fail, RecordedRequest, Reply
from tests.integration.telegram.test_replies import ANN, replies, said
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e

NOTES = "Ann asked five long questions about tides."
COMPACTED = re.compile(
    r"Compacted the conversation: about ([\d,]+) → ([\d,]+) tokens "
    r"\((\d+) earlier messages summarised\)\."
)


def answering(request: RecordedRequest) -> Reply:
    if is_summary_request(request):
        return Reply(text=NOTES)
    return Reply(text=f"answer to {said(request)[:12]}")


def failing_summaries(request: RecordedRequest) -> Reply | Fail:
    if is_summary_request(request):
        return Fail(400, "invalid_request_error", "summaries are broken today")
    return answering(request)


def question(n: int) -> str:
    return f"question {n}: " + "tell me more about the tides " * 40


async def conversation(stack: TelegramStack, chat: object, turns: int) -> None:
    for n in range(1, turns + 1):
        stack.tg.send(chat, ANN, question(n))  # type: ignore[arg-type]
        await replies(stack, chat, n)


def summary_requests(stack: TelegramStack) -> list[RecordedRequest]:
    return [r for r in stack.fake.requests if is_summary_request(r)]


async def test_compact_folds_the_older_turns_and_the_next_turn_reads_the_summary(
    tg_stack: TelegramStack,
) -> None:
    """With the defaults (the last 3 turns kept): after 5 turns, the first 2 are folded."""
    await tg_stack.start_worker()
    tg_stack.fake.responder = answering
    chat = tg_stack.tg.private_chat(ANN)
    await conversation(tg_stack, chat, 5)
    assert "question 1:" in json.dumps(tg_stack.fake.requests[-1].body)
    tg_stack.tg.send(chat, ANN, "/compact")
    shown = await replies(tg_stack, chat, 6)
    found = COMPACTED.fullmatch(shown[-1])
    assert found is not None, shown[-1]
    before, after = (int(found[n].replace(",", "")) for n in (1, 2))
    assert before > after > 0 and found[3] == "4"  # two turns: two questions, two answers
    (summarised,) = summary_requests(tg_stack)
    assert summarised.body["model"] == "claude-test"  # the chat chose none: the default
    folded = json.dumps(summarised.body)
    assert "question 1:" in folded and "question 2:" in folded and "question 3:" not in folded

    tg_stack.tg.send(chat, ANN, "and the moon?")
    await replies(tg_stack, chat, 7)
    sent = json.dumps(tg_stack.fake.requests[-1].body["messages"])
    assert NOTES in sent
    assert "question 1:" not in sent and "question 2:" not in sent
    assert all(f"question {n}:" in sent for n in (3, 4, 5))
    assert len(summary_requests(tg_stack)) == 1  # no automatic compaction since


async def test_a_short_conversation_has_nothing_to_compact(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = answering
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "/compact")  # nothing said yet
    assert await replies(tg_stack, chat) == [SHORT]
    await conversation(tg_stack, chat, 1)
    tg_stack.tg.send(chat, ANN, "/compact")
    assert (await replies(tg_stack, chat, 3))[-1] == SHORT
    assert summary_requests(tg_stack) == []


@pytest.mark.parametrize("tg_stack", [{"PARLEY_COMPACT_KEEP_TURNS": "1"}], indirect=True)
async def test_a_summary_the_model_did_not_write_changes_nothing(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = failing_summaries
    chat = tg_stack.tg.private_chat(ANN)
    await conversation(tg_stack, chat, 2)
    tg_stack.tg.send(chat, ANN, "/compact")
    assert (await replies(tg_stack, chat, 3))[-1] == f"⚠️ {UNSUMMARISED}"
    assert len(summary_requests(tg_stack)) == 1
    tg_stack.tg.send(chat, ANN, "and the moon?")
    await replies(tg_stack, chat, 4)
    sent = json.dumps(tg_stack.fake.requests[-1].body["messages"])
    assert "question 1:" in sent and "question 2:" in sent  # nothing dropped
