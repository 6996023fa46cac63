"""Voice clips and audio files shared with the bot on Slack, end to end: downloaded with the
bot token, transcribed by the fake OpenAI endpoint through the real SDK (a clip's WebM turned
into Ogg by ffmpeg first), the transcript the turn's text and a quoted line above the
answer; without a transcription backend, a note only the sender sees, nothing fetched."""

from __future__ import annotations

import pytest

from bot.files.voice import MARK, NO_BACKEND
from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.slack.files import clip
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.audio import tone
from tests.support.slack import SlackStack

pytestmark = pytest.mark.e2e


def echo(request: RecordedRequest) -> Reply:
    return Reply(text="Told: " + request.last_user_text().split("\n", 1)[1].replace("\n", " | "))


@pytest.mark.parametrize("slack_stack", [{"voice": "1"}], indirect=True)
async def test_a_voice_clip_in_a_dm_and_an_audio_file_with_a_mention(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    heard = slack_stack.fake.transcriptions
    slack_stack.fake.responder = echo
    heard.answer_any("Remind me to call <mum> at 5.")
    dm = fake.dm(ann)
    await fake.say(ann, dm, "", files=[clip(tone("webm"), seconds=1)])
    (reply,) = await answered(slack_stack, dm)
    assert reply.shown == (
        f"> 🎤 Remind me to call \\<mum\\> at 5\\.\n\nTold: {MARK} | Remind me to call <mum> at 5."
    )
    [sent] = heard.requests
    assert sent.filename == "voice.ogg" and sent.data.startswith(b"OggS")  # from WebM
    song = tone("mp3", hz=520)
    heard.script(song, "A song about the sea.")
    asked = await fake.say(
        ann, general, f"{MENTION} what is it about?", files=[(song, "sea.mp3", "audio/mpeg")]
    )
    (answer,) = await answered(slack_stack, general, asked.ts)
    assert answer.shown.endswith(f"Told: what is it about? |  | {MARK} | A song about the sea.")
    assert (heard.requests[1].filename, heard.requests[1].data) == ("voice.mp3", song)
    assert len(fake.shared.downloads) == 2 and heard.rejected == []


async def test_without_a_backend_a_voice_clip_gets_a_note_and_nothing_is_fetched(
    slack_stack: SlackStack,
) -> None:
    """With the defaults: no transcription model is set."""
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    await fake.say(ann, dm, "", files=[clip(tone("webm"), seconds=1)])
    await fake.wait_for(lambda: bool(fake.ephemerals))
    [note] = fake.ephemerals
    assert (note["user"], note["text"]) == (ann.id, NO_BACKEND)
    assert fake.shared.downloads == [] and slack_stack.fake.requests == []
