"""The operator's skills in Slack: `/skills` lists them, a channel's admin switches one off
there, and that channel's threads no longer list it while another channel's still do;
`!skills` in a thread says the same. Real web app, worker, Redis and database; fake Slack and
model."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import MENTION, answered
from tests.integration.slack.test_thread_commands import notes
from tests.skills.making import write_skill
from tests.support.slack import SlackStack

pytestmark = pytest.mark.e2e
SKILLS = Path(tempfile.mkdtemp(prefix="parley-test-slack-skills-"))
SETTINGS = {"PARLEY_ADMINS": "slack:U0ADA", "PARLEY_SKILLS_DIR": str(SKILLS)}


@pytest.mark.parametrize("slack_stack", [SETTINGS], indirect=True)
async def test_a_skill_switched_off_in_a_channel_is_gone_from_its_threads_alone(
    slack_stack: SlackStack,
) -> None:
    write_skill(SKILLS, "greeting", "Greet people in French.", "Say bonjour.")
    fake, ann, general = await slack_stack.begin()
    ada, random = fake.user("U0ADA", "ada"), fake.channel("C0RANDOM", "random")
    _, listed = await fake.command(ann, general, "/skills", "")
    assert listed.startswith("Skills in this chat:\n• greeting: Greet people in French.\n")
    _, refused = await fake.command(ann, general, "/skills", "off greeting")
    assert refused == "Only an admin may switch skills on or off in this chat."
    _, off = await fake.command(ada, general, "/skills", "off greeting")
    assert off == "The skill greeting is switched off in this chat: I will not use it here."

    slack_stack.fake.responder = lambda request: Reply(text="ok")
    here = await fake.say(ann, general, f"{MENTION} hi")
    await answered(slack_stack, general, here.ts)
    there = await fake.say(ann, random, f"{MENTION} hi")
    await answered(slack_stack, random, there.ts)
    in_general, in_random = slack_stack.fake.requests
    assert "- greeting: " not in in_general.system_text()
    assert "- greeting: " in in_random.system_text()

    await fake.say(ann, general, "!skills", thread_ts=here.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ANN")))
    assert "• greeting (switched off here): " in notes(slack_stack, "U0ANN")[-1]
