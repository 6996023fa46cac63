"""`/memory` in Telegram: the memories of this chat's scope (a person's own in private, the
group's in a group) with a Forget button each, and what every press of one is answered.
Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

from datetime import date

import pytest

from adapters.chat.digest_commands import ADMINS_ONLY
from adapters.chat.memory_list import (
    EMPTY,
    FORGET_USAGE,
    MALFORMED,
    NOT_YOURS,
    PRIVATE_HEADER,
    SEARCH_USAGE,
    USAGE,
)
from bot.store.digests import Digests
from bot.store.memory import Memories
from tests.fakes.tg import TgChat
from tests.integration.telegram.test_approvals import ADMIN, buttons
from tests.integration.telegram.test_memory import OTHERS, REX, ask
from tests.integration.telegram.test_replies import ANN, BOB
from tests.integration.telegram.test_task_list import current, listed, press
from tests.support.chat_stores import database_of, kept, memory_store, recall_store
from tests.support.tasks import Brain
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e

ANNS = f"tg:{ANN.id}"
BOBS = f"tg:{BOB.id}"
ODD = "Ann writes <b>*bold*</b> and snake_case & more"


def group_scope(chat: TgChat) -> str:
    return f"chat:tg:{chat.id}"


async def texts(memories: Memories, scope: str) -> list[str]:
    return [memory.text for memory in await memories.all(scope)]


async def test_a_person_sees_their_own_memories_and_forgets_one(tg_stack: TelegramStack) -> None:
    tg_stack.fake.responder = Brain()
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    async with memory_store(tg_stack) as memories:
        coffee, _ = await memories.add(ANNS, "Ann takes her coffee black")
        odd, _ = await memories.add(ANNS, ODD)
        bobs, _ = await memories.add(BOBS, "Bob cycles to work")
        (before,) = await ask(tg_stack, chat, ANN, "how do I take my coffee?")
        assert f"#{coffee.id} Ann takes her coffee black" in before.system_text()

        shown = await listed(tg_stack, chat, command="/memory")
        assert shown.text.split("\n") == [PRIVATE_HEADER, odd.line(), coffee.line()]
        assert f"#{odd.id} {ODD}" in shown.text and shown.entities == []  # as written
        assert "Bob cycles" not in shown.text
        assert buttons(shown) == {
            f"Forget #{odd.id}": f"mem:forget:{odd.id}",
            f"Forget #{coffee.id}": f"mem:forget:{coffee.id}",
        }
        data = f"mem:forget:{coffee.id}"
        assert await press(tg_stack, chat, ANN, shown.message_id, data) == f"Forgot #{coffee.id}."
        assert await texts(memories, ANNS) == [ODD]
        assert await texts(memories, BOBS) == ["Bob cycles to work"]
        await tg_stack.tg.wait_for(lambda: current(tg_stack, chat, shown.message_id).edits > 0)
        edited = current(tg_stack, chat, shown.message_id)
        assert edited.text.split("\n") == [PRIVATE_HEADER, odd.line(), f"#{coffee.id} forgotten"]
        assert buttons(edited) == {f"Forget #{odd.id}": f"mem:forget:{odd.id}"}

        again = await press(tg_stack, chat, ANN, shown.message_id, data)
        assert again == f"Memory #{coffee.id} is already gone."
        (after,) = await ask(tg_stack, chat, ANN, "how do I take my coffee?")
        assert "coffee black" not in after.system_text()
        assert f"#{odd.id} {ODD}" in after.system_text()
        assert bobs.id not in [m.id for m in await memories.all(ANNS)]


async def test_a_group_lists_its_own_memories_never_its_members(tg_stack: TelegramStack) -> None:
    group = tg_stack.tg.group("Ops")
    async with memory_store(tg_stack) as memories:
        deploys, _ = await memories.add(group_scope(group), "The team deploys on Thursdays")
        await memories.add(ANNS, "Ann's PIN hint is her cat")
        shown = await listed(tg_stack, group, command="/memory")
        assert "deploys on Thursdays" in shown.text and "PIN" not in shown.text
        assert shown.reply_to is not None  # answered in the group, replying to the command
        assert buttons(shown) == {f"Forget #{deploys.id}": f"mem:forget:{deploys.id}"}
        # the group's memories are everyone's in it: Bob may forget what Ann listed
        data = f"mem:forget:{deploys.id}"
        assert await press(tg_stack, group, BOB, shown.message_id, data) == (
            f"Forgot #{deploys.id}."
        )
        assert await texts(memories, group_scope(group)) == []
        assert await texts(memories, ANNS) == ["Ann's PIN hint is her cat"]
        empty = await listed(tg_stack, group, BOB, command="/memory")
        assert empty.text == EMPTY and "remember that" in empty.text
        assert empty.reply_markup is None


async def test_forged_foreign_and_malformed_presses_forget_nothing(
    tg_stack: TelegramStack,
) -> None:
    chat, group = tg_stack.tg.private_chat(ANN), tg_stack.tg.group("Ops")
    async with memory_store(tg_stack) as memories:
        mine, _ = await memories.add(ANNS, "Ann takes her coffee black")
        bobs, _ = await memories.add(BOBS, "Bob cycles to work")
        groups, _ = await memories.add(group_scope(group), "The team deploys on Thursdays")
        shown = await listed(tg_stack, chat, command="/memory")
        message = shown.message_id
        for other in (bobs.id, groups.id, 999_999):
            forged = await press(tg_stack, chat, ANN, message, f"mem:forget:{other}")
            assert forged == f"There is no memory {other} here."
        # someone else pressing in Ann's private chat (a forged update) is refused
        data = f"mem:forget:{mine.id}"
        assert await press(tg_stack, chat, BOB, message, data) == NOT_YOURS
        for bad in ("mem:forget:", "mem:forget:x1", "mem:forget:٣", "mem:forget:01", "mem:"):
            assert await press(tg_stack, chat, ANN, message, bad) == MALFORMED, bad
        assert await texts(memories, ANNS) == ["Ann takes her coffee black"]
        assert await texts(memories, BOBS) == ["Bob cycles to work"]
        assert await texts(memories, group_scope(group)) == ["The team deploys on Thursdays"]
        assert current(tg_stack, chat, message).edits == 0


@pytest.mark.parametrize(
    "tg_stack",
    [{"PARLEY_ALLOWED_USERS": f"tg:{ANN.id}", "PARLEY_ADMINS": f"tg:{ADMIN.id}"}],
    indirect=True,
)
async def test_in_a_group_only_people_let_in_may_forget_and_admins_always(
    tg_stack: TelegramStack,
) -> None:
    group = tg_stack.tg.group("Ops")
    async with memory_store(tg_stack) as memories:
        first, _ = await memories.add(group_scope(group), "The team deploys on Thursdays")
        second, _ = await memories.add(group_scope(group), "Standup is at 9:30")
        shown = await listed(tg_stack, group, command="/memory")
        refused = await press(tg_stack, group, BOB, shown.message_id, f"mem:forget:{first.id}")
        assert refused.startswith("Sorry, this assistant is private") and BOBS in refused
        assert await press(tg_stack, group, ADMIN, shown.message_id, f"mem:forget:{second.id}") == (
            f"Forgot #{second.id}."
        )
        assert await texts(memories, group_scope(group)) == ["The team deploys on Thursdays"]
        stranger = await listed(tg_stack, tg_stack.tg.private_chat(BOB), BOB, command="/memory")
        assert "private" in stranger.text and stranger.reply_markup is None


async def test_memory_search_finds_by_meaning_and_forget_takes_a_number(
    tg_stack: TelegramStack,
) -> None:
    chat = tg_stack.tg.private_chat(ANN)
    async with recall_store(tg_stack) as recall:
        rex, other, *_ = await kept(recall, ANNS, [REX, *OTHERS[:12]])
        assert await recall.memories.search(ANNS, "pet") == []  # no memory has the word

        shown = await listed(tg_stack, chat, command="/memory search pet")
        assert shown.text.split("\n")[:2] == ["About 'pet' (best first):", rex.line()]
        assert buttons(shown)[f"Forget #{rex.id}"] == f"mem:forget:{rex.id}"
        said = {
            "/memory search": SEARCH_USAGE,
            "/memory everything": USAGE,
            "/forget the dog": FORGET_USAGE,
            "/forget 999999": "There is no memory 999999 here.",
            f"/forget #{rex.id}": f"Forgot #{rex.id}.",
        }
        for command, answer in said.items():
            assert (await listed(tg_stack, chat, command=command)).text == answer, command
        assert REX not in await texts(recall.memories, ANNS)
        bobs = tg_stack.tg.private_chat(BOB)  # Bob's /forget reaches his own memories only
        forgot = await listed(tg_stack, bobs, BOB, command=f"/forget {other.id}")
        assert forgot.text == f"There is no memory {other.id} here."
        assert other.text in await texts(recall.memories, ANNS)


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": f"tg:{ADMIN.id}"}], indirect=True)
async def test_digests_are_listed_and_switched_off_by_their_person_or_a_groups_admin(
    tg_stack: TelegramStack,
) -> None:
    chat, group = tg_stack.tg.private_chat(ANN), tg_stack.tg.group("Ops")
    async with database_of(tg_stack) as database:
        digests = Digests(database.engine)
        day = await digests.keep(
            ANNS, date(2026, 12, 6), "2026-12-06: Ann booked the dentist.", [ANNS]
        )
        assert day is not None
        shown = await listed(tg_stack, chat, command="/memory")
        assert day.line() in shown.text.split("\n")
        assert buttons(shown) == {f"Forget #{day.id}": f"mem:forget:{day.id}"}

        status = await listed(tg_stack, chat, command="/memory digest")
        assert status.text.startswith("The daily digest about you is on.")
        off = await listed(tg_stack, chat, command="/memory digest off")
        assert off.text.startswith("I will keep no daily digest about you from now on")
        assert await digests.off([ANNS, group_scope(group)]) == {ANNS}

        refused = await listed(tg_stack, group, BOB, command="/memory digest off")
        assert refused.text == ADMINS_ONLY
        assert await digests.off([group_scope(group)]) == set()
        done = await listed(tg_stack, group, ADMIN, command="/memory digest off")
        assert done.text.startswith("I will keep no daily digest of this chat")
        assert await digests.off([group_scope(group)]) == {group_scope(group)}
