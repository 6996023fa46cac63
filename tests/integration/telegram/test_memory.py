"""Long-term memory end to end in Telegram: what Ann asks to be remembered outlives `/new`
and reaches the model's instructions in her private chat, never Bob's nor a group's, until
she asks to forget it. Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from bot.memory.prompt import RECALLED
from tests.bench.recall_set import distractors
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


REX = "Dog: Rex, a beagle adopted in 2019"
OTHERS = [
    "My sister's name is Eve and she lives in Lisbon",
    "I take my coffee black, no sugar",
    "My name day is on June 3",
    "The car's plate number is KX-4512",
    "I work as a nurse on night shifts",
    "My favourite film is Casablanca",
    "I am allergic to peanuts",
    "The wifi password at home is written on the fridge",
    "My daughter plays the violin",
    "I run 5 km every Sunday morning",
    "The dentist appointment is every six months",
    "I prefer window seats on planes",
    "My birthday is on March 14",
    "I am learning Portuguese",
    "The gym closes at 10 pm",
    "My manager's name is Olga",
    "I grow tomatoes on the balcony",
    "The rent is due on the first of the month",
    "My brother is called Tom and he is a pilot",
    "I collect old postcards",
    "The boiler was serviced in May",
    "I drive a blue Skoda",
    "My neighbour's name is Mr Kowalski",
    "I like jazz from the sixties",
    "The library card number is 88213",
    "I am vegetarian on weekdays",
    "My grandmother's recipe for soup uses barley",
    "I keep spare keys with my aunt",
    "The bike lock code is 4471",
    "I cannot stand horror films",
]


@pytest.mark.parametrize(
    ("tg_stack", "found"),
    [({}, True), ({"PARLEY_EMBEDDINGS_MODEL": "off"}, False)],
    indirect=["tg_stack"],
    ids=["by-meaning", "by-words-alone"],
)
async def test_a_reworded_question_brings_the_memory_it_means(
    tg_stack: TelegramStack, found: bool
) -> None:
    """With the defaults, a memory comes back to a question that shares none of its words;
    by words alone it does not."""
    others = [ToolCallSpec("remember", {"fact": fact}) for fact in OTHERS]
    tg_stack.fake.responder = Brain(
        calls={
            "remember my dog": [ToolCallSpec("remember", {"fact": REX})],
            "remember all this": others,
        }
    )
    await tg_stack.start_worker()
    ann = tg_stack.tg.private_chat(ANN)
    await ask(tg_stack, ann, ANN, "remember my dog: Rex, a beagle, adopted in 2019")
    await ask(tg_stack, ann, ANN, "remember all this")
    assert len(results(tg_stack.fake.requests, "remember")) == 1 + len(OTHERS)
    await ask(tg_stack, ann, ANN, "/new")
    (asked,) = await ask(tg_stack, ann, ANN, "Remind me what name my pet has?")
    assert "## What you remember" in asked.system_text()
    assert (REX in asked.system_text()) is found


async def test_a_memory_the_prompt_does_not_hold_comes_with_the_message_that_needs_it(
    tg_stack: TelegramStack,
) -> None:
    """With the defaults, in a conversation whose system prompt was chosen without it, a
    memory comes with a later message about it, and that message alone; the system prompt
    stays as it was, so the provider's cache of it holds."""
    notes = [ToolCallSpec("remember", {"fact": note}) for note in distractors(60)]
    tg_stack.fake.responder = Brain(
        calls={"remember my dog": [ToolCallSpec("remember", {"fact": REX})], "notes": notes}
    )
    await tg_stack.start_worker()
    ann = tg_stack.tg.private_chat(ANN)
    await ask(tg_stack, ann, ANN, "remember my dog: Rex, a beagle, adopted in 2019")
    await ask(tg_stack, ann, ANN, "notes")
    await ask(tg_stack, ann, ANN, "/new")
    (first,) = await ask(tg_stack, ann, ANN, "What is a good name for a jazz band?")
    assert "## What you remember" in first.system_text()
    assert REX not in seen(first)
    (pet,) = await ask(tg_stack, ann, ANN, "Remind me what name my pet has?")
    assert pet.system_text() == first.system_text()
    [last] = pet.body["messages"][-1:]
    note = next(block["text"] for block in last["content"] if RECALLED in block.get("text", ""))
    assert REX in note
    (thanks,) = await ask(tg_stack, ann, ANN, "thanks, that is all")
    assert RECALLED not in json.dumps(thanks.body["messages"][-1])
    # the note stays where it was said, so the conversation before the new message is as
    # the provider saw it (but for where the cache's marks are)
    before = len(pet.body["messages"])
    assert unmarked(thanks.body["messages"][:before]) == unmarked(pet.body["messages"])


def unmarked(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` without Anthropic's cache marks, which move to the newest message."""
    return [
        {**message, "content": [
            {k: v for k, v in block.items() if k != "cache_control"} for block in message["content"]
        ]}
        for message in messages
    ]  # fmt: skip
