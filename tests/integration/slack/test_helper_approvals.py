"""A helper's call that needs an approval is asked in its parent's Slack thread, naming the
helper; pressed there, it runs in the helper, and the parent's reply goes on below it."""

from __future__ import annotations

from tests.fakes.llm import ToolCallSpec
from tests.integration.slack.test_approvals import buttons, settled
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.helper_brains import one_helper
from tests.support.slack import SlackStack, block_text

TASK = "launch the rocket and say how it went"


# The helper launches (which needs an approval) and says how it went.
brain = one_helper(
    "get it launched", TASK, ToolCallSpec("launch", {"target": "rocket"}), first="Asking a helper."
)


async def test_a_helpers_approval_is_asked_in_the_thread_and_approving_runs_it(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.responder = brain
    asked = await fake.say(ann, general, f"{MENTION} get it launched")
    await fake.wait_for(lambda: any(buttons(m) for m in fake.bot_messages(general.id, asked.ts)))
    (prompt,) = [m for m in fake.bot_messages(general.id, asked.ts) if buttons(m)]
    shown = block_text(prompt)
    assert f"🤖 Asked by a helper working on: {TASK}" in shown and "launch" in shown
    await fake.press(ann, prompt, "parley_approve")
    replies = await answered(slack_stack, general, asked.ts, count=3)
    decided = await settled(fake, general, asked.ts, prompt.ts)
    assert "✅ Approved by <@U0ANN>" in block_text(decided)
    texts = [m.shown for m in replies]
    assert texts[0].startswith("Asking a helper."), texts
    assert texts[-1] == "Done. helper: launched rocket", texts
    assert slack_stack.fake.rejected == []
