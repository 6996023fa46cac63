"""`/memory` in Slack: the memories of this conversation's scope (a person's own in a DM, the
channel's elsewhere), answered so only the requester sees them, with a Forget button each;
what every press of one is answered, and the list replaced through the press's response_url.
Real web app, worker, Redis and database; fake Slack and model."""

from __future__ import annotations

import copy
import json

import pytest

from adapters.chat.digest_commands import ADMINS_ONLY
from adapters.chat.memory_list import (
    CHAT_HEADER,
    EMPTY,
    FORGET_USAGE,
    NOT_YOURS,
    PRIVATE_HEADER,
    SEARCH_USAGE,
    USAGE,
)
from adapters.slack.memory_list import ACTION
from bot.store.digests import Digests
from bot.store.memory import Memories
from tests.fakes.slack import FakeSlack, Posted, SlackChannel, SlackUser
from tests.fakes.slack.model import TEAM_ID
from tests.integration.telegram.test_memory import OTHERS, REX
from tests.support.chat_stores import database_of, kept, memory_store, recall_store
from tests.support.slack import SlackStack, block_text, buttons_by_value

pytestmark = pytest.mark.e2e

ANNS, BOBS = "slack:U0ANN", "slack:U0BOB"
ODD = "Ann writes <b>*bold*</b> & snake_case"


def channel_scope(channel: SlackChannel) -> str:
    return f"chat:slack:{TEAM_ID}:{channel.id}"


async def listed(
    fake: FakeSlack, user: SlackUser, channel: SlackChannel, command: str = "/memory"
) -> Posted:
    """Type `command` in `channel`; the list, which only `user` sees."""
    before, posted = len(fake.ephemeral_messages), len(fake.messages(channel.id))
    status, answer = await fake.command(user, channel, command)
    assert status == 200, answer
    assert len(fake.ephemeral_messages) == before + 1, answer
    shown = fake.ephemeral_messages[-1]
    assert shown.ephemeral_to == user.id and shown.channel == channel.id
    assert len(fake.messages(channel.id)) == posted  # nothing posted for everyone to see
    return shown


async def press(
    fake: FakeSlack,
    user: SlackUser,
    message: Posted,
    value: str,
    *,
    check: bool = True,
    action: str = ACTION,
) -> str:
    """`user` presses Forget (or `action`) carrying `value`; the private note they were
    answered with."""
    notes = len(fake.ephemerals)
    await fake.press(user, message, action, value=value, check=check)
    await fake.wait_for(lambda: len(fake.ephemerals) > notes)
    (note,) = fake.ephemerals[notes:]
    assert note["user"] == user.id and note["channel"] == message.channel
    return str(note["text"])


async def forget(fake: FakeSlack, user: SlackUser, message: Posted, value: str) -> None:
    """`user` presses Forget carrying `value`, which forgets it: the list is replaced, and
    no note is needed."""
    notes, edits = len(fake.ephemerals), message.edits
    await fake.press(user, message, ACTION, value=value)
    await fake.wait_for(lambda: message.edits > edits)
    assert fake.ephemerals[notes:] == []


async def texts(memories: Memories, scope: str) -> list[str]:
    return [memory.text for memory in await memories.all(scope)]


