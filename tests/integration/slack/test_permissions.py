""" "Always allow" in Slack holds for the person in the whole conversation (its threads
included) and is listed and revoked with `/permissions`, privately; `/preferences` shows and
sets a person's own, privately too. Real web app, worker, Redis and database; fake Slack and
model."""

from __future__ import annotations

import pytest

from adapters.chat.permission_list import OWN_HEADER
from adapters.slack.permission_list import ACTION
from tests.fakes.llm import Reply
from tests.fakes.slack.model import TEAM_ID
from tests.integration.slack.test_approvals import LAUNCH, prompt_in
from tests.integration.slack.test_memory_list import listed
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.chat_stores import grant_store
from tests.support.slack import SlackStack, block_text

pytestmark = pytest.mark.e2e


async def test_always_allow_covers_the_conversation_until_revoked(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await prompt_in(slack_stack, general, ann)
    slack_stack.fake.enqueue(Reply(text="Launched once."))
    await fake.press(ann, prompt, "parley_remember")
    await answered(slack_stack, general, thread, count=3)

    slack_stack.fake.enqueue(Reply(tool_calls=[LAUNCH]), Reply(text="Launched elsewhere."))
    other = await fake.say(ann, general, f"{MENTION} and once more, in a new thread")
    replies = await answered(slack_stack, general, other.ts, count=1)
    assert replies[-1].shown == "Launched elsewhere."  # not asked in another thread

    shown = await listed(fake, ann, general, "/permissions")
    async with grant_store(slack_stack) as grants:
        (grant,) = await grants.in_chat(f"slack:{TEAM_ID}:{general.id}")
    assert (grant.person, grant.tool) == ("slack:U0ANN", "launch")
    assert block_text(shown).split("\n") == [f"*{OWN_HEADER}*", f"#{grant.id} launch"]
    edits = shown.edits
    await fake.press(ann, shown, ACTION, value=str(grant.id))
    await fake.wait_for(lambda: shown.edits > edits)
    assert block_text(shown).split("\n") == [f"*{OWN_HEADER}*", f"#{grant.id} launch: revoked"]
    async with grant_store(slack_stack) as grants:
        assert await grants.in_chat(f"slack:{TEAM_ID}:{general.id}") == []
    await prompt_in(slack_stack, general, ann)  # asked again


async def test_preferences_are_shown_and_set_privately(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    status, answer = await fake.command(ann, general, "/preferences", "language pt-BR")
    assert status == 200 and answer.startswith("Language set to pt-BR.")
    status, answer = await fake.command(ann, general, "/preferences")
    assert status == 200 and "• Language: pt-BR" in answer
    status, answer = await fake.command(ann, general, "/preferences", "colour blue")
    assert status == 200 and answer.startswith("I know no preference 'colour'.")
    assert fake.messages(general.id) == []  # all of it privately
    slack_stack.fake.enqueue(Reply(text="Olá."))
    asked = await fake.say(ann, general, f"{MENTION} hello")
    await answered(slack_stack, general, asked.ts, count=1)
    assert "in pt-BR, unless they ask" in slack_stack.fake.requests[-1].system_text()
