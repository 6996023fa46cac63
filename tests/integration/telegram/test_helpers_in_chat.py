"""What a helper posts for the person shows in its parent's Telegram chat: its approval
requests and its files.

The parent's reply runs on while a prompt waits: it names the helper, its buttons decide
the helper's call as any prompt's do (only the person who asked, or an admin), and the
helper's answer comes back to the parent, whose reply then lands in the chat. A file a
helper sends is posted in the parent's reply, once. The helper's own run shows nothing else
in the chat.
"""

from __future__ import annotations

from redis.asyncio import Redis

from bot.redis.confirmations import Confirmations
from tests.fakes.llm import ToolCallSpec
from tests.fakes.tg import BotMessage, TgChat
from tests.integration.telegram.test_approvals import answer_to, buttons
from tests.integration.telegram.test_files_out import TABLE, workspace
from tests.integration.telegram.test_replies import ANN, BOB, replies
from tests.support.helper_brains import one_helper
from tests.support.telegram import TelegramStack

TASK = "launch the rocket ✨ and say how it went"


LAUNCH = ToolCallSpec("launch", {"target": "rocket ✨"})
# The helper launches (which needs an approval) and says how it went.
brain = one_helper("get the rocket launched", TASK, LAUNCH, first="Asking a helper.")


async def prompted(stack: TelegramStack, chat: TgChat) -> BotMessage:
    stack.fake.responder = brain
    stack.tg.send(chat, ANN, "@parley_test_bot get the rocket launched")
    await stack.tg.wait_for(lambda: any(m.reply_markup for m in stack.tg.messages(chat)))
    (prompt,) = [m for m in stack.tg.messages(chat) if m.reply_markup]
    return prompt


async def test_a_helpers_approval_is_asked_in_the_chat_and_approving_runs_it(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    prompt = await prompted(tg_stack, group)
    assert prompt.text.startswith("🔐 Allow launch?\n🤖 Asked by a helper working on: ")
    assert TASK in prompt.text and '"target": "rocket ✨"' in prompt.text
    assert tg_stack.fake.requests[-1].tool_results() == []  # the helper waits: nothing ran
    wrong = tg_stack.tg.press(group, BOB, prompt.message_id, buttons(prompt)["✅ Approve"])
    await tg_stack.tg.wait_for(
        lambda: any(a["callback_query_id"] == wrong for a in tg_stack.tg.callback_answers)
    )
    assert "Only the person who asked" in str(answer_to(tg_stack, wrong)["text"])
    query = tg_stack.tg.press(group, ANN, prompt.message_id, buttons(prompt)["✅ Approve"])
    await replies(tg_stack, group, 3)
    await tg_stack.tg.wait_for(lambda: tg_stack.tg.messages(group)[1].reply_markup is None)
    shown = [m.text for m in tg_stack.tg.messages(group)]
    assert answer_to(tg_stack, query)["text"] == "Approved."
    # The reply so far, the prompt, then the rest of the reply below it, the helper's line
    # now done; the helper's own run showed nothing in the chat but its prompt.
    assert len(shown) == 3, shown
    assert shown[0] == f"⏳ Helper: {TASK}\n\nAsking a helper."
    assert shown[1].endswith("✅ Approved by Ann")
    assert shown[2] == f"✅ Helper: {TASK}\n\nDone. helper: launched rocket ✨"
    assert tg_stack.fake.rejected == []


async def test_a_helpers_call_denied_in_the_chat_is_not_run(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await prompted(tg_stack, chat)
    tg_stack.tg.press(chat, ANN, prompt.message_id, buttons(prompt)["❌ Deny"])
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1].endswith("\n\nDone. helper: Denied by the user.")
    assert all("launched" not in text for text in shown)


# The helper sends the table and says so.
sender = one_helper(
    "the table please", "send cities.csv", ToolCallSpec("send_file", {"path": "cities.csv"})
)


async def test_a_file_a_helper_sends_is_posted_in_its_parents_reply(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Reports")
    (workspace(tg_stack, group) / "cities.csv").write_bytes(TABLE)
    tg_stack.fake.responder = sender
    tg_stack.tg.send(group, ANN, "@parley_test_bot the table please")
    await replies(tg_stack, group, 2)
    [document] = tg_stack.tg.uploads(group)
    assert document.upload is not None and document.upload.data == TABLE
    # The reply so far, the file below it, and the rest of the reply below the file.
    shown = [(m.upload.kind if m.upload else "text", m.text) for m in tg_stack.tg.everything(group)]
    assert len(shown) == 3 and shown[:2] == [
        ("text", "⏳ Helper: send cities.csv"),
        ("document", ""),
    ]
    assert shown[2][1].startswith("✅ Helper: send cities.csv\n\nDone. ")
    # The helper knew only that it handed the file on; its parent's model reads that it
    # is in the chat, as the parent's reply posted it.
    assert shown[2][1].endswith("Done. cities.csv, which the helper sent, is in the chat.")
    results = [told for r in tg_stack.fake.requests for _, told in r.tool_results()]
    assert any(
        told.endswith(
            "cities.csv (39 bytes) was handed to the chat to be posted for the person; do not "
            "send it again."
        )
        for told in results
    ), results


async def test_stop_withdraws_the_request_its_helper_waits_on(tg_stack: TelegramStack) -> None:
    """A /stop while a helper's request waits: the parent and its helper stop, the prompt
    says the request was withdrawn (its buttons gone), and the request is decided for good,
    so no later decision (the HTTP API's) runs the call."""
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    prompt = await prompted(tg_stack, group)
    approve = buttons(prompt)["✅ Approve"]
    tg_stack.tg.send(group, ANN, "/stop")

    def withdrawn() -> bool:
        now = [m for m in tg_stack.tg.messages(group) if m.message_id == prompt.message_id]
        return now[0].reply_markup is None

    await tg_stack.tg.wait_for(withdrawn)
    shown = await replies(tg_stack, group, 3)
    assert shown[1].endswith("↩️ Not run: the helper that asked was stopped."), shown
    assert shown[2] == f"❌ Helper: {TASK}\n\n⏹ Stopped.", shown
    redis = Redis.from_url(tg_stack.redis_url)
    request = await Confirmations(redis).get(approve.split(":")[1])
    await redis.aclose()
    assert request is not None and request.status == "withdrawn"
    assert request.decided_by == "stopped"
    assert all("launched" not in str(r.tool_results()) for r in tg_stack.fake.requests)
