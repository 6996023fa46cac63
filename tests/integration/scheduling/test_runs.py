"""Scheduled runs end to end, past the first one: an interval task fires again and again and
stops for good when cancelled; a run whose tool needs approval posts the buttons in the
task's chat and waits, for the creator's press or the expiry.

A scheduler process, a worker, the fake Telegram and the fake model, over HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.tg import BotMessage, TgChat
from tests.integration.scheduling.test_replies import leading
from tests.integration.telegram.test_approvals import buttons
from tests.integration.telegram.test_replies import ANN, BOB
from tests.support.stack import idle
from tests.support.tasks import RUNS, TASKS, Brain, database_of, results, rows
from tests.support.telegram import TelegramStack
from tests.support.waiting import until

EVERY = {"PARLEY_TASK_MIN_INTERVAL": "1"}
PING = ToolCallSpec("schedule_task", {"prompt": "Ping Ann", "when": "every 2 seconds"})
TICK = ToolCallSpec("schedule_task", {"prompt": "Tick for Bob", "when": "every 2 seconds"})
LAUNCH = ToolCallSpec("launch", {"target": "rocket"})


def numbered(stack: TelegramStack, chat: TgChat, reply: str) -> list[str]:
    """The run replies shown in `chat`, in order."""
    return [m.text for m in stack.tg.messages(chat) if m.text.startswith(reply + " #")]


def at_least(stack: TelegramStack, chat: TgChat, reply: str, count: int) -> Callable[[], bool]:
    return lambda: len(numbered(stack, chat, reply)) >= count


@pytest.mark.parametrize("tg_stack", [EVERY], indirect=True)
async def test_an_interval_task_fires_repeatedly_and_never_after_it_is_cancelled(
    tg_stack: TelegramStack, tmp_path: Path
) -> None:
    """Bob's task keeps firing beside Ann's: the clock that would fire hers is seen going.
    The model takes its time to cancel, so a run comes due meanwhile and waits in the
    mailbox behind the cancel: it must not be answered after it."""
    cancel = ToolCallSpec("cancel_task", {"task_id": 2})
    slowly = Reply(text="Let me stop them for you.", tool_calls=[cancel], chunk_size=5, delay=0.6)
    brain = Brain(
        calls={"ping me": [PING], "tick": [TICK], "stop": slowly},
        done="All set.",
        replies={"Ping Ann": "Ping", "Tick for Bob": "Tick"},
    )
    tg_stack.fake.responder = brain
    schedulers = await leading(tg_stack, tmp_path)
    try:
        tg, database = tg_stack.tg, database_of(tg_stack.env)
        ann, bob = tg.private_chat(ANN), tg.private_chat(BOB)
        tg.send(bob, BOB, "tick every 2 seconds")
        await tg.wait_for(at_least(tg_stack, bob, "Tick", 1))
        tg.send(ann, ANN, "ping me every 2 seconds")
        await tg.wait_for(at_least(tg_stack, ann, "Ping", 3))
        tg.send(ann, ANN, "stop the pings")
        await until(lambda: results(tg_stack.fake.requests, "cancel_task"), "the cancel")
        assert results(tg_stack.fake.requests, "cancel_task") == [
            "Cancelled task 2; it will not run again."
        ]
        await tg.wait_for(lambda: any("All set." in m.text for m in tg.messages(ann)))
        (cancelled,) = await rows(database, TASKS, id=2)
        assert (cancelled.status, cancelled.ended_by) == ("cancelled", "tg:1001")
        ticks = len(numbered(tg_stack, bob, "Tick"))
        await tg.wait_for(at_least(tg_stack, bob, "Tick", ticks + 3))  # ~6 s on
        await idle(tg_stack.redis_url)
        shown = [m.text for m in tg.messages(ann)]
        assert "All set." in shown[-1], f"a run after the cancel: {shown}"
        pings = numbered(tg_stack, ann, "Ping")
        assert pings == [f"Ping #{n}" for n in range(1, len(pings) + 1)], "a run twice"
        runs = await rows(database, RUNS, session_key=f"tg:{ann.id}", trigger="scheduled")
        assert len(runs) == len(pings) >= 3
        (task,) = await rows(database, TASKS, id=2)
        assert task.runs == cancelled.runs, "the scheduler sent a run after the cancel"
        # Runs were sent while the cancel's turn went on, and were not answered.
        assert task.runs > len(pings), (task.runs, pings)
    finally:
        await schedulers.stop()


async def approval_prompt(stack: TelegramStack, chat: TgChat) -> BotMessage:
    """Ann schedules a run in `chat` whose model calls the sensitive `launch`; once the
    scheduler fired it, its approval prompt, the one message in the chat with buttons."""
    schedule = ToolCallSpec("schedule_task", {"prompt": "Launch the rocket", "when": "in 2 s"})
    brain = Brain(calls={"launch later": [schedule]}, done="Scheduled.", run_calls=[LAUNCH])
    brain.after_run_calls = "The launch is settled."
    stack.fake.responder = brain
    stack.tg.send(chat, ANN, "@parley_test_bot launch later")
    await stack.tg.wait_for(lambda: any(m.reply_markup for m in stack.tg.messages(chat)))
    (prompt,) = [m for m in stack.tg.messages(chat) if m.reply_markup]
    return prompt


@pytest.mark.parametrize("tg_stack", [{"PARLEY_CONFIRMATION_TTL": "5"}], indirect=True)
async def test_a_run_waits_for_approval_and_nobody_deciding_runs_nothing_in_the_chat(
    tg_stack: TelegramStack, tmp_path: Path
) -> None:
    schedulers = await leading(tg_stack, tmp_path)
    try:
        tg = tg_stack.tg
        group = tg.group("Launch pad")
        prompt = await approval_prompt(tg_stack, group)
        assert "launch" in prompt.text and '"target": "rocket"' in prompt.text
        assert {m.chat_id for c in tg.chats.values() for m in tg.messages(c)} == {group.id}

        def expired() -> bool:
            shown = next(m for m in tg.messages(group) if m.message_id == prompt.message_id)
            return shown.reply_markup is None and "Expired" in shown.text

        await tg.wait_for(expired)
        await tg.wait_for(lambda: tg.messages(group)[-1].text == "The launch is settled.")
        await idle(tg_stack.redis_url)
        (unrun,) = results(tg_stack.fake.requests, "launch")
        assert "launched" not in unrun and "no decision was made" in unrun, unrun
        runs = await rows(database_of(tg_stack.env), RUNS, session_key=f"tg:{group.id}")
        assert [r.trigger for r in runs] == ["message", "scheduled", "expiry"]
    finally:
        await schedulers.stop()


async def test_a_run_waiting_for_approval_goes_on_when_the_creator_approves(
    tg_stack: TelegramStack, tmp_path: Path
) -> None:
    schedulers = await leading(tg_stack, tmp_path)
    try:
        tg = tg_stack.tg
        group = tg.group("Launch pad")
        prompt = await approval_prompt(tg_stack, group)
        tg.press(group, ANN, prompt.message_id, buttons(prompt)["✅ Approve"])
        await tg.wait_for(lambda: tg.messages(group)[-1].text == "The launch is settled.")
        await idle(tg_stack.redis_url)
        assert results(tg_stack.fake.requests, "launch") == ["launched rocket"]

        def prompt_now() -> str:
            return next(m.text for m in tg.messages(group) if m.message_id == prompt.message_id)

        # The web edits the prompt once the decision is queued, paced by the group's budget
        # that the turn's reply spends too: the reply may well come first.
        await tg.wait_for(lambda: prompt_now().endswith("✅ Approved by Ann"))
        shown = next(m for m in tg.messages(group) if m.message_id == prompt.message_id)
        assert shown.reply_markup is None
    finally:
        await schedulers.stop()
