"""Files the agent sends on Telegram, end to end: the model calls `send_file`, the worker posts
the workspace's file through the real aiogram Bot to the fake Bot API (sendDocument, or
sendPhoto for an image), after the text so far (the text that follows shows below it) and
replying where the reply does; a chart a
`run_python` program draws with matplotlib in the real sandbox comes as a photo; a file that
is not there, too large or outside the workspace is an error the model reads, and nothing is
posted; a worker killed after it posted a file leaves the resumed turn nothing to post
again."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from PIL import Image
from redis.asyncio import Redis

from bot.redis import keys
from bot.telemetry import metrics
from bot.tools.workspace_paths import workspace_of
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.fakes.tg import TOKEN, TgChat
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.images import image_bytes
from tests.support.programs import PLOT
from tests.support.stack import idle
from tests.support.telegram import TelegramStack
from tests.support.waiting import until

TABLE = b"city,people\nLisbon,545000\nPorto,232000\n"


def workspace(stack: TelegramStack, chat: TgChat) -> Path:
    """The chat's workspace, made as a write of the agent would have made it."""
    folder = workspace_of(Path(stack.env["PARLEY_WORKSPACE_DIR"]), f"tg:{chat.id}")
    folder.mkdir(parents=True, mode=0o700)
    return folder


def send_file(path: str, caption: str = "") -> Reply:
    arguments = {"path": path} | ({"caption": caption} if caption else {})
    return Reply(text="Here it is.", tool_calls=[ToolCallSpec("send_file", arguments)])


async def test_a_workspace_file_is_sent_as_a_document_after_the_text(
    tg_stack: TelegramStack,
) -> None:
    """With the defaults."""
    await tg_stack.start_worker()
    sent = metrics.FILES_SENT.labels("telegram", "document")
    calls = metrics.PLATFORM_CALLS.labels("telegram", "sendDocument", "ok")
    before = (sent._value.get(), calls._value.get())
    group = tg_stack.tg.group("Reports")
    (workspace(tg_stack, group) / "cities.csv").write_bytes(TABLE)
    tg_stack.fake.enqueue(send_file("cities.csv", "Two cities"), Reply(text="Sent."))
    asked = tg_stack.tg.send(group, ANN, "@parley_test_bot the table please")
    await replies(tg_stack, group, 2)
    [document] = tg_stack.tg.uploads(group)
    assert document.upload is not None
    assert (document.upload.kind, document.upload.name) == ("document", "cities.csv")
    assert (document.upload.data, document.text) == (TABLE, "Two cities")
    assert document.reply_to == asked["message"]["message_id"]
    shown = [(m.upload.kind if m.upload else "text", m.text) for m in tg_stack.tg.everything(group)]
    assert shown == [("text", "Here it is."), ("document", "Two cities"), ("text", "Sent.")]
    [(_, told)] = tg_stack.fake.requests[1].tool_results()
    assert "cities.csv" in told and "was sent to the person" in told
    assert (sent._value.get(), calls._value.get()) == (before[0] + 1, before[1] + 1)


async def test_a_file_telegram_refuses_is_told_in_one_sentence_and_the_model_knows(
    tg_stack: TelegramStack,
) -> None:
    """With the defaults. Telegram answers the upload 400 "file is too big": the person reads
    one sentence, and the model, before its next call, reads that the file was not sent and
    why (never that it was), so it can say so rather than claim the file is in the chat."""
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    (workspace(tg_stack, chat) / "cities.csv").write_bytes(TABLE)
    tg_stack.tg.fail_next("sendDocument", 400, "Bad Request: file is too big")
    tg_stack.fake.enqueue(send_file("cities.csv"), Reply(text="Telegram would not take it."))
    tg_stack.tg.send(chat, ANN, "the table please")
    shown = await replies(tg_stack, chat, 2)
    assert "⚠️ I could not send “cities.csv”: Telegram refused it." in shown
    assert tg_stack.tg.uploads(chat) == []
    [(_, told)] = tg_stack.fake.requests[1].tool_results()
    assert "was sent to the person" not in told
    assert told.endswith(
        "cities.csv (39 bytes) was not sent: Telegram refused it (Bad Request: file is too "
        "big); the person was told it could not be sent."
    )
    logs = "".join(p.read_text() for p in tg_stack.tmp.glob("*.log"))
    assert TOKEN.split(":")[1] not in logs


