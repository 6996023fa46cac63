"""Serve the fake model APIs on their own: `python -m tests.fakes.llm [--port N]`.

`make fake-llm` runs it on port 9999, in the project's virtualenv. It answers with a simple
demo brain (arithmetic in a message becomes a calculator call, tool results are reported back,
`N words [at R tokens/s]` is answered with that many words at that pace (see `words`),
anything else is echoed), so `parley chat` and the benchmarks can run against it without a
real model. On start it says where it listens and prints the lines that point Parley at it,
to put in `.env`: the base URLs and the one key each API takes (like the real ones, it
refuses any other with a 401):

    ANTHROPIC_BASE_URL=http://127.0.0.1:N
    ANTHROPIC_API_KEY=test-anthropic-key
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re

from tests.fakes.llm.script import ANTHROPIC_KEY, OPENAI_KEY, RecordedRequest, Reply, ToolCallSpec
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


def settings_for(fake: FakeLLM) -> str:
    """What to tell the person who started it: where it listens, and the `.env` lines that
    point Parley at it, for either API."""
    return (
        f"The fake model APIs listen at {fake.base_url} (Ctrl-C stops them).\n"
        "To talk to them, put in .env:\n"
        f"ANTHROPIC_BASE_URL={fake.anthropic_base_url}\n"
        f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}\n"
        "or, for an OpenAI model (with PARLEY_MODEL=gpt-4o):\n"
        f"OPENAI_BASE_URL={fake.openai_base_url}\n"
        f"OPENAI_API_KEY={OPENAI_KEY}\n"
        "Any other key is refused, as the real APIs refuse a wrong one."
    )


async def serve(port: int) -> None:
    fake = FakeLLM()
    fake.responder = demo_brain
    await fake.start(port=port)
    print(settings_for(fake), flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it is stopped
        asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
