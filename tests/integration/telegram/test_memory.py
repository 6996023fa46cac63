"""Long-term memory end to end in Telegram: what Ann asks to be remembered outlives `/new`
and reaches the model's instructions in her private chat, never Bob's nor a group's, until
she asks to forget it. Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.fakes.llm import RecordedRequest, ToolCallSpec
from tests.fakes.tg import TgChat, TgUser
from tests.integration.telegram.test_replies import ANN, BOB
from tests.support.stack import idle
from tests.support.tasks import Brain, results
from tests.support.telegram import TelegramStack

REMEMBER = ToolCallSpec("remember", {"fact": "Ann likes green tea"})
FORGET = ToolCallSpec("forget", {"what": "green tea"})


async def ask(stack: TelegramStack, chat: TgChat, user: TgUser, text: str) -> list[RecordedRequest]:
    """Send `text`, wait until the turn is answered and over; the model requests it made."""
    before, asked = len(stack.tg.messages(chat)), len(stack.fake.requests)
    stack.tg.send(chat, user, text)
    answered: Callable[[], bool] = lambda: len(stack.tg.messages(chat)) > before  # noqa: E731
    await stack.tg.wait_for(answered)
    await idle(stack.redis_url)
    return stack.fake.requests[asked:]


def seen(request: RecordedRequest) -> str:
    """What the model was told: its instructions and the conversation."""
    return request.system_text() + json.dumps(request.body["messages"])


async def test_a_memory_outlives_new_and_stays_with_its_person(tg_stack: TelegramStack) -> None:
    tg_stack.fake.responder = Brain(
        calls={"remember that I like green tea": [REMEMBER], "forget the tea": [FORGET]}
    )
    await tg_stack.start_worker()
    tg = tg_stack.tg
    ann, bob, group = tg.private_chat(ANN), tg.private_chat(BOB), tg.group("Team")

    await ask(tg_stack, ann, ANN, "remember that I like green tea")
    saved = results(tg_stack.fake.requests, "remember")
    assert saved == ["Saved to memory: #1 Ann likes green tea"]
    await ask(tg_stack, ann, ANN, "/new")
    (later,) = await ask(tg_stack, ann, ANN, "what do I like to drink?")
    assert "## What you remember" in later.system_text()
    assert "#1 Ann likes green tea" in later.system_text()
    conversation = json.dumps(later.body["messages"])
    assert "remember that I like green tea" not in conversation  # /new forgot the chat

    (bobs,) = await ask(tg_stack, bob, BOB, "what do I like to drink?")
    assert "green tea" not in seen(bobs)
    (in_group,) = await ask(tg_stack, group, ANN, "@parley_test_bot what do I like to drink?")
    assert "green tea" not in seen(in_group)

    await ask(tg_stack, ann, ANN, "forget the tea")
    assert results(tg_stack.fake.requests, "forget") == ["Forgot: #1 Ann likes green tea"]
    (after,) = await ask(tg_stack, ann, ANN, "what do I like to drink?")
    assert "green tea" not in after.system_text()
    assert "What you remember" not in after.system_text()
