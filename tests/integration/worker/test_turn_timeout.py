"""A turn past PARLEY_TURN_TIMEOUT, end to end with the default (3 minutes): a `parley
worker` process stops a reply that is still streaming, keeps what it had, and says why; the
next message is answered as usual."""

from __future__ import annotations

import time

import pytest

from bot.config.settings import Settings
from tests.fakes.llm import Reply
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
DEFAULT = Settings.model_fields["turn_timeout"].default
ENDING = "I stopped here: a reply may take 3 min at most, and this one ran out of time."


@pytest.mark.slow  # waits out the default timeout
@pytest.mark.timeout(480)  # the default timeout, and time to start and answer again
async def test_a_slow_reply_is_stopped_at_the_default_timeout(tg_stack: TelegramStack) -> None:
    assert DEFAULT == 180
    await tg_stack.start_worker_process()
    endless = " ".join(f"word{i}" for i in range(2_000))  # 15 minutes at this pace
    tg_stack.fake.enqueue(Reply(text=endless, chunk_size=10, delay=0.5))
    chat = tg_stack.tg.private_chat(ANN)
    sent = time.monotonic()
    tg_stack.tg.send(chat, ANN, "tell me everything")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.messages(chat)), within=DEFAULT + 120)
    waited = time.monotonic() - sent  # a private reply lands as a message when it ends
    (shown,) = await replies(tg_stack, chat)
    said, _, ending = shown.partition("\n\n")
    assert said.startswith("word0 word1") and endless.startswith(said)
    assert ending.startswith(ENDING)
    assert waited >= DEFAULT - 1, "stopped before the default timeout"
    assert len(tg_stack.fake.requests) == 1  # stopped, not retried

    tg_stack.fake.enqueue(Reply(text="Here is the short version."))
    tg_stack.tg.send(chat, ANN, "go on, briefly")
    assert (await replies(tg_stack, chat, 2))[-1] == "Here is the short version."
    assert [c for c in tg_stack.tg.calls if not c.ok] == []
