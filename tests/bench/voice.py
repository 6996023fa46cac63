"""Voice replies: how much later than its text a reply's voice note comes, with the speech
endpoint answering at once.

A real redis-server, `parley web` (in this process) with the fake Bot API, a `parley worker`
process with PARLEY_VOICE_REPLIES=on, the fake model and the fake speech endpoint in this
process (its sound encoded ahead, so it answers at once). Each sample is a new private chat
asking a short question; the figure is the time from the fake Telegram taking the reply's
text (its final `sendMessage`) to it taking the voice note (`sendVoice`): the answer made
speakable, the speech request through the `openai` SDK, the voice note stored, and the upload.
Once with an endpoint that answers Opus as asked (target: under 300 ms), once with one that
answers MP3, converted by ffmpeg.

Run with `make bench`, or `python -m tests.bench.voice`.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from pathlib import Path

from bot.session.voice import speakable
from tests.bench.processes import settle_collector, start_workers, stop
from tests.bench.table import Figure, percentile, report, samples
from tests.bench.telegram import serve, web_settings, worker_env
from tests.fakes.llm import OPENAI_KEY, FakeLLM, Reply
from tests.fakes.llm.speech import milliseconds
from tests.fakes.tg import FakeTelegram, TgUser
from tests.support.redis_server import RedisServer

ANSWER = (
    "The meeting is **tomorrow at ten**, in the small room. Bring the budget sheet; "
    "Ana will present the numbers first."
)
SAMPLES = samples(30, 3)
FIGURES = (
    "voice reply after its text, endpoint answering Opus: median",
    "voice reply after its text, endpoint answering Opus: p95",
    "voice reply after its text, endpoint answering MP3 (ffmpeg): median",
)


async def after_text(telegram: FakeTelegram, llm: FakeLLM, person: TgUser) -> float:
    """Milliseconds from the reply's text landing to its voice note's upload arriving."""
    chat = telegram.private_chat(person)
    before = len(telegram.calls)
    llm.enqueue(Reply(text=ANSWER, chunk_size=40))
    telegram.send(chat, person, "when is the meeting?")
    await telegram.wait_for(lambda: bool(telegram.uploads(chat)), within=120, what="a voice note")
    made = [c for c in telegram.calls[before:] if c.ok]
    text = max(c.at for c in made if c.method == "sendMessage")
    voice = next(c.at for c in made if c.method == "sendVoice")
    return (voice - text) * 1000


async def series(telegram: FakeTelegram, llm: FakeLLM, first_user: int) -> list[float]:
    await after_text(telegram, llm, TgUser(id=first_user - 1, first_name="Warm"))
    people = (TgUser(id=first_user + n, first_name=f"P{n}") for n in range(SAMPLES))
    return [await after_text(telegram, llm, person) for person in people]


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        async with FakeLLM() as llm, FakeTelegram() as telegram:
            length = milliseconds(speakable(ANSWER, 1500))
            await llm.speech.prepare(("opus", "mp3"), (length,))  # the endpoint answers at once
            env = worker_env(server.url, tmp, llm, telegram) | {
                "PARLEY_SPEECH_MODEL": "gpt-4o-mini-tts",
                "PARLEY_SPEECH_BASE_URL": llm.openai_base_url,
                "PARLEY_SPEECH_API_KEY": OPENAI_KEY,
                "PARLEY_VOICE_REPLIES": "on",
            }
            runner = await serve(web_settings(env, tmp, telegram))
            workers, _ = await start_workers(1, env, server.url)
            try:
                settle_collector()
                opus = await series(telegram, llm, 10_000)
                llm.speech.answer_format = "mp3"
                mp3 = await series(telegram, llm, 20_000)
            finally:
                await stop(workers)
                await runner.cleanup()
                server.stop()
    median, p95, converted = statistics.median(opus), percentile(opus, 0.95), statistics.median(mp3)
    print(
        f"voice note after its text: Opus {median:.0f} ms median, {p95:.0f} ms p95; "
        f"MP3 converted {converted:.0f} ms median ({SAMPLES} samples each)"
    )
    report(
        Figure(FIGURES[0], median, "ms", 300),
        Figure(FIGURES[1], p95, "ms"),
        Figure(FIGURES[2], converted, "ms", 300),
    )


if __name__ == "__main__":
    asyncio.run(main())
