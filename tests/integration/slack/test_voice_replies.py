"""Replies said aloud on Slack, end to end: `!voice on` said in a thread, and the answer that
follows there said by the fake speech endpoint through the real `openai` SDK and uploaded by
the real slack_sdk into that thread (files.getUploadURLExternal, the bytes, then
files.completeUploadExternal) as Opus in Ogg, once the text below which it shows is whole;
`/voice` as a slash command, answered privately and kept for every thread of the channel or
DM it was said in (`spoken`: a typed message gets the text alone, a voice clip a voice note
too); each person's own choice; and, with the defaults, `!voice` saying it is not set up."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from adapters.chat.voice_commands import NOT_SET_UP
from adapters.slack.place import chat_key
from bot.files.audio import opus_seconds
from bot.people.limits import day
from bot.redis import keys
from bot.session.voice import NAME, speakable
from bot.telemetry import metrics
from tests.fakes.llm import Reply
from tests.fakes.llm.speech import kind_of
from tests.fakes.slack import TEAM_ID, SlackChannel
from tests.fakes.slack.files import clip
from tests.integration.slack.test_replies import MENTION, answered
from tests.integration.slack.test_thread_commands import notes
from tests.support.audio import tone
from tests.support.slack import SlackStack

pytestmark = pytest.mark.e2e
SPEECH = {"speech": "1"}
ANSWER = (
    "Lisbon is the **capital** of Portugal. See [its page](https://example.org/lisbon).\n\n"
    "```sh\ncurl example.org\n```\nIt sits on the Tagus."
)
SAID = "Lisbon is the capital of Portugal. See its page. It sits on the Tagus."
ON = "From now on I answer you in text and with a voice note."
SPOKEN = "From now on I answer you with a voice note too when you send me one, else in text."
UPLOAD = ("files.getUploadURLExternal", "files.completeUploadExternal")


async def voice_charges(stack: SlackStack, person: str) -> dict[str, int]:
    """What the person's day was charged for replies said aloud, by turn."""
    redis = Redis.from_url(stack.redis_url)
    try:
        charged = await redis.hgetall(keys.limit(person, f"tokens:{day(datetime.now(UTC))}"))
    finally:
        await redis.aclose()
    said = {field.decode(): int(value) for field, value in charged.items()}
    return {field: value for field, value in said.items() if field.startswith("turn:voice:")}


def calls_in(stack: SlackStack, channel: SlackChannel) -> list[str]:
    """The methods the app called about `channel`, in the order the fake answered them."""
    return [
        call.method
        for call in stack.fake_slack.calls
        if call.method in UPLOAD or call.params.get("channel") == channel.id
    ]


@pytest.mark.parametrize("slack_stack", [SPEECH], indirect=True)
async def test_voice_on_in_a_thread_uploads_the_said_answer_below_its_text(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    speech = slack_stack.fake.speech
    sent = metrics.VOICE_REPLIES.labels("slack", "sent")
    before = sent._value.get()
    slack_stack.fake.enqueue(Reply(text="Hello."))
    asked = await fake.say(ann, general, f"{MENTION} hello")
    await answered(slack_stack, general, asked.ts)
    assert fake.uploads.shared == [] and speech.requests == []  # nobody chose yet
    await fake.say(ann, general, "!voice on", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, ann.id)), what="the answer to !voice")
    assert notes(slack_stack, ann.id) == [ON]
    slack_stack.fake.enqueue(Reply(text=ANSWER))
    where = await fake.say(ann, general, f"{MENTION} where is Lisbon?", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(fake.uploads.shared), what="the voice note's upload")
    replies = await answered(slack_stack, general, asked.ts, count=2)
    assert [reply.shown for reply in replies] == ["Hello.", ANSWER]  # the text, whole
    [note] = fake.uploads.shared
    assert (note.name, note.title, note.comment) == (NAME, NAME, None)
    assert (note.channel, note.thread_ts) == (general.id, asked.ts)  # in the same thread
    [said] = speech.requests
    assert said.body == {
        "model": "gpt-4o-mini-tts", "voice": "alloy", "input": SAID, "response_format": "opus",
    }  # fmt: skip
    assert speakable(ANSWER, 1500) == SAID
    assert kind_of(note.data) == "opus"
    assert abs(opus_seconds(note.data) - said.milliseconds / 1000) < 0.2
    order = calls_in(slack_stack, general)
    stopped = len(order) - 1 - order[::-1].index("chat.stopStream")  # the answer's stream
    assert order[stopped:] == ["chat.stopStream", *UPLOAD]  # uploaded once the text was whole
    assert sent._value.get() == before + 1
    turn = f"turn:voice:{chat_key(TEAM_ID, general.id)}:{where.ts}"
    assert await voice_charges(slack_stack, "slack:U0ANN") == {turn: len(SAID)}
    assert fake.violations == 0


