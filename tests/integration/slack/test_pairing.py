"""Pairing end to end in Slack (PARLEY_DM_POLICY=pairing): a stranger who writes in a DM gets
a code only they see, an admin approves it with `/pair` in any channel, the stranger is told
in their DM and then answered; `/unpair` lets them out again."""

from __future__ import annotations

import pytest

from bot.people.pairing import APPROVED, WELCOME, read_code
from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import answered
from tests.integration.slack.test_thread_commands import notes
from tests.support.slack import SlackStack

pytestmark = pytest.mark.e2e
PAIRING = {
    "PARLEY_DM_POLICY": "pairing",
    "PARLEY_ADMINS": "slack:U0ADA",
    "PARLEY_ALLOWED_USERS": "slack:U0ANN",
}


def code_in(text: str) -> str:
    assert "give this code to an admin" in text, text
    code = read_code(text.split("/pair ")[1].split(".", maxsplit=1)[0])
    assert code is not None, text
    return code


@pytest.mark.parametrize("slack_stack", [PAIRING], indirect=True)
async def test_a_stranger_in_a_dm_is_paired_by_an_admins_pair_command(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    eve, ada = fake.user("U0EVE", "eve"), fake.user("U0ADA", "ada")
    dm = fake.dm(eve)
    await fake.say(eve, dm, "hello")
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0EVE")))
    code = code_in(notes(slack_stack, "U0EVE")[0])
    await fake.say(eve, dm, "hello?")
    await fake.wait_for(lambda: len(notes(slack_stack, "U0EVE")) == 2)
    assert code_in(notes(slack_stack, "U0EVE")[1]) == code
    assert fake.bot_messages(dm.id) == [] and slack_stack.fake.requests == []
    assert "your id is slack:U0EVE" in (await fake.command(eve, dm, "/usage"))[1]

    assert (await fake.command(ann, general, "/pair", code))[1] == (
        "Only an admin can /pair people."
    )
    status, approved = await fake.command(ada, general, "/pair", code)
    assert (status, approved) == (200, APPROVED.format(person="slack:U0EVE"))
    (welcome,) = await answered(slack_stack, dm)
    assert welcome.shown == WELCOME
    slack_stack.fake.enqueue(Reply(text="Hello Eve!"))
    await fake.say(eve, dm, "hello again")
    assert (await answered(slack_stack, dm, count=2))[-1].shown == "Hello Eve!"
    assert "so far:" in (await fake.command(eve, dm, "/usage"))[1]  # a user now
    replayed = (await fake.command(ada, general, "/pair", code))[1]
    assert replayed.startswith(f"No pairing code {code} is waiting")

    status, unpaired = await fake.command(ada, fake.dm(ada), "/unpair", "slack:U0EVE")
    assert unpaired == "Unpaired slack:U0EVE: they are a stranger again."
    await fake.say(eve, dm, "still there?")
    await fake.wait_for(lambda: len(notes(slack_stack, "U0EVE")) == 3)
    assert code_in(notes(slack_stack, "U0EVE")[2]) != code
    assert len(slack_stack.fake.requests) == 1
