"""What a group's admins choose for everyone in it, end to end in Telegram: a standing
instruction (`/instructions`) in that group's system prompt and no other's, a forum topic's
own before its group's; tools switched off in one group (`/tools off`) and not offered to the
model there; `/activation always`, which answers every message in that group alone; and other
bots, never answered. Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import json

import pytest

from adapters.chat.activation import BURST
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.fakes.tg import TgChat, TgUser
from tests.integration.telegram.test_approvals import ADMIN
from tests.integration.telegram.test_memory import ask
from tests.integration.telegram.test_replies import ANN, BOB
from tests.integration.telegram.test_task_list import listed
from tests.support.stack import idle
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
ADMINS = {"PARLEY_ADMINS": f"tg:{ADMIN.id}"}
MENTION = "@parley_test_bot"
PIRATE = "Answer like a pirate."
OTHER_BOT = TgUser(id=5005, first_name="Echo", username="echo_bot", is_bot=True)


async def said(stack: TelegramStack, chat: TgChat, user: TgUser, command: str, **kw: int) -> str:
    return (await listed(stack, chat, user, command=command, **kw)).text


def offered(request: RecordedRequest) -> set[str]:
    return {tool["name"] for tool in request.body.get("tools", [])}


@pytest.mark.parametrize("tg_stack", [ADMINS], indirect=True)
async def test_an_instruction_reaches_its_groups_turns_alone_until_cleared(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    ops, dev = tg_stack.tg.group("Ops"), tg_stack.tg.group("Dev")
    assert (await said(tg_stack, ops, ANN, f"/instructions {PIRATE}")) == (
        "Only an admin may change this chat's instruction."
    )
    too_long = await said(tg_stack, ops, ADMIN, "/instructions " + "x" * 1001)
    assert too_long == (
        "An instruction is at most 1000 characters; this one has 1001. Nothing was changed."
    )
    assert (await said(tg_stack, ops, ADMIN, f"/instructions {PIRATE}")).startswith("From now on")
    shown = await said(tg_stack, ops, ANN, "/instructions")
    assert shown.startswith(f'The instruction here: "{PIRATE}"')
    await prefer_brevity(tg_stack)

    tg_stack.fake.enqueue(Reply(text="Arr."), Reply(text="Hello."))
    (in_ops,) = await ask(tg_stack, ops, ANN, f"{MENTION} hi")
    (in_dev,) = await ask(tg_stack, dev, ANN, f"{MENTION} hi")
    system = in_ops.system_text()
    assert PIRATE in system and PIRATE not in in_dev.system_text()
    bootstrap_ends = system.index("## Tool results")
    assert bootstrap_ends < system.index(PIRATE) < system.index('"be brief"')  # then Ann's own
    parts = in_ops.body["system"]
    cached = [i for i, part in enumerate(parts) if "cache_control" in part]
    assert cached == [0] and PIRATE not in parts[0]["text"]  # never in the cached prefix

    assert (await said(tg_stack, ops, ADMIN, "/instructions clear")).startswith("Cleared")
    tg_stack.fake.enqueue(Reply(text="Hello."))
    (after,) = await ask(tg_stack, ops, ANN, f"{MENTION} hi again")
    assert PIRATE not in after.system_text()


async def prefer_brevity(stack: TelegramStack) -> None:
    """Ann's own standing instruction, which comes after her chat's."""
    chat = stack.tg.private_chat(ANN)
    await listed(stack, chat, ANN, command="/preferences instruction be brief")


@pytest.mark.parametrize("tg_stack", [ADMINS], indirect=True)
async def test_a_topic_has_its_own_instruction_or_its_groups(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    forum = tg_stack.tg.supergroup("Forum", forum=True)
    topic = tg_stack.tg.topic(forum, "Support")
    await said(tg_stack, forum, ADMIN, "/instructions Be formal.")
    await said(tg_stack, forum, ADMIN, "/instructions Be cheerful.", thread_id=topic)
    tg_stack.fake.enqueue(Reply(text="ok"), Reply(text="ok"))
    before, shown = len(tg_stack.fake.requests), len(tg_stack.tg.messages(forum, topic))
    tg_stack.tg.send(forum, ANN, f"{MENTION} hi", thread_id=topic)
    await tg_stack.tg.wait_for(lambda: len(tg_stack.tg.messages(forum, topic)) > shown)
    await idle(tg_stack.redis_url)
    in_topic = tg_stack.fake.requests[before].system_text()
    assert "Be cheerful." in in_topic and "Be formal." not in in_topic
    cleared = await said(tg_stack, forum, ADMIN, "/instructions clear", thread_id=topic)
    assert cleared == 'Cleared. This topic follows its group\'s instruction again: "Be formal."'


@pytest.mark.parametrize("tg_stack", [ADMINS], indirect=True)
async def test_a_tool_switched_off_in_one_group_is_still_offered_in_another(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    ops, dev = tg_stack.tg.group("Ops"), tg_stack.tg.group("Dev")
    refused = await said(tg_stack, ops, ANN, "/tools off current_time")
    assert refused == "Only an admin may switch tools on or off in this chat."
    unknown = await said(tg_stack, ops, ADMIN, "/tools off time_machine")
    assert unknown.startswith("There is no tool 'time_machine' here. Tools: ")
    off = await said(tg_stack, ops, ADMIN, "/tools off current_time")
    assert off == "current_time is switched off in this chat: I will not use it here."
    assert "• current_time (switched off here)" in await said(tg_stack, ops, ANN, "/tools")
    assert "• current_time\n" in await said(tg_stack, dev, ANN, "/tools")

    tg_stack.fake.enqueue(Reply(text="ok"), Reply(text="ok"), Reply(text="ok"))
    (in_ops,) = await ask(tg_stack, ops, ANN, f"{MENTION} what time is it?")
    (in_dev,) = await ask(tg_stack, dev, ANN, f"{MENTION} what time is it?")
    assert "current_time" not in offered(in_ops) and "current_time" in offered(in_dev)
    assert offered(in_ops) == offered(in_dev) - {"current_time"}
    on = await said(tg_stack, ops, ADMIN, "/tools on current_time")
    assert on == "current_time is switched on in this chat again."
    (again,) = await ask(tg_stack, ops, ANN, f"{MENTION} and now?")
    assert "current_time" in offered(again)


@pytest.mark.parametrize(
    "tg_stack",
    [ADMINS | {"PARLEY_POLICY": '[{"action": "deny", "tool": "current_time"}]'}],
    indirect=True,
)
async def test_a_tool_the_operator_denies_cannot_be_switched_on(tg_stack: TelegramStack) -> None:
    ops = tg_stack.tg.group("Ops")
    assert "• current_time (not allowed by the operator)" in await said(
        tg_stack, ops, ADMIN, "/tools"
    )
    assert await said(tg_stack, ops, ADMIN, "/tools on current_time") == (
        "The operator's policy does not allow current_time; it cannot be switched on here."
    )


@pytest.mark.parametrize("tg_stack", [ADMINS], indirect=True)
async def test_always_answers_unaddressed_messages_in_its_group_alone(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    ops, dev = tg_stack.tg.group("Ops"), tg_stack.tg.group("Dev")
    refused = await said(tg_stack, ops, ANN, "/activation always")
    assert (
        refused
        == "I answer here when someone mentions me or replies to me. Only an admin may change it."
    )
    assert (await said(tg_stack, ops, ADMIN, "/activation always")) == (
        "From now on: I answer every message here."
    )
    tg_stack.fake.enqueue(Reply(text="Seen in Ops."), Reply(text="Seen in Dev."))
    (in_ops,) = await ask(tg_stack, ops, BOB, "unaddressed in ops")
    assert "unaddressed in ops" in in_ops.last_user_text()
    tg_stack.tg.send(dev, BOB, "unaddressed in dev")
    (in_dev,) = await ask(tg_stack, dev, BOB, f"{MENTION} addressed in dev")
    assert "unaddressed" not in in_dev.last_user_text()
    assert len(tg_stack.fake.requests) == 2

    await said(tg_stack, ops, ADMIN, "/activation mention")
    tg_stack.fake.enqueue(Reply(text="Only this."))
    tg_stack.tg.send(ops, BOB, "unaddressed again")
    (back,) = await ask(tg_stack, ops, BOB, f"{MENTION} addressed")
    assert "unaddressed again" not in back.last_user_text()


@pytest.mark.parametrize("tg_stack", [ADMINS], indirect=True)
async def test_other_bots_never_start_a_turn(tg_stack: TelegramStack) -> None:
    """Not by a mention, a command or a plain message where every message is answered, nor
    a person's message sent through an inline bot unless it addresses the bot."""
    await tg_stack.start_worker()
    ops = tg_stack.tg.group("Ops")
    await said(tg_stack, ops, ADMIN, "/activation always")
    tg_stack.tg.send(ops, OTHER_BOT, f"{MENTION} loop with me")
    tg_stack.tg.send(ops, OTHER_BOT, "/help")
    tg_stack.tg.send(ops, OTHER_BOT, "plain bot chatter")
    tg_stack.tg.send(ops, BOB, "relayed", via_bot=OTHER_BOT.wire())
    tg_stack.fake.enqueue(Reply(text="Hi Bob."))
    (only,) = await ask(tg_stack, ops, BOB, "a person's own message")
    assert len(tg_stack.fake.requests) == 1
    said_to_model = only.last_user_text()
    assert "loop with me" not in said_to_model and "chatter" not in said_to_model
    assert "relayed" not in said_to_model
    texts = [m.text for m in tg_stack.tg.messages(ops)]
    assert texts[-1] == "Hi Bob." and not any(t.startswith("Commands:") for t in texts)


