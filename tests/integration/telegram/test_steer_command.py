"""`/steer` in Telegram, end to end through the fake Bot API, the real aiogram and a real
worker: listed in the bot's menu and in /help, changed in a group by an admin only, and with
`interrupt` chosen a second message stops the running reply (its text so far stays, marked
stopped) and is answered next, read once by the model."""

from __future__ import annotations

import asyncio
import json

import pytest

from adapters.telegram.commands import MENU
from tests.fakes.llm import Reply
from tests.integration.telegram.test_replies import ANN, BOB, replies
from tests.support.telegram import TelegramStack

STORY = "partial answer " * 50
SHORT = "A short one."
THEN = "@parley_test_bot no, a short one"
JOINS = "Here a message you send while I work joins what I am doing at the next step."
STOPS = "a message you send while I work stops what I am doing and I start on it"


async def test_steer_is_in_the_menu_and_in_help(tg_stack: TelegramStack) -> None:
    tg = tg_stack.tg
    await tg.wait_for(lambda: bool(tg.commands))
    listed = {c["command"]: c["description"] for c in tg.commands}
    assert listed["steer"] == MENU["steer"] == "What a message sent while I work does"
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "/help")
    (shown,) = await replies(tg_stack, chat)
    assert "/steer - What a message sent while I work does" in shown


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": "tg:1002"}], indirect=True)
async def test_an_admin_chooses_interrupt_and_a_message_stops_the_running_reply(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    group = tg.group("Steering")
    tg.send(group, ANN, "/steer interrupt")
    tg.send(group, BOB, "/steer interrupt")
    tg.send(group, ANN, "/steer")
    said = await replies(tg_stack, group, 3)
    assert said == [
        f"{JOINS} Only an admin may change it.",
        f"From now on {STOPS}.",
        f"Here {STOPS}. Say /steer steer, /steer queue or /steer interrupt to change it.",
    ]

    gate = asyncio.Event()
    tg_stack.fake.enqueue(
        Reply(text=STORY, chunk_size=10, gate=gate, gate_after=10), Reply(text=SHORT)
    )
    try:
        tg.send(group, ANN, "@parley_test_bot long story please")
        await tg.wait_for(
            lambda: len(tg.messages(group)) == 4,  # the reply, streaming
            what=lambda: (
                f"the reply; the group shows {[m.text[:30] for m in tg.messages(group)]}"
                f" after {len(tg_stack.fake.requests)} model requests and the calls "
                f"{[(c.method, c.ok, c.error) for c in tg.calls[-6:]]}"
            ),
        )
        tg.send(group, ANN, THEN)
        shown = await replies(tg_stack, group, 5)
    finally:
        gate.set()
    stopped, answered = shown[3:]
    assert stopped.startswith("partial") and stopped.endswith("⏹ Stopped.")
    assert len(stopped) < len(STORY)
    assert answered == SHORT
    first, second = tg_stack.fake.requests
    assert "no, a short one" not in json.dumps(first.body)
    assert json.dumps(second.body["messages"]).count("no, a short one") == 1
