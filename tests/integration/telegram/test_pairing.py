"""Pairing end to end in Telegram (PARLEY_DM_POLICY=pairing): a stranger who writes in private
gets a code, an admin approves it with /pair in a chat or `parley pair approve` on the command
line, the stranger is told and then answered; a wrong, expired or replayed code is refused,
guesses are limited, and /unpair lets them out again."""

from __future__ import annotations

import json

import pytest
from redis.asyncio import Redis

from bot.people.pairing import APPROVED, WELCOME, read_code
from tests.fakes.llm import Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_approvals import ADMIN, LAUNCH
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.parley import PIPE, start_parley
from tests.support.telegram import TelegramStack
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
EVE = TgUser(id=666, first_name="Eve", username="eve")
PAIRING = {"PARLEY_DM_POLICY": "pairing", "PARLEY_ADMINS": f"tg:{ADMIN.id}"}
SHORT = {**PAIRING, "PARLEY_PAIRING_CODE_TTL": "1"}
GUESTS_DENIED = {
    **PAIRING,
    "PARLEY_ALLOWED_USERS": f"tg:{ANN.id}",
    "PARLEY_POLICY": json.dumps([{"action": "deny", "tool": "launch", "role": "guest"}]),
}


def code_in(text: str) -> str:
    assert "give this code to an admin" in text, text
    code = read_code(text.split("/pair ")[1].split(".", maxsplit=1)[0])
    assert code is not None, text
    return code


async def ask_for_code(stack: TelegramStack, text: str = "hello", count: int = 1) -> str:
    chat = stack.tg.private_chat(EVE)
    stack.tg.send(chat, EVE, text)
    return code_in((await replies(stack, chat, count))[-1])


async def said_by_bot(stack: TelegramStack, chat: object, text: str, count: int) -> str:
    stack.tg.send(chat, ADMIN, text)  # type: ignore[arg-type]
    return (await replies(stack, chat, count))[-1]