@pytest.mark.parametrize("slack_stack", [SPEECH | {"voice": "1"}], indirect=True)
async def test_voice_spoken_as_a_slash_command_in_a_dm_is_private_and_kept(
    slack_stack: SlackStack,
) -> None:
    """`/voice spoken` in the DM: the answer is the command's acknowledgement, which Slack
    shows to Ann alone; a typed message then gets its text alone, a voice clip a voice note
    below the answer too."""
    fake, ann, _ = await slack_stack.begin()
    speech = slack_stack.fake.speech
    dm = fake.dm(ann)
    status, answer = await fake.command(ann, dm, "/voice", "spoken")
    assert (status, answer) == (200, SPOKEN)
    status, asked = await fake.command(ann, dm, "/voice")
    assert asked.startswith("Here I answer you with a voice note too when you send me one")
    assert fake.messages(dm.id) == [] and fake.count("chat.postMessage") == 0  # nothing posted
    slack_stack.fake.enqueue(Reply(text="Typed, so read."), Reply(text="Spoken, so said."))
    await fake.say(ann, dm, "a typed question")
    await answered(slack_stack, dm)
    assert speech.requests == [] and fake.uploads.shared == []
    slack_stack.fake.transcriptions.answer_any("a spoken question")
    await fake.say(ann, dm, "", files=[clip(tone("webm"), seconds=1)])
    await fake.wait_for(lambda: bool(fake.uploads.shared), what="the voice note's upload")
    replies = await answered(slack_stack, dm, count=2)
    assert replies[1].shown.endswith("Spoken, so said.")
    [said] = speech.requests
    assert said.text == "Spoken, so said."
    [note] = fake.uploads.shared
    assert (note.name, note.channel, note.thread_ts) == (NAME, dm.id, None)
    assert kind_of(note.data) == "opus"


@pytest.mark.parametrize("slack_stack", [SPEECH], indirect=True)
async def test_voice_is_each_persons_own_in_every_thread_of_the_channel(
    slack_stack: SlackStack,
) -> None:
    """Ann says `/voice on` in #general: her replies in a new thread there are said aloud;
    Bob, in the same channel, who chose nothing, gets text alone."""
    fake, ann, general = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    speech = slack_stack.fake.speech
    status, answer = await fake.command(ann, general, "/voice", "on")
    assert (status, answer) == (200, ON)
    slack_stack.fake.enqueue(Reply(text="Hello Bob."))
    bobs = await fake.say(bob, general, f"{MENTION} hi from Bob")
    assert [m.shown for m in await answered(slack_stack, general, bobs.ts)] == ["Hello Bob."]
    assert speech.requests == [] and fake.uploads.shared == []
    slack_stack.fake.enqueue(Reply(text="Hello Ann."))
    anns = await fake.say(ann, general, f"{MENTION} hi from Ann")
    await fake.wait_for(lambda: bool(fake.uploads.shared), what="Ann's voice note")
    assert [m.shown for m in await answered(slack_stack, general, anns.ts)] == ["Hello Ann."]
    [said] = speech.requests
    assert said.text == "Hello Ann."
    [note] = fake.uploads.shared
    assert (note.channel, note.thread_ts) == (general.id, anns.ts)  # her thread, not Bob's
    _, bobs_own = await fake.command(bob, general, "/voice")
    assert bobs_own.startswith("Here I answer you in text. ")  # Ann's choice is not his


async def test_with_the_defaults_voice_in_a_thread_says_it_is_not_set_up(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.enqueue(Reply(text="Hello."), Reply(text="Just text."))
    asked = await fake.say(ann, general, f"{MENTION} hello")
    await answered(slack_stack, general, asked.ts)
    await fake.say(ann, general, "!voice on", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, ann.id)), what="the answer to !voice")
    assert notes(slack_stack, ann.id) == [NOT_SET_UP]
    await fake.say(ann, general, "and now?", thread_ts=asked.ts)
    replies = await answered(slack_stack, general, asked.ts, count=2)
    assert replies[1].shown == "Just text."
    assert fake.uploads.shared == [] and slack_stack.fake.speech.requests == []
    assert fake.count(UPLOAD[0]) == 0
