"""Telegram ingress end to end: commands, access, odd updates, /stop, webhook and duplicates."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from adapters.telegram.messages import NOT_READ
from bot.session.commands import FRESH_START
from tests.fakes.llm import Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_replies import ANN, BOB, replies, said
from tests.support.images import image_bytes
from tests.support.telegram import WEBHOOK_SECRET, TelegramStack

EVE = TgUser(id=666, first_name="Eve", username="eve")


async def test_commands_are_in_the_menu_and_help_answers_at_once(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.commands))
    names = [c["command"] for c in tg_stack.tg.commands]
    assert names == [
        "start", "help", "new", "compact", "stop", "usage", "model", "mode", "steer", "voice",
        "reasoning",
        "tasks", "checkin", "memory", "forget", "permissions",
        "preferences", "tools", "skills", "instructions", "activation", "pair", "unpair",
    ]  # fmt: skip
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "/help")
    (shown,) = await replies(tg_stack, chat)
    assert "/new - Start a new conversation" in shown
    assert tg_stack.fake.requests == []


async def test_new_forgets_the_context_and_usage_counts_tokens(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"{len(request.body['messages'])} msgs")
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "/usage")
    assert "0 tokens in" in (await replies(tg_stack, chat))[0]
    tg_stack.tg.send(chat, ANN, "I am Ann")
    await replies(tg_stack, chat, 2)
    tg_stack.tg.send(chat, ANN, "who am I?")
    await replies(tg_stack, chat, 3)
    tg_stack.tg.send(chat, ANN, "/new")
    tg_stack.tg.send(chat, ANN, "who am I now?")
    shown = await replies(tg_stack, chat, 5)
    assert shown[1:] == ["1 msgs", "3 msgs", FRESH_START, "1 msgs"]
    assert "I am Ann" not in json.dumps(tg_stack.fake.requests[-1].body)
    tg_stack.tg.send(chat, ANN, "/usage")
    usage = (await replies(tg_stack, chat, 6))[-1]
    assert "This chat so far:" in usage and " 0 tokens in" not in usage, usage


async def test_unknown_commands_go_to_the_agent_as_text(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"got {said(request)}")
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "/weather Berlin")
    assert await replies(tg_stack, chat) == ["got /weather Berlin"]


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": "tg:1002"}], indirect=True)
async def test_only_admins_switch_models(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.group("Models")
    tg_stack.tg.send(chat, ANN, "/model claude-haiku-4-5")
    tg_stack.tg.send(chat, BOB, "/model claude-haiku-4-5")
    tg_stack.tg.send(chat, BOB, "/model gpt-4o")
    shown = await replies(tg_stack, chat, 3)
    assert "Only an admin" in shown[0]
    assert shown[1] == "Switched this chat to claude-haiku-4-5."
    assert "cannot switch" in shown[2]
    tg_stack.fake.enqueue(Reply(text="hi"))
    tg_stack.tg.send(chat, ANN, "@parley_test_bot hello")
    await replies(tg_stack, chat, 4)
    assert tg_stack.fake.requests[-1].body["model"] == "claude-haiku-4-5"


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ALLOWED_USERS": "tg:1001"}], indirect=True)
async def test_strangers_get_one_polite_refusal_and_cost_nothing(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(EVE)
    for text in ("hello", "hello?", "/new"):
        tg_stack.tg.send(chat, EVE, text)
    (refusal,) = await replies(tg_stack, chat)
    await asyncio.sleep(0.5)
    assert len(tg_stack.tg.messages(chat)) == 1
    assert "tg:666" in refusal
    assert tg_stack.fake.requests == []


async def test_non_text_updates_get_a_sensible_answer(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text=f"caption: {said(request)}")
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send_sticker(chat, ANN)
    assert await replies(tg_stack, chat) == [NOT_READ]
    tg_stack.tg.send_photo(chat, ANN, image_bytes((90, 60)), caption="what is this?")
    assert (await replies(tg_stack, chat, 2))[1] == "caption: what is this?"
    group = tg_stack.tg.group("Quiet")
    tg_stack.tg.service_message(group, new_chat_members=[BOB])
    tg_stack.tg.send_sticker(group, BOB)
    first = tg_stack.tg.messages(chat)[0]
    tg_stack.tg.edit(chat, ANN, first.message_id - 1, "edited text")
    await asyncio.sleep(1)
    assert tg_stack.tg.messages(group) == []
    assert len(tg_stack.tg.messages(chat)) == 2
    assert len(tg_stack.fake.requests) == 1


async def test_stop_ends_the_reply_in_progress(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    gate = asyncio.Event()
    tg_stack.fake.enqueue(
        Reply(text="partial answer " * 50, chunk_size=10, gate=gate, gate_after=10)
    )
    group = tg_stack.tg.group("Stop")
    tg_stack.tg.send(group, ANN, "@parley_test_bot long story please")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.messages(group)))
    tg_stack.tg.send(group, ANN, "/stop")
    (shown,) = await replies(tg_stack, group)
    gate.set()
    assert shown.startswith("partial")
    assert shown.endswith("⏹ Stopped.")
    assert len(shown) < len("partial answer " * 50)


async def test_the_drafts_stop_button_stops_the_turn(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    gate = asyncio.Event()
    tg_stack.fake.enqueue(Reply(text="word " * 200, chunk_size=10, gate=gate, gate_after=10))
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "talk")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.drafts))
    tg_stack.tg.stop_generation(chat, tg_stack.tg.drafts[-1].draft_id)
    (shown,) = await replies(tg_stack, chat)
    gate.set()
    assert shown.endswith("⏹ Stopped.")


@pytest.mark.parametrize("tg_stack", [{"webhook": "1"}], indirect=True)
async def test_webhook_needs_the_secret_and_answers_duplicates_once(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.webhook))
    assert tg_stack.tg.webhook["url"] == tg_stack.webhook_url
    tg_stack.fake.responder = lambda request: Reply(text="once")
    chat = tg_stack.tg.private_chat(ANN)
    update = tg_stack.tg.send(chat, ANN, "hello by webhook")
    assert await replies(tg_stack, chat) == ["once"]
    tg_stack.tg.deliver_again(update)
    async with httpx.AsyncClient() as client:
        forged = await client.post(tg_stack.webhook_url, json={**update, "update_id": 999999})
        wrong = await client.post(
            tg_stack.webhook_url,
            json={**update, "update_id": 999998},
            headers={"X-Telegram-Bot-Api-Secret-Token": "guess"},
        )
        garbage = await client.post(
            tg_stack.webhook_url,
            content=b"{not json",
            headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET},
        )
    assert (forged.status_code, wrong.status_code, garbage.status_code) == (401, 401, 400)
    await asyncio.sleep(1)
    assert len(tg_stack.fake.requests) == 1
    assert len(tg_stack.tg.messages(chat)) == 1