@pytest.mark.parametrize("tg_stack", [{"PARLEY_GROUP_CONTEXT": "2"}], indirect=True)
async def test_a_mention_sees_the_latest_unaddressed_messages_marked_as_untrusted(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    ops, dev = tg_stack.tg.group("Ops"), tg_stack.tg.group("Dev")
    for words in ("first words", "second words", "third words"):
        tg_stack.tg.send(ops, BOB, words)
    tg_stack.tg.send(ops, OTHER_BOT, "bot noise")
    tg_stack.tg.send(dev, BOB, "said elsewhere")
    tg_stack.fake.enqueue(Reply(text="They talked."), Reply(text="Nothing new."))
    (asked,) = await ask(tg_stack, ops, ANN, f"{MENTION} what did Bob say?")
    said = asked.last_user_text()
    assert "Said in this chat before this message, not addressed to you" in said
    context = said[said.index('<untrusted-data source="chat">') : said.index("</untrusted-data>")]
    assert "Bob: second words\nBob: third words" in context
    assert "first words" not in said and "bot noise" not in said and "elsewhere" not in said
    assert said.index("</untrusted-data>") < said.index("what did Bob say?")
    (again,) = await ask(tg_stack, ops, ANN, f"{MENTION} anything else?")
    assert "untrusted-data" not in again.last_user_text()  # each message is seen once


async def test_by_default_a_mention_sees_only_its_own_message(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    ops = tg_stack.tg.group("Ops")
    tg_stack.tg.send(ops, BOB, "not for the bot")
    tg_stack.fake.enqueue(Reply(text="Hi."))
    (asked,) = await ask(tg_stack, ops, ANN, f"{MENTION} hi")
    assert "not for the bot" not in asked.last_user_text()
    assert "untrusted-data" not in asked.last_user_text()


async def test_in_a_private_chat_its_person_sets_the_instruction_and_tools(
    tg_stack: TelegramStack,
) -> None:
    """With the defaults: no admins, yet a private chat's person is its admin."""
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    assert (await said(tg_stack, chat, ANN, f"/instructions {PIRATE}")).startswith("From now on")
    assert (await said(tg_stack, chat, ANN, "/tools off current_time")).endswith("not use it here.")
    assert (
        await said(tg_stack, chat, ANN, "/activation")
        == "In a private conversation I answer every message."
    )
    tg_stack.fake.enqueue(Reply(text="Arr."), Reply(text="Hello."))
    (asked,) = await ask(tg_stack, chat, ANN, "hi")
    assert PIRATE in asked.system_text() and "current_time" not in offered(asked)
    (bobs,) = await ask(tg_stack, tg_stack.tg.private_chat(BOB), BOB, "hi")
    assert PIRATE not in bobs.system_text() and "current_time" in offered(bobs)


async def test_delegate_is_listed_and_switched_off_like_any_tool(tg_stack: TelegramStack) -> None:
    """With the defaults: `/tools` lists `delegate`, and switched off in Ann's chat it is not
    offered to the model there (a call of it made anyway is refused as unknown), while Bob's
    chat still has it."""
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    assert "• delegate\n" in await said(tg_stack, chat, ANN, "/tools")
    assert await said(tg_stack, chat, ANN, "/tools off delegate") == (
        "delegate is switched off in this chat: I will not use it here."
    )
    assert "• delegate (switched off here)" in await said(tg_stack, chat, ANN, "/tools")
    delegating = Reply(tool_calls=[ToolCallSpec("delegate", {"task": "do job 1"})])
    tg_stack.fake.enqueue(delegating, Reply(text="I will do it myself."), Reply(text="Hi."))
    asked = await ask(tg_stack, chat, ANN, "split this")
    assert "delegate" not in offered(asked[0])
    assert asked[1].tool_results()[0][1].startswith("Unknown tool 'delegate'.")
    (bobs,) = await ask(tg_stack, tg_stack.tg.private_chat(BOB), BOB, "hi")
    assert "delegate" in offered(bobs)


@pytest.mark.parametrize("tg_stack", [ADMINS], indirect=True)
async def test_a_burst_of_unaddressed_messages_starts_turns_up_to_its_limit(
    tg_stack: TelegramStack,
) -> None:
    """A bridge posting as a person in an `always` group: past 12 unaddressed messages a
    minute, the rest are let go; a message addressed to the bot still is one."""
    ops = tg_stack.tg.group("Ops")
    await said(tg_stack, ops, ADMIN, "/activation always")
    for n in range(BURST + 2):
        tg_stack.tg.send(ops, BOB, f"relay {n:02d}")
    tg_stack.fake.responder = lambda request: Reply(text="ok")
    await tg_stack.start_worker()
    await ask(tg_stack, ops, ANN, f"{MENTION} last")
    await idle(tg_stack.redis_url)
    seen = json.dumps(tg_stack.fake.requests[-1].body["messages"])
    assert all(f"relay {n:02d}" in seen for n in range(BURST)) and "last" in seen
    assert f"relay {BURST:02d}" not in seen and f"relay {BURST + 1:02d}" not in seen