async def test_an_image_is_sent_as_a_photo(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    png = image_bytes((800, 600))
    (workspace(tg_stack, chat) / "chart.png").write_bytes(png)
    tg_stack.fake.enqueue(send_file("chart.png"), Reply(text="There."))
    tg_stack.tg.send(chat, ANN, "the chart")
    await replies(tg_stack, chat)
    [photo] = tg_stack.tg.uploads(chat)
    assert photo.upload is not None and (photo.upload.kind, photo.upload.data) == ("photo", png)


@pytest.mark.parametrize(
    "tg_stack", [{"PARLEY_POLICY": '[{"action": "allow", "tool": "run_python"}]'}], indirect=True
)
async def test_a_chart_run_python_draws_comes_as_a_photo_in_its_topic(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    forum = tg_stack.tg.supergroup("Data", forum=True)
    topic = tg_stack.tg.topic(forum, "Charts")
    plot = ToolCallSpec("run_python", {"code": PLOT})
    tg_stack.fake.enqueue(Reply(tool_calls=[plot]), Reply(text="Lisbon has more people."))
    asked = tg_stack.tg.send(
        forum, ANN, "@parley_test_bot plot this CSV: city,people / Lisbon,545000 / Porto,232000",
        thread_id=topic,
    )  # fmt: skip
    assert await replies(tg_stack, forum, thread_id=topic) == ["Lisbon has more people."]
    [photo] = tg_stack.tg.uploads(forum)
    assert photo.upload is not None and photo.upload.kind == "photo"
    assert (photo.thread_id, photo.reply_to) == (topic, asked["message"]["message_id"])
    shown = [m.upload.kind if m.upload else m.text for m in tg_stack.tg.everything(forum, topic)]
    assert shown == ["photo", "Lisbon has more people."]  # the tool's status message went
    with Image.open(io.BytesIO(photo.upload.data)) as chart:
        assert (chart.format, chart.size) == ("PNG", (640, 480))
    [(_, told)] = tg_stack.fake.requests[1].tool_results()
    assert "exit code: 0" in told and "chart.png" in told and "was sent to the person" in told


@pytest.mark.parametrize("tg_stack", [{"PARLEY_SEND_FILE_MB": "0.01"}], indirect=True)
async def test_a_file_missing_too_large_or_outside_is_an_error_and_nothing_is_posted(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    (workspace(tg_stack, chat) / "big.bin").write_bytes(b"x" * 20_000)
    calls = [
        ToolCallSpec("send_file", {"path": "gone.csv"}, id="missing"),
        ToolCallSpec("send_file", {"path": "big.bin"}, id="large"),
        ToolCallSpec("send_file", {"path": "../../etc/passwd"}, id="outside"),
    ]
    tg_stack.fake.enqueue(Reply(tool_calls=calls), Reply(text="None of them, sorry."))
    tg_stack.tg.send(chat, ANN, "send them")
    assert await replies(tg_stack, chat) == ["None of them, sorry."]
    told = dict(tg_stack.fake.requests[1].tool_results())
    assert "Not found: gone.csv does not exist" in told["missing"]
    assert "big.bin is 20 KB; a file sent may be at most 10 KB" in told["large"]
    assert "leads outside the workspace" in told["outside"]
    assert tg_stack.tg.uploads(chat) == []


async def test_a_file_posted_before_a_crash_is_not_posted_again(tg_stack: TelegramStack) -> None:
    """The worker is SIGKILLed once the file is posted and kept; the worker that resumes the
    turn is asked by the model to send the same file again, and posts nothing."""
    first = await tg_stack.start_worker_process()
    chat = tg_stack.tg.private_chat(ANN)
    (workspace(tg_stack, chat) / "cities.csv").write_bytes(TABLE)
    gate = asyncio.Event()
    tg_stack.fake.enqueue(
        send_file("cities.csv"),
        Reply(text="Let me also check something " * 3, chunk_size=6, gate=gate, gate_after=2),
        send_file("cities.csv"),
        Reply(text="Done."),
    )
    tg_stack.tg.send(chat, ANN, "the table please")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.uploads(chat)), what="the document")
    await files_kept(tg_stack.redis_url)
    await until(lambda: len(tg_stack.fake.requests) >= 2, "the model asked again")
    tg_stack.kill(first)
    await tg_stack.start_worker_process()
    await tg_stack.tg.wait_for(
        lambda: any("Done." in m.text for m in tg_stack.tg.messages(chat)), what="the answer"
    )
    await idle(tg_stack.redis_url)
    gate.set()
    assert len(tg_stack.tg.uploads(chat)) == 1, "the file was posted a second time"
    resumed: RecordedRequest = tg_stack.fake.requests[-1]
    assert "was sent to the person" in resumed.tool_results()[0][1]


async def files_kept(redis_url: str) -> None:
    """Once a worker has kept the files a reply posted in Redis."""
    redis = Redis.from_url(redis_url)

    async def kept() -> bool:
        return bool([key async for key in redis.scan_iter(keys.reply_files("tg", "*"))])

    try:
        await until(kept, "a reply's posted files kept in Redis", every=0.02)
    finally:
        await redis.aclose()
