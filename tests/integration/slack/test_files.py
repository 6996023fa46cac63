"""Files shared with the bot on Slack, end to end: downloaded with the bot token from Slack's
file host (the fake's, which serves its sign-in page to a request without it), checked, and
sent to the model as images; a file that is not read gets a note only its sender sees, and
nothing is queued."""

from __future__ import annotations

import io

from PIL import Image

from tests.fakes import hostile_files
from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.images import image_bytes
from tests.support.slack import SlackStack


async def test_a_photo_shared_with_a_mention_reaches_the_model(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.enqueue(Reply(text="A wide photo."))
    photo = image_bytes((2000, 1000), "JPEG")
    asked = await fake.say(
        ann, general, f"{MENTION} what is this?", files=[(photo, "p.jpg", "image/jpeg")]
    )
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == "A wide photo."
    [request] = slack_stack.fake.requests
    [(kind, sent)] = request.images()
    with Image.open(io.BytesIO(sent)) as seen:
        assert (kind, seen.size) == ("image/jpeg", (1568, 784))
    assert request.last_user_text().endswith("what is this?")
    assert len(fake.shared.downloads) == 1  # the message and app_mention events: one download


async def test_a_file_alone_in_a_dm_and_one_that_is_not_read(slack_stack: SlackStack) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    slack_stack.fake.enqueue(Reply(text="A screenshot."))
    screenshot = image_bytes((300, 200), "PNG")
    await fake.say(ann, dm, "", files=[(screenshot, "s.png", "image/png")])
    (reply,) = await answered(slack_stack, dm)
    assert reply.shown == "A screenshot."
    assert slack_stack.fake.requests[0].images() == [("image/png", screenshot)]
    archive = b"PK\x03\x04" + bytes(range(256))
    await fake.say(ann, dm, "what is in it?", files=[(archive, "data.zip", "application/zip")])
    await fake.wait_for(lambda: bool(fake.ephemerals))
    [note] = fake.ephemerals
    assert note["user"] == ann.id and "“data.zip”: this kind of file is not read" in note["text"]
    assert len(slack_stack.fake.requests) == 1


async def test_hostile_files_get_a_note_each_and_are_downloaded_once(
    slack_stack: SlackStack,
) -> None:
    """With the defaults: each bomb or broken file shared in a DM gets a note naming it, only
    its sender sees, after one download (the event was acknowledged, not delivered again)."""
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    hostile = [make() for make in hostile_files.ALL.values()]
    for name, data in hostile:
        await fake.say(ann, dm, "read this", files=[(data, name, "application/octet-stream")])
    await fake.wait_for(lambda: len(fake.ephemerals) == len(hostile))
    assert [note["text"].split(": ", 1)[0] for note in fake.ephemerals] == [
        f"“{name}”" for name, _ in hostile
    ]
    assert len(fake.shared.downloads) == len(hostile)
    assert slack_stack.fake.requests == []
