"""The intake every chat platform's messages go through, on a real Redis with the real
mailbox: its steps in their order, each refusal told once, nothing submitted or counted
before its turn, no file downloaded before the message passed every other step."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from adapters.chat.access import ONCE, Gate, refusal, too_long
from adapters.chat.intake import Arrival, Files, Intake
from bot.config.settings import Settings
from bot.files.intake import MB, Arrived, Limits
from bot.files.intake import Intake as FileIntake
from bot.files.reading import Readers, ReadLimits
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import MAX_TEXT, Sender
from tests.support.images import image_bytes

ANN = Sender(id="tg:1", name="Ann")
STRANGER = Sender(id="tg:666", name="Mallory")
SESSION = "tg:100"


class Jobs:
    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


class Told(list[str]):
    """What a platform showed the sender, in order."""

    async def __call__(self, text: str) -> None:
        self.append(text)


def arrival(sender: Sender, text: str = "hello", n: int = 1, **given: Any) -> Arrival:
    return Arrival(
        id=f"tg:{1000 + n}",
        sender=sender,
        text=text,
        session=SESSION,
        platform="telegram",
        chat_kind="private",
        reply_to={"chat_id": 100},
        where="chat 100",
        **given,
    )


@pytest.fixture
async def intake(redis_url: str, tmp_path: Path) -> AsyncIterator[Intake]:
    redis = Redis.from_url(redis_url)
    settings = Settings(_env_file=None, allowed_users=[ANN.id], user_messages_per_minute=2)
    files = FileIntake(Readers(tmp_path / "files", ReadLimits()), Limits(file_bytes=MB))
    yield Intake(Gate(settings, redis), Mailbox(redis, Jobs()), files)
    await redis.aclose()


async def queued(intake: Intake) -> list[str]:
    return [envelope.id for envelope in await intake.mailbox.peek(SESSION, count=10)]


async def counted(intake: Intake, person: str) -> int:
    return int(await intake.gate.redis.zcard(keys.limit(person, "messages")))


async def test_a_message_let_in_is_submitted_as_its_envelope(intake: Intake) -> None:
    told = Told()
    submitted = await intake.take(arrival(ANN), told)
    assert submitted is not None and submitted.accepted and told == []
    (envelope,) = await intake.mailbox.peek(SESSION)
    assert (envelope.id, envelope.kind, envelope.text, envelope.sender) == (
        "tg:1001", "message", "hello", ANN,
    )  # fmt: skip
    assert (envelope.platform, envelope.chat_kind, envelope.reply_to) == (
        "telegram", "private", {"chat_id": 100},
    )  # fmt: skip
    assert await counted(intake, ANN.id) == 1


async def test_a_stranger_is_told_once_and_nothing_is_counted_or_submitted(
    intake: Intake,
) -> None:
    told = Told()
    assert await intake.take(arrival(STRANGER, n=1), told) is None
    assert await intake.take(arrival(STRANGER, n=2), told) is None
    assert told == [refusal(STRANGER.id) + ONCE]
    assert await queued(intake) == [] and await counted(intake, STRANGER.id) == 0


async def test_a_stranger_learns_nothing_of_their_texts_length(intake: Intake) -> None:
    told = Told()
    assert await intake.take(arrival(STRANGER, "x" * (MAX_TEXT + 1)), told) is None
    assert told == [refusal(STRANGER.id) + ONCE]


async def test_a_text_too_long_is_answered_every_time_and_never_counted(intake: Intake) -> None:
    told, text = Told(), "x" * (MAX_TEXT + 1)
    assert await intake.take(arrival(ANN, text, n=1), told) is None
    assert await intake.take(arrival(ANN, text, n=2), told) is None
    assert told == [too_long(text)] * 2
    assert await queued(intake) == [] and await counted(intake, ANN.id) == 0


async def test_a_message_that_says_nothing_gets_the_platforms_answer(intake: Intake) -> None:
    told = Told()
    assert await intake.take(arrival(ANN, "", if_empty="Ask me something."), told) is None
    assert told == ["Ask me something."]
    assert await queued(intake) == [] and await counted(intake, ANN.id) == 0


async def test_over_the_limit_is_told_once_per_window_and_not_submitted(intake: Intake) -> None:
    told = Told()
    for n in range(1, 5):
        await intake.take(arrival(ANN, n=n), told)
    assert await queued(intake) == ["tg:1001", "tg:1002"]
    (over,) = told
    assert over.startswith("You have sent 2 messages in the last minute; ")


async def test_a_redelivery_is_counted_and_queued_once(intake: Intake) -> None:
    told = Told()
    first = await intake.take(arrival(ANN), told)
    again = await intake.take(arrival(ANN), told)
    assert first is not None and first.accepted
    assert again is not None and again.duplicate
    assert await queued(intake) == ["tg:1001"] and await counted(intake, ANN.id) == 1
    assert told == []


class Downloads:
    """A platform's download of a message's files: what it hands over, and whether it ran."""

    def __init__(self, *files: Arrived) -> None:
        self.files = list(files)
        self.runs = 0

    def announced(self, size: int | None = None) -> Files:
        sizes = tuple((f.name, size if size is not None else len(f.data)) for f in self.files)
        return Files(sizes, self.fetch)

    async def fetch(self) -> list[Arrived]:
        self.runs += 1
        return self.files


async def test_a_photo_without_a_caption_is_fetched_stored_and_submitted(intake: Intake) -> None:
    photo = image_bytes((40, 30), "JPEG")
    download = Downloads(Arrived(photo, "photo.jpg"))
    told = Told()
    assert await intake.take(arrival(ANN, "", files=download.announced()), told) is not None
    (envelope,) = await intake.mailbox.peek(SESSION)
    [ref] = envelope.attachments
    assert (envelope.text, ref.media_type, ref.size, told) == ("", "image/jpeg", len(photo), [])
    assert intake.files.store.read(ref) == photo


async def test_files_are_not_fetched_for_a_stranger_nor_past_their_announced_size(
    intake: Intake,
) -> None:
    download = Downloads(Arrived(image_bytes((40, 30)), "big.png"))
    told = Told()
    assert await intake.take(arrival(STRANGER, files=download.announced()), told) is None
    assert await intake.take(arrival(ANN, files=download.announced(2 * MB)), told) is None
    assert told[1] == "“big.png” is 2.0 MB; files of at most 1.0 MB are read"
    assert download.runs == 0
    assert await queued(intake) == [] and await counted(intake, ANN.id) == 0


async def test_a_file_that_cannot_be_read_is_told_and_nothing_is_queued(intake: Intake) -> None:
    download = Downloads(Arrived(b"%PDF-1.7\n", "invoice.pdf"))
    told = Told()
    assert await intake.take(arrival(ANN, "what is due?", files=download.announced()), told) is None
    assert told == ["“invoice.pdf”: the PDF is damaged and cannot be read"]
    assert download.runs == 1 and await queued(intake) == []