async def parley(stack: TelegramStack, *args: str) -> tuple[int, str, str]:
    """`parley ARGS` run as its own process against the stack's Redis and database."""
    proc = await start_parley(*args, env=stack.env, cwd=stack.tmp, stdout=PIPE, stderr=PIPE)
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("tg_stack", [PAIRING], indirect=True)
async def test_a_stranger_paired_with_pair_in_a_group_is_answered_until_unpaired(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    eve = tg_stack.tg.private_chat(EVE)
    code = await ask_for_code(tg_stack)
    assert await ask_for_code(tg_stack, "/start", count=2) == code  # the same code again
    assert tg_stack.fake.requests == []  # a stranger costs no model call

    group = tg_stack.tg.group("Ops")
    tg_stack.tg.send(group, ANN, f"/pair {code}")  # anyone is let into groups; not an admin
    assert (await replies(tg_stack, group))[-1] == "Only an admin can /pair people."
    assert await said_by_bot(tg_stack, group, f"/pair {code}", 2) == APPROVED.format(
        person="tg:666"
    )
    assert (await replies(tg_stack, eve, 3))[-1] == WELCOME
    tg_stack.fake.enqueue(Reply(text="Hello Eve!"))
    tg_stack.tg.send(eve, EVE, "hello again")
    assert (await replies(tg_stack, eve, 4))[-1] == "Hello Eve!"

    replayed = await said_by_bot(tg_stack, group, f"/pair {code}", 3)
    assert replayed.startswith(f"No pairing code {code} is waiting"), replayed
    async with tg_stack.client() as client:
        listed = (await client.get("/api/people")).json()
    assert listed["total"] == 1
    assert {k: listed["items"][0][k] for k in ("person", "platform", "approved_by")} == {
        "person": "tg:666", "platform": "telegram", "approved_by": f"tg:{ADMIN.id}",
    }  # fmt: skip

    admin_chat = tg_stack.tg.private_chat(ADMIN)
    unpaired = await said_by_bot(tg_stack, admin_chat, "/unpair tg:666", 1)
    assert unpaired == "Unpaired tg:666: they are a stranger again."
    assert await ask_for_code(tg_stack, "still there?", count=5) != code
    assert len(tg_stack.fake.requests) == 1
    async with tg_stack.client() as client:
        assert (await client.get("/api/people")).json() == {"total": 0, "items": []}


@pytest.mark.parametrize("tg_stack", [PAIRING], indirect=True)
async def test_wrong_codes_are_refused_then_limited(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    code = await ask_for_code(tg_stack)
    wrong = "ABCDEFGH" if code != "ABCDEFGH" else "HGFEDCBA"
    admin_chat = tg_stack.tg.private_chat(ADMIN)
    assert (await said_by_bot(tg_stack, admin_chat, "/pair", 1)).startswith("Give the code")
    shape = await said_by_bot(tg_stack, admin_chat, "/pair 12345", 2)
    assert shape == "That is not a pairing code: a code is 8 letters and digits, like K7QX2MPA."
    for n in range(5):
        refused = await said_by_bot(tg_stack, admin_chat, f"/pair {wrong}", 3 + n)
        assert refused.startswith(f"No pairing code {wrong} is waiting: it is wrong, expired")
    limited = await said_by_bot(tg_stack, admin_chat, f"/pair {code}", 8)
    assert limited == "Too many wrong codes; try again in 15 minutes."
    code_again = await ask_for_code(tg_stack, "hi?", count=2)
    assert code_again == code  # still waiting: the right code was not even looked up


@pytest.mark.parametrize("tg_stack", [PAIRING], indirect=True)
async def test_parley_pair_approve_on_the_command_line(tg_stack: TelegramStack) -> None:
    """With the default lifetime: `parley pair list` shows the code waiting for an hour."""
    await tg_stack.start_worker()
    eve = tg_stack.tg.private_chat(EVE)
    code = await ask_for_code(tg_stack)
    status, listed, _ = await parley(tg_stack, "pair", "list")
    assert status == 0 and listed.startswith("waiting  tg:666  on tg:bot")
    assert "expires in 1 hour" in listed and code not in listed
    status, out, _ = await parley(tg_stack, "pair", "approve", code)  # stderr: the logs
    assert (status, out.strip()) == (0, APPROVED.format(person="tg:666"))
    assert (await replies(tg_stack, eve, 2))[-1] == WELCOME
    tg_stack.fake.enqueue(Reply(text="Welcome aboard."))
    tg_stack.tg.send(eve, EVE, "am I in?")
    assert (await replies(tg_stack, eve, 3))[-1] == "Welcome aboard."
    status, out, err = await parley(tg_stack, "pair", "approve", "12٣4")
    assert (status, out) == (1, "") and "That is not a pairing code" in err
    status, out, err = await parley(tg_stack, "pair", "approve", code)
    assert status == 1 and out == "" and f"\nNo pairing code {code} is waiting" in f"\n{err}"
    status, listed, _ = await parley(tg_stack, "pair", "list")
    assert status == 0 and listed.startswith("paired   tg:666  by cli  at ")
    status, out, _ = await parley(tg_stack, "pair", "revoke", "tg:666")
    assert status == 0 and out.strip() == "Unpaired tg:666: they are a stranger again."


@pytest.mark.parametrize("tg_stack", [SHORT], indirect=True)
async def test_an_expired_code_is_refused(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    code = await ask_for_code(tg_stack)
    redis = Redis.from_url(tg_stack.redis_url)
    try:

        async def expired() -> bool:
            return not await redis.keys("parley:{pair}:code:*")

        await until(expired, "the pairing code to expire")
    finally:
        await redis.aclose()
    admin_chat = tg_stack.tg.private_chat(ADMIN)
    refused = await said_by_bot(tg_stack, admin_chat, f"/pair {code}", 1)
    assert refused.startswith(f"No pairing code {code} is waiting: it is wrong, expired")
    assert "codes last 1 second" in refused
    assert await ask_for_code(tg_stack, "hello?", count=2) != code
    assert tg_stack.fake.requests == []


@pytest.mark.parametrize("tg_stack", [GUESTS_DENIED], indirect=True)
async def test_a_paired_person_is_a_user_to_the_policy(tg_stack: TelegramStack) -> None:
    """A rule denies `launch` to guests; a paired person, whom PARLEY_ALLOWED_USERS does not
    list, is a user: asked to approve it rather than denied."""
    await tg_stack.start_worker()
    eve = tg_stack.tg.private_chat(EVE)
    code = await ask_for_code(tg_stack)
    admin_chat = tg_stack.tg.private_chat(ADMIN)
    await said_by_bot(tg_stack, admin_chat, f"/pair {code}", 1)
    await replies(tg_stack, eve, 2)
    tg_stack.fake.enqueue(Reply(text="Let me launch it.", tool_calls=[LAUNCH]))
    tg_stack.tg.send(eve, EVE, "launch the rocket")
    await tg_stack.tg.wait_for(lambda: any(m.reply_markup for m in tg_stack.tg.messages(eve)))
    assert len(tg_stack.fake.requests) == 1  # asked, not run and not denied
