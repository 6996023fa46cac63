"""A fake of the Anthropic and OpenAI HTTP APIs for tests; see `server.FakeLLM`."""

from tests.fakes.llm.script import (
    ANTHROPIC_KEY,
    OPENAI_KEY,
    Fail,
    RecordedRequest,
    Reply,
    Scripted,
    ToolCallSpec,
)
from tests.fakes.llm.server import FakeLLM

__all__ = [
    "ANTHROPIC_KEY",
    "OPENAI_KEY",
    "Fail",
    "FakeLLM",
    "RecordedRequest",
    "Reply",
    "Scripted",
    "ToolCallSpec",
]