async def test_in_a_dm_only_the_person_sees_their_memories_and_forgets_one(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    dm = fake.dm(ann)
    async with memory_store(slack_stack) as memories:
        coffee, _ = await memories.add(ANNS, "Ann takes her coffee black")
        odd, _ = await memories.add(ANNS, ODD)
        await memories.add(BOBS, "Bob cycles to work")
        await memories.add(channel_scope(general), "The team deploys on Thursdays")
        shown = await listed(fake, ann, dm)
        assert block_text(shown).split("\n") == [
            f"*{PRIVATE_HEADER}*",
            f"#{odd.id} Ann writes &lt;b&gt;*bold*&lt;/b&gt; &amp; snake_case",
            coffee.line(),
        ]
        assert "Bob" not in shown.text and "Thursdays" not in shown.text
        assert set(buttons_by_value(shown, ACTION)) == {str(odd.id), str(coffee.id)}
        stale = copy.deepcopy(shown)  # what a second client still shows

        await forget(fake, ann, shown, str(coffee.id))
        assert await texts(memories, ANNS) == [ODD]
        assert block_text(shown).split("\n") == [
            f"*{PRIVATE_HEADER}*",
            f"#{odd.id} Ann writes &lt;b&gt;*bold*&lt;/b&gt; &amp; snake_case",
            f"#{coffee.id} forgotten",
        ]
        assert set(buttons_by_value(shown, ACTION)) == {str(odd.id)}
        (replaced,) = fake.responses
        assert replaced["replace_original"] is True and shown.ephemeral_to == ann.id

        again = await press(fake, ann, stale, str(coffee.id))
        assert again == f"Memory #{coffee.id} is already gone."
        await fake.wait_for(lambda: stale.edits > 0)  # that client's list says so too
        assert f"#{coffee.id} forgotten" in block_text(stale)
        assert await texts(memories, BOBS) == ["Bob cycles to work"]


async def test_another_user_pressing_a_private_list_forgets_nothing(
    slack_stack: SlackStack,
) -> None:
    fake, ann, _ = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    async with memory_store(slack_stack) as memories:
        coffee, _ = await memories.add(ANNS, "Ann takes her coffee black")
        bobs, _ = await memories.add(BOBS, "Bob cycles to work")
        shown = await listed(fake, ann, fake.dm(ann))
        assert await press(fake, bob, shown, str(coffee.id), check=False) == NOT_YOURS
        forged = await press(fake, ann, shown, str(bobs.id), check=False)
        assert forged == f"There is no memory {bobs.id} here."
        assert await texts(memories, ANNS) == ["Ann takes her coffee black"]
        assert await texts(memories, BOBS) == ["Bob cycles to work"]
        assert shown.edits == 0


async def test_a_channel_lists_its_own_memories_never_its_members(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    async with memory_store(slack_stack) as memories:
        deploys, _ = await memories.add(channel_scope(general), "The team deploys on Thursdays")
        mine, _ = await memories.add(ANNS, "Ann's PIN hint is her cat")
        shown = await listed(fake, ann, general)
        assert block_text(shown).split("\n") == [f"*{CHAT_HEADER}*", deploys.line()]
        forged = await press(fake, ann, shown, str(mine.id), check=False)
        assert forged == f"There is no memory {mine.id} here."
        await forget(fake, ann, shown, str(deploys.id))
        assert block_text(shown).split("\n") == [f"*{CHAT_HEADER}*", f"#{deploys.id} forgotten"]
        assert buttons_by_value(shown, ACTION) == {}
        assert await texts(memories, channel_scope(general)) == []
        assert await texts(memories, ANNS) == ["Ann's PIN hint is her cat"]
    status, answer = await fake.command(ann, general, "/memory")
    assert status == 200 and answer == EMPTY and "remember that" in answer


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ALLOWED_USERS": "slack:U0ANN"}], indirect=True)
async def test_a_stranger_is_refused_the_list(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    async with memory_store(slack_stack) as memories:
        await memories.add(channel_scope(general), "secret plans")
        status, answer = await fake.command(bob, general, "/memory")
        assert status == 200 and BOBS in answer and "secret plans" not in answer
        shown = await listed(fake, ann, general)
        (memory_id,) = buttons_by_value(shown, ACTION)
        refused = await press(fake, bob, shown, memory_id, check=False)
        assert refused.startswith("Sorry, this assistant is private") and BOBS in refused
        assert await texts(memories, channel_scope(general)) == ["secret plans"]
    assert not any("secret" in json.dumps(note) for note in fake.ephemerals)


async def said(
    fake: FakeSlack, user: SlackUser, channel: SlackChannel, command: str, text: str
) -> str:
    """Type `command text`; the private answer's text."""
    status, answer = await fake.command(user, channel, command, text)
    assert status == 200 and not answer.startswith("{"), answer  # a text, no list
    return answer


async def test_memory_search_finds_by_meaning_and_forget_takes_a_number(
    slack_stack: SlackStack,
) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    async with recall_store(slack_stack) as recall:
        rex, other, *_ = await kept(recall, ANNS, [REX, *OTHERS[:12]])
        await fake.command(ann, dm, "/memory", "search pet")
        shown = fake.ephemeral_messages[-1]
        lines = block_text(shown).split("\n")
        assert lines[:2] == ["*About 'pet' (best first):*", rex.line()]
        await forget(fake, ann, shown, str(rex.id))  # redrawn: the same search, Rex gone
        redrawn = block_text(shown).split("\n")
        assert redrawn[0] == lines[0] and redrawn[-1] == f"#{rex.id} forgotten"
        assert rex.line() not in redrawn and str(rex.id) not in buttons_by_value(shown, ACTION)

        assert await said(fake, ann, dm, "/memory", "search") == SEARCH_USAGE
        assert await said(fake, ann, dm, "/memory", "everything") == USAGE
        assert await said(fake, ann, dm, "/forget", "the dog") == FORGET_USAGE
        assert await said(fake, ann, dm, "/forget", f"#{other.id}") == f"Forgot #{other.id}."
        assert other.text not in await texts(recall.memories, ANNS)


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_a_digest_is_switched_off_by_its_person_or_a_channels_admin(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    ada, channel = fake.user("U0ADA", "ada"), f"chat:slack:{TEAM_ID}:{general.id}"
    async with database_of(slack_stack) as database:
        digests = Digests(database.engine)
        status = await said(fake, ann, fake.dm(ann), "/memory", "digest")
        assert status.startswith("The daily digest about you is on.")
        off = await said(fake, ann, fake.dm(ann), "/memory", "digest off")
        assert off.startswith("I will keep no daily digest about you from now on")
        assert await digests.off([ANNS, channel]) == {ANNS}
        assert await said(fake, ann, general, "/memory", "digest off") == ADMINS_ONLY
        assert await digests.off([channel]) == set()
        done = await said(fake, ada, general, "/memory", "digest off")
        assert done.startswith("I will keep no daily digest of this chat")
        assert await digests.off([channel]) == {channel}
