"""Several keys for one model API: what a rate-limited key adds to a call the next key answers.

The fake Anthropic API in this process, the real SDK through Parley's provider over two keys
(`bot.llm.keyring`). Each sample is one streamed model call; in one series the first key is
answered 429 every time (with a `retry-after` of a millisecond, so it is tried again at the
next sample) and the second key answers; in the other both keys are good and the first
answers. The figure is the difference of the medians: the one refused request, and no wait
(target: under 20 ms, a local round trip and its bookkeeping; the retry policy's backoff,
which a single key would have waited, is a second).

Run with `make bench`, or `python -m tests.bench.keys`.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bot.config.settings import Settings
from bot.llm.base import ModelRequest, Provider, SystemPart
from bot.llm.registry import build_provider, resolve_model
from bot.vocabulary.messages import Message, TextBlock
from tests.bench.table import Figure, report, samples
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM, Reply

SECOND = "sk-ant-second-key-0002"
LIMITED = "sk-ant-limited-key-0001"
SAMPLES = samples(200, 10)
FIGURES = (
    "a 429 on one key, the next key answering: added time, median",
    "model call on a good first key: median",
)
REQUEST = ModelRequest(
    model="claude-bench",
    system=[SystemPart("Be brief.")],
    messages=[Message(role="user", content=[TextBlock(text="hello")])],
)


async def timed(provider: Provider) -> float:
    """Milliseconds for one streamed call, to its end."""
    started = time.perf_counter()
    async for _ in provider.stream(REQUEST):
        pass
    return (time.perf_counter() - started) * 1000


def ring(fake: FakeLLM, keys: str, folder: str) -> Provider:
    settings = Settings(
        _env_file=None, anthropic_api_key=keys, anthropic_base_url=fake.anthropic_base_url,
        files_dir=Path(folder),
    )  # fmt: skip
    return build_provider(settings, resolve_model("claude-bench"))


async def interleaved(good: Provider, limited: Provider) -> tuple[list[float], list[float]]:
    """Both series, a call of each in turn, so the machine's load weighs on both alike."""
    await timed(good)  # warm: connections made, the SDK's first request
    await timed(limited)
    pairs = [(await timed(good), await timed(limited)) for _ in range(SAMPLES)]
    return [g for g, _ in pairs], [lim for _, lim in pairs]


async def main() -> None:
    async with FakeLLM() as fake:
        fake.responder = lambda _: Reply(text="Hi.")
        fake.keys["anthropic"] |= {SECOND}
        fake.limited[LIMITED] = 0.001
        with tempfile.TemporaryDirectory() as folder:
            rings = ring(fake, f"{ANTHROPIC_KEY},{SECOND}", folder)
            rings_limited = ring(fake, f"{LIMITED},{SECOND}", folder)
            try:
                good, limited = await interleaved(rings, rings_limited)
            finally:
                await rings.aclose()
                await rings_limited.aclose()
    refused = fake.keys_used.count(LIMITED)
    added = statistics.median(limited) - statistics.median(good)
    print(
        f"a good first key: {statistics.median(good):.1f} ms median; the first key limited "
        f"({refused} refusals), the second answering: {statistics.median(limited):.1f} ms; "
        f"added {added:.1f} ms"
    )
    report(Figure(FIGURES[0], added, "ms", 20), Figure(FIGURES[1], statistics.median(good), "ms"))


if __name__ == "__main__":
    asyncio.run(main())
