"""A message wakes an idle worker at once: it does not wait for the worker's next poll."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.llm import Reply
from tests.support.stack import Stack, send, texts

pytestmark = pytest.mark.e2e

# A poll this rare would leave a message waiting an hour; the deadline is generous for a busy
# machine and still far below it.
HOUR = 3600
ANSWERED_WITHIN = 60


@pytest.mark.parametrize("stack", [{"PARLEY_POLL_DELAY": str(HOUR)}], indirect=True)
async def test_a_message_is_taken_without_waiting_for_the_poll(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="At once."), Reply(text="Again."))
    async with stack.client() as client:
        session = await stack.session(client)
        async with asyncio.timeout(ANSWERED_WITHIN):
            first = await send(client, session, "hi")
            second = await send(client, session, "and again")
    assert (texts(first), texts(second)) == ("At once.", "Again.")
