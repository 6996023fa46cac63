"""Files the agent sends on Slack, end to end: the model calls `send_file` in a thread, and the
worker uploads the workspace's file with slack_sdk's files_upload_v2 (getUploadURLExternal,
the upload, completeUploadExternal) into that thread, with its caption as the comment, after
the text so far; the text that follows streams in a new message below it. A file Slack
refuses is told in the thread in one sentence."""

from __future__ import annotations

from pathlib import Path

from adapters.slack.place import chat_key
from bot.tools.workspace_paths import workspace_of
from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.slack import TEAM_ID, FakeSlack, SlackChannel, SlackUser
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack

FILE_SHARED = "files.completeUploadExternal"
TABLE = b"city,people\nLisbon,545000\nPorto,232000\n"


async def thread_with_a_file(
    stack: SlackStack,
) -> tuple[FakeSlack, SlackUser, SlackChannel, str]:
    """A thread the bot answered in, whose workspace holds cities.csv."""
    fake, ann, general = await stack.begin()
    stack.fake.enqueue(Reply(text="Hello."))
    asked = await fake.say(ann, general, f"{MENTION} hello")
    await answered(stack, general, asked.ts)
    session = f"{chat_key(TEAM_ID, general.id)}:{asked.ts}"
    folder = workspace_of(Path(stack.env["PARLEY_WORKSPACE_DIR"]), session)
    folder.mkdir(parents=True, mode=0o700)
    (folder / "cities.csv").write_bytes(TABLE)
    return fake, ann, general, asked.ts


async def test_a_workspace_file_is_uploaded_into_the_thread(slack_stack: SlackStack) -> None:
    fake, ann, general, thread = await thread_with_a_file(slack_stack)
    call = ToolCallSpec("send_file", {"path": "cities.csv", "caption": "Both cities"})
    slack_stack.fake.enqueue(
        Reply(text="Here it is.", tool_calls=[call]), Reply(text="Anything else?")
    )
    await fake.say(ann, general, f"{MENTION} the table please", thread_ts=thread)
    await fake.wait_for(lambda: bool(fake.uploads.shared), what="the upload")
    replies = await answered(slack_stack, general, thread, count=3)
    [shared] = fake.uploads.shared
    assert (shared.name, shared.data, shared.comment) == ("cities.csv", TABLE, "Both cities")
    assert (shared.channel, shared.thread_ts) == (general.id, thread)
    assert [reply.shown for reply in replies] == ["Hello.", "Here it is.", "Anything else?"]
    order = [c.method for c in fake.calls if c.method in ("chat.startStream", FILE_SHARED)]
    assert order[-3:] == ["chat.startStream", FILE_SHARED, "chat.startStream"]
    [(_, told)] = slack_stack.fake.requests[-1].tool_results()
    assert "was sent to the person" in told
    assert fake.violations == 0


async def test_a_file_slack_refuses_is_told_in_the_thread_and_the_model_knows(
    slack_stack: SlackStack,
) -> None:
    """files.completeUploadExternal answers an error: the thread reads one sentence, and the
    model reads that the file was not sent, with Slack's error, before its next call."""
    fake, ann, general, thread = await thread_with_a_file(slack_stack)
    fake.fail_next("files.completeUploadExternal", "not_in_channel")
    call = ToolCallSpec("send_file", {"path": "cities.csv"})
    slack_stack.fake.enqueue(Reply(tool_calls=[call]), Reply(text="Slack would not take it."))
    await fake.say(ann, general, f"{MENTION} the table please", thread_ts=thread)
    replies = await answered(slack_stack, general, thread, count=3)
    shown = [reply.shown for reply in replies]
    assert "⚠️ I could not send “cities.csv”: Slack refused it." in shown
    assert fake.uploads.shared == []
    [(_, told)] = slack_stack.fake.requests[-1].tool_results()
    assert told.endswith(
        "cities.csv (39 bytes) was not sent: Slack refused it (not_in_channel); the person "
        "was told it could not be sent."
    )
