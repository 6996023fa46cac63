"""Serve the fake model APIs on their own: `python -m tests.fakes.llm [--port N]`.

It answers with a simple demo brain (arithmetic in a message becomes a calculator call, tool
results are reported back, `N words [at R tokens/s]` is answered with that many words at that
pace (see `words`), anything else is echoed), so `parley chat` and the benchmarks can
run against it without a real model:

    ANTHROPIC_BASE_URL=http://127.0.0.1:N ANTHROPIC_API_KEY=test-anthropic-key parley chat
"""

from __future__ import annotations

import argparse
import asyncio
import re

from tests.fakes.llm.script import RecordedRequest, Reply, ToolCallSpec
from tests.fakes.llm.server import FakeLLM
from tests.fakes.llm.words import words_reply

ARITHMETIC = re.compile(r"\d[\d\s.]*[-+*/^][\d\s.+\-*/^()]*\d")


def demo_brain(request: RecordedRequest) -> Reply:
    results = request.tool_results()
    if results:
        said = "; ".join(content for _, content in results)
        return Reply(text=f"The tool says: {said}.")
    # Parley stamps each user message with its time in brackets; the words come after it.
    text = request.last_user_text().split("]", 1)[-1].strip()
    if text.startswith("slowly"):  # a long turn, for load tests: about 10 s of streaming
        return Reply(text="word " * 200, chunk_size=5, delay=0.05)
    if (asked := words_reply(text)) is not None:
        return asked
    found = ARITHMETIC.search(text)
    if found:
        expression = found.group(0).strip()
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": expression})])
    return Reply(text=f"You said: {text}. " + "This is the demo model talking. " * 4)


async def serve(port: int) -> None:
    fake = FakeLLM()
    fake.responder = demo_brain
    await fake.start(port=port)
    print(fake.base_url, flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
