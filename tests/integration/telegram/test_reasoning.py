"""The model's thinking in Telegram, end to end: a folded quote above the answer in a private
chat, nothing shown in a group unless its admin chose, and `/reasoning` for admins only."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack

BOSS = TgUser(id=1009, first_name="Boss", username="boss")
THOUGHT = "They greet me. A short greeting back is enough."


@pytest.mark.parametrize(
    "tg_stack", [{"PARLEY_REASONING": "on", "PARLEY_ADMINS": "tg:1009"}], indirect=True
)
async def test_thinking_is_folded_above_the_answer_and_kept_from_groups(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(thinking=THOUGHT, text="Hello!")
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "hi")
    [shown] = await replies(tg_stack, chat)
    assert shown == f"💭 {THOUGHT}\n\nHello!"
    [message] = tg_stack.tg.messages(chat)
    [quote] = [e for e in message.entities if "blockquote" in e["type"]]
    assert quote["type"] == "expandable_blockquote" and quote["offset"] == 0
    assert shown[: quote["length"]].rstrip() == f"💭 {THOUGHT}"

    group = tg_stack.tg.group("Team")
    tg_stack.tg.send(group, ANN, "@parley_test_bot hi all")
    [plain] = await replies(tg_stack, group)
    assert plain == "Hello!"  # thought (signature kept), not shown to the whole group
    assert tg_stack.fake.requests[-1].body["thinking"]["display"] == "omitted"

    tg_stack.tg.send(group, ANN, "/reasoning stream")
    refused = (await replies(tg_stack, group, 2))[-1]
    assert "Only an admin may change it." in refused
    tg_stack.tg.send(group, BOSS, "/reasoning off")
    done = (await replies(tg_stack, group, 3))[-1]
    assert done == "From now on I answer without thinking first here."
    tg_stack.tg.send(group, ANN, "@parley_test_bot and now?")
    await replies(tg_stack, group, 4)
    assert "thinking" not in tg_stack.fake.requests[-1].body
